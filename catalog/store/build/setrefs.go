package build

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/catalogd/catalogd/catalog"
	"github.com/catalogd/catalogd/catalog/store/internal/layout"
	bolterrors "go.etcd.io/bbolt/errors"
)

// A card may come before its set: a snapshot's members come in any order,
// and a set may be in a later file. Such a card's reference to its set can
// only be checked once every set is known. The Writer keeps these
// references in a bucket of the file it writes rather than in memory: a
// snapshot whose cards come first names as many sets as it has, and a
// hostile one a new set on every card.

// bucketSetRefs holds the references deferred by DeferSetCheck until
// CheckSetRefs, and is gone from the file before Finish ends. Key: the
// zone byte, the set code uvarint-length-prefixed, then the SHA-256 of the
// set name the cards give (a name may be longer than bbolt takes a key).
// Value: uvarint order of the first card, uvarint number of further cards,
// the set name uvarint-length-prefixed, then the first card's note.
var bucketSetRefs = []byte("setRefs")

// deferredRef is the reference DeferSetCheck saw last, and how many more
// cards named it since: cards come by set, so most calls only count.
type deferredRef struct {
	named []byte // zone, code and set name, as the key of bucketSetRefs before its hash
	key   []byte // its key in bucketSetRefs
	more  uint64
}

// DeferSetCheck remembers that a card names the set (zone, code) by the name
// setName before any set of that code is known. note is called for the
// first card of each such reference, to append what CheckSetRefs returns of
// it.
func (w *Writer) DeferSetCheck(zone, code, setName string, note func(dst []byte) []byte) error {
	// A buffer of its own: a commit, which flushLastRef may make, uses w.key.
	w.refNamed = layout.AppendSetPrefix(w.refNamed[:0], layout.ZoneByte(zone), code)
	prefix := len(w.refNamed)
	w.refNamed = append(w.refNamed, setName...)
	if w.lastRef.named != nil && bytes.Equal(w.refNamed, w.lastRef.named) {
		w.lastRef.more++
		return nil
	}
	if err := w.flushLastRef(); err != nil {
		return err
	}
	w.lastRef.named = append(w.lastRef.named[:0], w.refNamed...)
	sum := sha256.Sum256(w.refNamed[prefix:])
	w.lastRef.key = append(append(w.lastRef.key[:0], w.refNamed[:prefix]...), sum[:]...)
	refs, err := w.tx.CreateBucketIfNotExists(bucketSetRefs)
	if err != nil {
		return fmt.Errorf("write catalogue %s: bucket %s: %w", w.path, bucketSetRefs, err)
	}
	if refs.Get(w.lastRef.key) != nil {
		w.lastRef.more = 1
		return nil
	}
	v := binary.AppendUvarint(w.buf[:0], w.deferredRefs)
	v = binary.AppendUvarint(v, 0)
	v = binary.AppendUvarint(v, uint64(len(setName)))
	v = append(v, setName...)
	v = note(v)
	w.buf = v
	w.deferredRefs++
	if err := w.put(refs, w.lastRef.key, v); err != nil {
		return err
	}
	return w.maybeCommit()
}

// flushLastRef adds the cards counted for the last reference to its entry.
func (w *Writer) flushLastRef() error {
	if w.lastRef.more == 0 {
		return nil
	}
	refs := w.tx.Bucket(bucketSetRefs)
	old := refs.Get(w.lastRef.key)
	first, more, rest, err := decodeSetRef(old)
	if err != nil {
		return fmt.Errorf("write catalogue %s: %w", w.path, err)
	}
	v := binary.AppendUvarint(w.buf[:0], first)
	v = binary.AppendUvarint(v, more+w.lastRef.more)
	v = append(v, rest...) // the name and the note, as they were
	w.buf = v
	w.lastRef.more = 0
	if err := w.put(refs, w.lastRef.key, v); err != nil {
		return err
	}
	return w.maybeCommit()
}

// decodeSetRef splits the value of a deferred reference: the order of its
// first card, the number of further cards, and the rest, the set name and
// the note.
func decodeSetRef(v []byte) (first, more uint64, rest []byte, err error) {
	first, n := binary.Uvarint(v)
	if n <= 0 {
		return 0, 0, nil, errors.New("a deferred set reference is damaged")
	}
	more, m := binary.Uvarint(v[n:])
	if m <= 0 {
		return 0, 0, nil, errors.New("a deferred set reference is damaged")
	}
	return first, more, v[n+m:], nil
}

// SetRefProblem is a reference deferred by DeferSetCheck that no set
// matches once every set is known.
type SetRefProblem struct {
	Zone, Code, SetName string // as the cards give them
	// KnownName is the name of the set of that zone and code, when there
	// is one: the cards then name it by another name.
	KnownName string
	Known     bool
	First     uint64 // the order of its first card among the deferred references
	More      uint64 // further cards with the same reference
	Note      []byte // the first card's note; valid during the call only
}

// CheckSetRefs calls fn with each deferred reference that no set matches,
// in no particular order (First gives the order of their cards), and then
// forgets them all. It is
// called once every set is added, before Finish; Finish forgets them too.
func (w *Writer) CheckSetRefs(fn func(*SetRefProblem) error) error {
	if err := w.flushLastRef(); err != nil {
		return err
	}
	w.lastRef = deferredRef{}
	refs := w.tx.Bucket(bucketSetRefs)
	if refs == nil {
		return nil
	}
	c := refs.Cursor()
	var p SetRefProblem
	for k, v := c.First(); k != nil; k, v = c.Next() {
		code, _, ok := layout.LengthPrefixed(k[1:])
		if !ok || int(k[0]) >= len(catalog.Zones()) {
			return fmt.Errorf("write catalogue %s: a deferred set reference is damaged", w.path)
		}
		first, more, rest, err := decodeSetRef(v)
		var name, note []byte
		if err == nil {
			if name, note, ok = layout.LengthPrefixed(rest); !ok {
				err = errors.New("a deferred set reference is damaged")
			}
		}
		if err != nil {
			return fmt.Errorf("write catalogue %s: %w", w.path, err)
		}
		p = SetRefProblem{Zone: catalog.Zones()[k[0]], Code: string(code), SetName: string(name), First: first, More: more, Note: note}
		p.KnownName, p.Known = w.SetName(p.Zone, p.Code)
		if p.Known && p.KnownName == p.SetName {
			continue
		}
		if err := fn(&p); err != nil {
			return err
		}
	}
	return w.dropSetRefs()
}

// dropSetRefs deletes the deferred references. Their pages are free for
// the writes that follow; what those do not reuse stays free space in the
// file.
func (w *Writer) dropSetRefs() error {
	w.lastRef = deferredRef{}
	err := w.tx.DeleteBucket(bucketSetRefs)
	if err != nil && !errors.Is(err, bolterrors.ErrBucketNotFound) {
		return fmt.Errorf("write catalogue %s: %w", w.path, err)
	}
	return nil
}
