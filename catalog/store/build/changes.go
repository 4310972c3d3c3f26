package build

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/catalogd/catalogd/catalog/store/internal/layout"
	bolt "go.etcd.io/bbolt"
)

// Info is what a catalogue file says of itself (store.Info, the same
// type): Finish writes it, and Follow reads the previous file's.
type Info = layout.Info

// Previous is the catalogue a new one replaces, as Follow reads it: a
// *store.DB open for reading.
type Previous interface {
	Info() Info
	Path() string
	View(fn func(tx layout.ReadTx) error) error
}

// Follow makes the catalogue being written the next generation of prev,
// which stays open until Finish returns: Finish compares the two, record by
// record, and the new file holds the changes of the last keep imports, this
// one included. keep 0 keeps none, and compares nothing. prev is not
// nil: an import that replaces no catalogue does not call Follow.
func (w *Writer) Follow(prev Previous, keep int) {
	w.prev, w.keep = prev, keep
}

// writeChanges writes the kept steps of prev's history and the step from
// prev to this catalogue, and sets info.History. It runs in Finish, once
// every card and set is in the open transaction: the comparison walks both
// files' cards by id, and what it finds goes through a sorter, which holds
// a bounded buffer and spills to disk, before it is put (putting commits
// now and then, which would end the walk's cursors).
func (w *Writer) writeChanges(info *Info) error {
	info.History = nil
	if w.prev == nil || w.keep <= 0 {
		return nil
	}
	prev := w.prev.Info()
	kept := prev.History[max(0, len(prev.History)-(w.keep-1)):]
	step := uint32(1)
	if n := len(prev.History); n > 0 {
		step = prev.History[n-1].Step + 1
	}
	diff := newSorter(filepath.Dir(w.path), sortMemory)
	defer diff.close()
	var key [4]byte
	binary.BigEndian.PutUint32(key[:], step)
	var count int64
	add := func(kind byte, id []byte, before, after byte) error {
		count++
		k := append(append(append(w.key[:0], key[:]...), kind), id...)
		w.key = k
		return diff.add(k, []byte{before, after})
	}
	err := fromPrevious(func() error {
		if err := w.diffSets(add); err != nil {
			return err
		}
		if err := w.diffCards(add); err != nil {
			return err
		}
		return w.diffNames(add)
	})
	if errors.Is(err, errDamagedPrevious) {
		// A new history, as for a previous file that does not open.
		w.unfollowed = err
		return nil
	} else if err != nil {
		return err
	}
	// The kept steps of prev, then this one: keys in order.
	if err := fromPrevious(func() error { return w.copyHistory(kept) }); errors.Is(err, errDamagedPrevious) {
		// What was put of it goes with its bucket: a new history.
		if err := w.tx.DeleteBucket(layout.BucketChanges); err != nil {
			return fmt.Errorf("write catalogue %s: drop a damaged history: %w", w.path, err)
		}
		if _, err := w.tx.CreateBucket(layout.BucketChanges); err != nil {
			return fmt.Errorf("write catalogue %s: drop a damaged history: %w", w.path, err)
		}
		w.unfollowed = err
		return nil
	} else if err != nil {
		return err
	}
	err = diff.each(func(k, v []byte) error { return w.putOrdered(layout.BucketChanges, k, v) })
	if err != nil {
		return fmt.Errorf("write catalogue %s: changes: %w", w.path, err)
	}
	info.History = append(slices.Clone(kept), layout.HistoryStep{Step: step, From: prev.Generation, To: info.Generation, Changes: count})
	return nil
}

// errDamagedPrevious is the error of a previous catalogue that opened, and
// whose pages turned out damaged as they were compared.
var errDamagedPrevious = errors.New("the catalogue replaced is damaged")

// fromPrevious runs fn, which reads the previous file. bbolt panics on a
// damaged page of it: the panic is fn's error, and the import goes on
// without a history rather than fail, or die, on a file it is replacing.
// Only that file's pages can be met damaged here: the new file's were
// written by this import.
func fromPrevious(fn func() error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("%w: %v", errDamagedPrevious, v)
		}
	}()
	if err = fn(); errors.Is(err, layout.ErrDamaged) {
		// The reads of the file met the damage first (store.DB.View
		// turns bbolt's panic into an ErrDamaged).
		err = fmt.Errorf("%w: %v", errDamagedPrevious, err)
	}
	return err
}

// copyHistory puts the changes of the previous file's kept steps, in the
// order of their keys.
func (w *Writer) copyHistory(kept []layout.HistoryStep) error {
	if len(kept) == 0 {
		return nil
	}
	err := w.prev.View(func(tx layout.ReadTx) error {
		b := tx.Bucket(layout.BucketChanges)
		if b == nil {
			return errors.New("the history lists steps the file does not hold")
		}
		var first [4]byte
		binary.BigEndian.PutUint32(first[:], kept[0].Step)
		c := b.Cursor()
		for k, v := c.Seek(first[:]); k != nil; k, v = c.Next() {
			if err := w.putOrdered(layout.BucketChanges, k, v); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("write catalogue %s: copy the history of %s: %w", w.path, w.prev.Path(), err)
	}
	return nil
}

// Unfollowed returns why Finish did not compare the catalogue with the one
// given to Follow, which it found damaged: the new file then starts a
// history of its own. It is nil otherwise.
func (w *Writer) Unfollowed() error { return w.unfollowed }

// diffSets walks the sets of both files at once, by id, and compares the
// JSON of each set in both.
func (w *Writer) diffSets(add func(kind byte, id []byte, before, after byte) error) error {
	newSets := w.tx.Bucket(layout.BucketSets).Cursor()
	return w.prev.View(func(tx layout.ReadTx) error {
		err := walkBoth(tx.Bucket(layout.BucketSets).Cursor(), newSets, nil, func(id, ov, nv []byte) error {
			before, after := layout.ZoneNone, layout.ZoneNone
			var old, cur layout.StoredSet
			var err error
			if ov != nil {
				if old, err = layout.ReadStoredSet(ov); err != nil {
					return err
				}
				before = old.Zone()
			}
			if nv != nil {
				if cur, err = layout.ReadStoredSet(nv); err != nil {
					return err
				}
				after = cur.Zone()
			}
			if ov != nil && nv != nil && bytes.Equal(old.JSON, cur.JSON) {
				return nil
			}
			return add(layout.ChangeSet, id, before, after)
		})
		if err != nil {
			return fmt.Errorf("write catalogue %s: changes: %w", w.path, err)
		}
		return nil
	})
}

// diffCards walks the id index of both files' cards at once, and compares
// the JSON of each card in both.
func (w *Writer) diffCards(add func(kind byte, id []byte, before, after byte) error) error {
	cards := w.tx.Bucket(layout.BucketCards)
	newIDs, newCards := cards.Cursor(), cards.Cursor()
	return w.prev.View(func(tx layout.ReadTx) error {
		old := tx.Bucket(layout.BucketCards)
		oldIDs, oldCards := old.Cursor(), old.Cursor()
		var key []byte
		// The id keys (KeyCardID + id, to the locator) are the last of
		// the bucket.
		err := walkBoth(oldIDs, newIDs, []byte{layout.KeyCardID}, func(k, ov, nv []byte) error {
			id := k[1:]
			switch {
			case nv == nil: // only in prev: removed
				return add(layout.ChangeCard, id, ov[0], layout.ZoneNone)
			case ov == nil: // only in the new one: added
				return add(layout.ChangeCard, id, layout.ZoneNone, nv[0])
			}
			key = layout.AppendLocatedCardKey(key[:0], ov, string(id))
			_, a := oldCards.Seek(key)
			key = layout.AppendLocatedCardKey(key[:0], nv, string(id))
			_, b := newCards.Seek(key)
			if bytes.Equal(a, b) {
				return nil
			}
			return add(layout.ChangeCard, id, ov[0], nv[0])
		})
		if err != nil {
			return fmt.Errorf("write catalogue %s: changes: %w", w.path, err)
		}
		return nil
	})
}

// walkBoth walks the keys of two cursors in order from start (nil: the
// first) to the end, at once, and calls fn with each key and its value in
// the old and in the new walk; a value is nil where the key is only in the
// other. Values must not be empty.
func walkBoth(old, cur *bolt.Cursor, start []byte, fn func(k, ov, nv []byte) error) error {
	first := func(c *bolt.Cursor) ([]byte, []byte) {
		if start == nil {
			return c.First()
		}
		return c.Seek(start)
	}
	ok, ov := first(old)
	nk, nv := first(cur)
	for ok != nil || nk != nil {
		c := 0
		switch {
		case ok == nil:
			c = 1
		case nk == nil:
			c = -1
		default:
			c = bytes.Compare(ok, nk)
		}
		var err error
		switch {
		case c < 0:
			err = fn(ok, ov, nil)
			ok, ov = old.Next()
		case c > 0:
			err = fn(nk, nil, nv)
			nk, nv = cur.Next()
		default:
			err = fn(nk, ov, nv)
			ok, ov = old.Next()
			nk, nv = cur.Next()
		}
		if err != nil {
			return err
		}
	}
	return nil
}
