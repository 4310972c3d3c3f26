package catalog

import (
	"bytes"
	"encoding/binary"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// A page of a set is a run of the set's keys in the cards bucket, and bbolt
// cannot count keys: reaching the page's first card from the set's first
// would step over every card before it, a cost that grows with the set (a
// page deep into a set of 216,000 cards took 3 ms, docs/BENCHMARKS.md,
// "Pages deep into a large set"). So the import marks every
// pageMarkEvery-th card of each set:
//
//	pageMarks  set prefix + 8-byte big-endian position n, a multiple of
//	           pageMarkEvery from pageMarkEvery on -> the key in the cards
//	           bucket of the set's card at position n (counting from 0)
//
// and a page seeks the mark at or before its first card, then steps fewer
// than pageMarkEvery cards. The bucket is optional: a file written before
// it stepped from the set's first card, as its reader still does, so the
// format did not change.
var bucketPageMarks = []byte("pageMarks")

// pageMarkEvery is the number of cards between two marks of a set: a page
// steps over fewer than this many, some 30 ns each, after the seek of its
// mark; ten million cards take 156,000 marks.
const pageMarkEvery = 64

// appendPageMarkKey appends the key of the mark of the card at position n
// of the set with prefix.
func appendPageMarkKey(dst, prefix []byte, n uint64) []byte {
	return binary.BigEndian.AppendUint64(append(dst, prefix...), n)
}

// setPrefixLen returns the length of the set prefix a card key starts with.
func setPrefixLen(key []byte) (int, bool) {
	if len(key) < 1 {
		return 0, false
	}
	_, rest, ok := lengthPrefixed(key[1:])
	return len(key) - len(rest), ok
}

// writePageMarks marks every pageMarkEvery-th card of each set, from the
// keys of every card in the order of the cards bucket. The keys come from a
// sort of their own, not from a walk of the bucket: a walk would read every
// card back through the mapped file, and at ten million cards map
// gigabytes of it into the import.
func (w *Writer) writePageMarks() error {
	var prefix, key []byte
	var n uint64
	return w.cardKeys.each(func(card, _ []byte) error {
		setLen, ok := setPrefixLen(card)
		if !ok {
			return fmt.Errorf("write catalogue %s: page marks: malformed card key %q", w.path, card)
		}
		if !bytes.Equal(card[:setLen], prefix) {
			prefix, n = append(prefix[:0], card[:setLen]...), 0
		}
		if n > 0 && n%pageMarkEvery == 0 {
			key = appendPageMarkKey(key[:0], prefix, n)
			if err := w.putOrdered(bucketPageMarks, key, card); err != nil {
				return err
			}
		}
		n++
		return nil
	})
}

// seekPage moves the cards cursor to the card at position offset of the set
// with prefix, which has more than offset cards, and returns its key and
// value. From a mark, it steps without checking the keys it passes: they
// are the set's (see SetCards).
func (r *reader) seekPage(prefix []byte, offset int64) (k, v []byte, err error) {
	c := r.cardCursor
	steps := offset
	if r.markCursor == nil || offset < pageMarkEvery {
		k, v = c.Seek(prefix)
	} else {
		steps = offset % pageMarkEvery
		var buf [64]byte
		key := appendPageMarkKey(buf[:0], prefix, uint64(offset-steps))
		mk, card := r.markCursor.Seek(key)
		if !bytes.Equal(mk, key) {
			return nil, nil, fmt.Errorf("mark of card %d of the set is missing", offset-steps)
		}
		if k, v = c.Seek(card); !bytes.Equal(k, card) || !bytes.HasPrefix(k, prefix) {
			return nil, nil, fmt.Errorf("card %q of the mark of card %d is missing", card, offset-steps)
		}
	}
	for ; k != nil && steps > 0; steps-- {
		k, v = c.Next()
	}
	return k, v, nil
}

// markCursor returns a cursor of the page marks of tx, nil in a file
// written before them.
func markCursor(tx *bolt.Tx) *bolt.Cursor {
	if b := tx.Bucket(bucketPageMarks); b != nil {
		return b.Cursor()
	}
	return nil
}
