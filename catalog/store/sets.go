package store

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/catalogd/catalogd/catalog"
	"github.com/catalogd/catalogd/catalog/store/internal/layout"
	bolt "go.etcd.io/bbolt"
)

// Sets live in the file like cards, so that opening a catalogue reads
// nothing that grows with it, and neither does an import hold them (see
// internal/layout/layout.go):
//
//	sets       set id -> 8-byte card total, the set prefix, the set's JSON
//	setCodes   uvarint-length-prefixed code + zone byte -> set id: the
//	           zones of one code in resolution order
//	setOrder   the set's place in the list of sets (layout.AppendSetListKey) ->
//	           set id: every set in list order
//	setLists   list byte (0 every zone, 1 + catalog.ZoneIndex one zone) + 4-byte
//	           big-endian piece number -> a piece of the JSON array of the
//	           list's sets in list order; the pieces concatenated are the
//	           array

// setByID returns the set with id, ok false when there is none.
func setByID(c *bolt.Cursor, id string) (layout.StoredSet, bool, error) {
	k, v := c.Seek([]byte(id))
	if k == nil || string(k) != id {
		return layout.StoredSet{}, false, nil
	}
	s, err := layout.ReadStoredSet(v)
	if err != nil {
		return layout.StoredSet{}, false, damagef("set %q: %v", id, err)
	}
	return s, true, nil
}

// setsWithCode calls fn with each set whose code is code, in resolution
// order, until fn returns false.
func setsWithCode(codes, sets *bolt.Cursor, code string, fn func(layout.StoredSet) bool) error {
	prefix := binary.AppendUvarint(nil, uint64(len(code)))
	prefix = append(prefix, code...)
	for k, id := codes.Seek(prefix); len(k) == len(prefix)+1 && bytes.HasPrefix(k, prefix); k, id = codes.Next() {
		s, ok, err := setByID(sets, string(id))
		if err != nil {
			return err
		}
		if !ok {
			return damagef("set %q of code %q is missing", id, code)
		}
		if !fn(s) {
			break
		}
	}
	return nil
}

// resolveSet resolves ref the way /catalog/sets/{code}/cards does: an
// exact set id first, then an exact code, in zone order.
func (r *reader) resolveSet(ref string) (layout.StoredSet, bool, error) {
	if s, ok, err := setByID(r.setCursor, ref); ok || err != nil {
		return s, ok, err
	}
	var found layout.StoredSet
	ok := false
	err := setsWithCode(r.codeCursor, r.setCursor, ref, func(s layout.StoredSet) bool {
		found, ok = s, true
		return false
	})
	return found, ok, err
}

// setsMatching returns the sets a search filter names, limited to zone (a
// catalog.ZoneIndex, or -1 for every zone): the set with id ref, else
// every set with code ref. A set id of another zone is no match, and the
// codes are looked up. No match is an empty result, not an error.
func (r *reader) setsMatching(ref string, zone int) ([]layout.StoredSet, error) {
	s, ok, err := setByID(r.setCursor, ref)
	switch {
	case err != nil:
		return nil, err
	case ok && (zone < 0 || int(s.Zone()) == zone):
		return []layout.StoredSet{s}, nil
	}
	var out []layout.StoredSet
	err = setsWithCode(r.codeCursor, r.setCursor, ref, func(s layout.StoredSet) bool {
		if zone < 0 || int(s.Zone()) == zone {
			out = append(out, s)
		}
		return true
	})
	return out, err
}

// eachSetInOrder calls fn with the id and the record of every set, in list
// order, until fn returns an error, which it returns.
func (r *reader) eachSetInOrder(fn func(id []byte, s layout.StoredSet) error) error {
	c := r.tx.Bucket(layout.BucketSetOrder).Cursor()
	for k, id := c.First(); k != nil; k, id = c.Next() {
		s, ok, err := setByID(r.setCursor, string(id))
		if err != nil {
			return err
		}
		if !ok {
			return damagef("set %q of the list of sets is missing", id)
		}
		if err := fn(id, s); err != nil {
			return err
		}
	}
	return nil
}

// SetList returns the JSON array of the sets of zone, or of every zone when
// zone is "", in list order, as pieces whose concatenation is the array.
// The pieces are the file's own bytes: valid while db is open, and not to
// be modified. An unknown zone has no sets.
func (db *DB) SetList(zone string) ([][]byte, error) {
	list := byte(0)
	if zone != "" {
		z := catalog.ZoneIndex(zone)
		if z < 0 {
			return [][]byte{[]byte("[]")}, nil
		}
		list = byte(z + 1)
	}
	var pieces [][]byte
	err := db.read(func(r *reader) error {
		c := r.tx.Bucket(layout.BucketSetLists).Cursor()
		for k, v := c.Seek([]byte{list}); len(k) == 5 && k[0] == list; k, v = c.Next() {
			pieces = append(pieces, v)
		}
		return nil
	})
	if err == nil && len(pieces) == 0 {
		err = damagef("the list of sets is missing")
	}
	if err != nil {
		return nil, fmt.Errorf("list sets: %w", err)
	}
	return pieces, nil
}

// SetsJSON returns a copy of the JSON array of SetList.
func (db *DB) SetsJSON(zone string) ([]byte, error) {
	pieces, err := db.SetList(zone)
	if err != nil {
		return nil, err
	}
	return bytes.Join(pieces, nil), nil
}
