package store

// The grams of folded names and terms: the runs of one, two and three
// neighbouring characters that the posting lists are kept for.
