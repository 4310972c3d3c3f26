// Package query is what the harnesses that build requests from a
// catalogue share: making of a card's name and number what a partner types
// to find it.
package query

import (
	"math/rand/v2"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Typical is what a partner types to find a card: the longest word of
// its name, in lower case ("Charizard ex" gives "charizard"; a Japanese or
// Chinese name, which has no spaces, is kept whole). It is "" for a name
// too short to search for.
func Typical(name string) string {
	best := ""
	for w := range strings.FieldsSeq(name) {
		if utf8.RuneCountInString(w) > utf8.RuneCountInString(best) {
			best = w
		}
	}
	if utf8.RuneCountInString(best) < 2 {
		// Search needs 2 characters ("N" is a card): the whole name, if long
		// enough, else nothing.
		best = strings.Join(strings.Fields(name), " ")
		if utf8.RuneCountInString(best) < 2 {
			return ""
		}
	}
	return strings.ToLower(best)
}

// Fragment is 2 to 6 consecutive characters of one word of name, or ""
// when the word chosen is shorter than 2.
func Fragment(name string, r *rand.Rand) string {
	words := strings.Fields(name)
	if len(words) == 0 {
		return ""
	}
	w := []rune(words[r.IntN(len(words))])
	if len(w) < 2 {
		return ""
	}
	n := 2 + r.IntN(min(len(w), 6)-1)
	i := r.IntN(len(w) - n + 1)
	f := string(w[i : i+n])
	if strings.TrimFunc(f, unicode.IsSpace) != f {
		return ""
	}
	return f
}

// LeadingNumber is the first run of digits of a printed number.
func LeadingNumber(s string) string {
	i := strings.IndexFunc(s, func(r rune) bool { return r >= '0' && r <= '9' })
	if i < 0 {
		return ""
	}
	j := i
	for j < len(s) && s[j] >= '0' && s[j] <= '9' {
		j++
	}
	return s[i:j]
}

// Card is what queries are made of: a card's name and printed number.
type Card struct{ Name, Number string }

// Distinct returns up to n distinct queries of the kinds a search box
// sends, made of the cards' names and numbers: the longest word of a name,
// 2 to 6 letters of one of its words (a name being typed), the whole name,
// or the longest word and the card's number. It gives up after 20 n draws,
// so a catalogue too small for n queries yields fewer.
func Distinct(cards []Card, n int, rng *rand.Rand) []string {
	seen := map[string]bool{}
	var out []string
	for draws := 0; len(out) < n && draws < 20*n && len(cards) > 0; draws++ {
		c := cards[rng.IntN(len(cards))]
		var q string
		switch rng.IntN(4) {
		case 0:
			q = Typical(c.Name)
		case 1:
			q = Fragment(c.Name, rng)
		case 2:
			q = strings.Join(strings.Fields(c.Name), " ")
		case 3:
			if num := LeadingNumber(c.Number); num != "" {
				q = Typical(c.Name) + " " + num
			}
		}
		q = strings.ToLower(strings.TrimSpace(q))
		if l := utf8.RuneCountInString(q); l < 2 || l > 200 || seen[q] {
			continue
		}
		seen[q] = true
		out = append(out, q)
	}
	return out
}

// Mistyped is q with its longest term mistyped as a person types: two
// neighbours swapped, a letter dropped, doubled or changed, once in a
// term of 5 to 8 characters, twice from 9, as many edits as a fuzzy
// search forgives (docs/CONTRACT.md, Typos). As a person's, two edits may
// fall on one letter, and a term may hold a digit: a few such queries are
// further than a fuzzy search forgives. Shorter terms are left as typed.
func Mistyped(q string, rng *rand.Rand) string {
	terms := strings.Fields(q)
	if len(terms) == 0 {
		return q
	}
	longest := 0
	for j, t := range terms {
		if utf8.RuneCountInString(t) > utf8.RuneCountInString(terms[longest]) {
			longest = j
		}
	}
	t := []rune(terms[longest])
	edits := 0
	switch {
	case len(t) >= 9:
		edits = 2
	case len(t) >= 5:
		edits = 1
	}
	for range edits {
		k := rng.IntN(len(t) - 1)
		switch rng.IntN(4) {
		case 0:
			t[k], t[k+1] = t[k+1], t[k]
		case 1:
			t = append(t[:k:k], t[k+1:]...)
		case 2:
			t = append(t[:k+1:k+1], t[k:]...)
		default:
			t[k] = 'a' + rune(rng.IntN(26))
		}
	}
	terms[longest] = string(t)
	return strings.Join(terms, " ")
}
