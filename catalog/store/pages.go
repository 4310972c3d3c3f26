package store

import (
	"bytes"
	"encoding/binary"

	"github.com/catalogd/catalogd/catalog/store/internal/layout"
	bolt "go.etcd.io/bbolt"
)

// seekPage moves the cards cursor to the card at position offset of the set
// with prefix, which has more than offset cards, and returns its key and
// value. It starts from the set's last mark at or before offset, whatever
// the interval of the marks, or from the set's first card; from there it
// steps without checking the keys it passes: they are the set's (see
// SetCards). A mark a damaged file lost costs steps, not a wrong page.
func (r *reader) seekPage(prefix []byte, offset int64) (k, v []byte, err error) {
	c := r.cardCursor
	from := int64(0)
	// Fewer steps than this cost less than the seek of a mark.
	if r.markCursor == nil || offset < layout.PageMarkEvery {
		k, v = c.Seek(prefix)
	} else if k, v, from, err = r.seekMark(prefix, offset); err != nil {
		return nil, nil, err
	}
	for steps := offset - from; k != nil && steps > 0; steps-- {
		k, v = c.Next()
	}
	return k, v, nil
}

// seekMark moves the cards cursor to the card of the set's last mark at or
// before offset, or to the set's first card when there is none, and returns
// that card's key, value and position in the set. It fails when the mark
// names a card that is not one of the set's.
func (r *reader) seekMark(prefix []byte, offset int64) (k, v []byte, at int64, err error) {
	var buf [64]byte
	key := layout.AppendPageMarkKey(buf[:0], prefix, uint64(offset))
	mk, card := r.markCursor.Seek(key)
	if !bytes.Equal(mk, key) {
		mk, card = r.markCursor.Prev()
	}
	// A set prefix delimits itself: a key of its length and prefix is a
	// mark of this set, at a position at or before offset, as the key
	// orders positions.
	if len(mk) != len(prefix)+8 || !bytes.HasPrefix(mk, prefix) {
		k, v = r.cardCursor.Seek(prefix)
		return k, v, 0, nil
	}
	at = int64(binary.BigEndian.Uint64(mk[len(prefix):]))
	if k, v = r.cardCursor.Seek(card); !bytes.Equal(k, card) || !bytes.HasPrefix(k, prefix) {
		return nil, nil, 0, damagef("page mark at position %d of the set names %q, which is not one of its cards", at, card)
	}
	return k, v, at, nil
}

// pageMarkCursor returns a cursor of the page marks of tx, nil in a file
// without them.
func pageMarkCursor(tx *bolt.Tx) *bolt.Cursor {
	if b := tx.Bucket(layout.BucketPageMarks); b != nil {
		return b.Cursor()
	}
	return nil
}
