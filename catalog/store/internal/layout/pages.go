package layout

import "encoding/binary"

// A page of a set is a run of the set's keys in the cards bucket, and bbolt
// cannot count keys: reaching the page's first card from the set's first
// would step over every card before it, a cost that grows with the set
// (about 4 ms a page of a set of 216,000 cards, docs/BENCHMARKS.md, "Pages
// deep into a large set"). So the import marks every
// PageMarkEvery-th card of each set:
//
//	pageMarks  set prefix + 8-byte big-endian position n, a multiple of
//	           PageMarkEvery from PageMarkEvery on -> the key in the cards
//	           bucket of the set's card at position n (counting from 0)
//
// and a page seeks the mark at or before its first card, then steps fewer
// than PageMarkEvery cards. The marks are a shortcut, not a contract: the
// reader takes whichever mark is the last at or before the page, so the
// interval may change, and reads a file without the bucket by stepping
// from the set's first card. The bucket is therefore not part of
// FormatVersion: files with and without it open in every catalogd/4
// reader.

// BucketPageMarks holds the marks above.
var BucketPageMarks = []byte("pageMarks")

// PageMarkEvery is the number of cards between two marks of a set: a page
// steps over fewer than this many, some 35 ns each, after the seek of its
// mark; ten million cards take at most 156,000 marks.
const PageMarkEvery = 64

// AppendPageMarkKey appends the key of the mark of the card at position n
// of the set with prefix.
func AppendPageMarkKey(dst, prefix []byte, n uint64) []byte {
	return binary.BigEndian.AppendUint64(append(dst, prefix...), n)
}

// SetPrefixLen returns the length of the set prefix a card key starts with.
func SetPrefixLen(key []byte) (int, bool) {
	if len(key) < 1 {
		return 0, false
	}
	_, rest, ok := LengthPrefixed(key[1:])
	return len(key) - len(rest), ok
}
