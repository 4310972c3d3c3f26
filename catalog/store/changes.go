package store

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"path/filepath"
	"slices"

	"github.com/catalogd/catalogd/catalog"
	"github.com/catalogd/catalogd/catalog/store/internal/layout"
	bolt "go.etcd.io/bbolt"
)

// ErrOutsideHistory means a generation is neither the active one nor one
// the file holds the changes since.
var ErrOutsideHistory = errors.New("not in the history of the catalogue")

// ErrBadCursor means a changes cursor is not one this catalogue made.
var ErrBadCursor = errors.New("not a cursor of the list of changes")

// SyncGenerations returns the generations Changes answers for, oldest
// first: the one each kept step came from, then the active one.
func (db *DB) SyncGenerations() []string {
	var gens []string
	for _, s := range db.info.History {
		gens = append(gens, s.From)
	}
	return append(gens, db.info.Generation)
}

// sinceStep returns the index in History of the first step after
// generation gen, len(History) for the active generation.
func (db *DB) sinceStep(gen string) (int, bool) {
	if gen == db.info.Generation {
		return len(db.info.History), true
	}
	for i, s := range db.info.History {
		if s.From == gen {
			return i, true
		}
	}
	return 0, false
}

// ChangesQuery asks for one page of the changes since a generation.
type ChangesQuery struct {
	Since string
	Zone  string // "" for every zone
	After string // the cursor of the previous page, "" for the first
	Limit int
}

// Change is one entry of a list of changes: Record is the set's or card's
// JSON as served, nil for a removal. Valid only during the call it is
// passed to.
type Change struct {
	Kind   string // "set" or "card"
	ID     string
	Record []byte
}

// Changes calls fn with at most q.Limit changes from generation q.Since to
// the active one (sets, then cards, each by id; a record once, as it is
// now), after the cursor q.After, and returns the cursor of the next page,
// "" after the last.
//
// A cursor remembers the generation its list started at. When another
// catalogue has been swapped in since, the rest of the list is given as seen
// from that generation: a record that did not exist then is given only as
// removed, if it existed at q.Since, and otherwise not at all. The client
// is then to sync again from that generation (docs/CONTRACT.md, Changes),
// and is given everything else again, as it is then; a record added after
// the list started and removed before the next sync would otherwise stay.
func (db *DB) Changes(q ChangesQuery, fn func(Change) error) (string, error) {
	if q.Limit < 1 {
		return "", fmt.Errorf("changes since %q: limit %d: give 1 or more", q.Since, q.Limit)
	}
	from, ok := db.sinceStep(q.Since)
	if !ok {
		return "", fmt.Errorf("generation %q is %w", q.Since, ErrOutsideHistory)
	}
	pin, after := db.info.Generation, []byte(nil)
	if q.After != "" {
		var err error
		if pin, after, err = decodeCursor(q.After, q); err != nil {
			return "", err
		}
	}
	pinStep, ok := db.sinceStep(pin)
	if !ok {
		return "", fmt.Errorf("generation %q, where this list of changes started, is %w", pin, ErrOutsideHistory)
	}
	pinStep = max(pinStep, from)
	zone := layout.ZoneNone
	if q.Zone != "" {
		zone = layout.ZoneByte(q.Zone)
	}
	in := func(z byte) bool {
		return z != layout.ZoneNone && (zone == layout.ZoneNone || z == zone || z == layout.ZoneAll)
	}

	var next string
	err := db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(layout.BucketChanges)
		if b == nil || from == len(db.info.History) {
			return nil
		}
		w := newChangeWalk(b, db.info.History[from:], after)
		n := 0
		var last []byte
		var rec []byte
		for w.next() {
			before, now := in(w.before), in(w.after)
			if pinStep < len(db.info.History) && !in(w.beforeStep(pinStep-from)) {
				now = false // absent when the list started: see above
			}
			if !before && !now {
				continue
			}
			if n == q.Limit {
				next = encodeCursor(pin, q, last)
				return nil
			}
			c := Change{Kind: "set", ID: string(w.key[1:])}
			switch w.key[0] {
			case layout.ChangeCard:
				c.Kind = "card"
			case layout.ChangeNames:
				c.Kind, c.ID = "names", "names"
			}
			if now {
				var err error
				if rec, err = db.appendRecord(rec[:0], w.key[0], c.ID); err != nil {
					return err
				}
				c.Record = rec
			}
			if err := fn(c); err != nil {
				return err
			}
			last = append(last[:0], w.key...)
			n++
		}
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("changes since %q: %w", q.Since, err)
	}
	return next, nil
}

// appendRecord appends the JSON of the set or card id as served, or of
// every name group.
func (db *DB) appendRecord(dst []byte, kind byte, id string) ([]byte, error) {
	if kind == layout.ChangeNames {
		return db.appendNameGroups(dst)
	}
	if kind == layout.ChangeSet {
		err := db.read(func(r *reader) error {
			s, ok, err := setByID(r.setCursor, id)
			if err == nil && !ok {
				err = fmt.Errorf("set %q of the list of changes is missing", id)
			}
			dst = append(dst, s.JSON...)
			return err
		})
		return dst, err
	}
	dst, err := db.AppendCard(dst, id)
	if err != nil {
		// Not ErrNotFound: the request named no card, the file is wrong.
		return dst, fmt.Errorf("card %q of the list of changes: %v", id, err)
	}
	return dst, nil
}

// changeWalk merges the change lists of consecutive steps by key.
type changeWalk struct {
	steps   []layout.HistoryStep
	cursors []*bolt.Cursor
	keys    [][]byte // the current key of each cursor, without its step; nil when done
	vals    [][]byte

	key           []byte // the record met, kind and id
	before, after byte   // its zone before the first step and after the last
	seen          []int  // the steps that changed it, as indexes into steps
	seenBefore    []byte // its zone before each of them
}

func newChangeWalk(b *bolt.Bucket, steps []layout.HistoryStep, after []byte) *changeWalk {
	w := &changeWalk{steps: steps}
	for _, s := range steps {
		c := b.Cursor()
		var seek [4]byte
		binary.BigEndian.PutUint32(seek[:], s.Step)
		k, v := c.Seek(append(seek[:], after...))
		if after != nil && k != nil && bytes.Equal(k[4:], after) && bytes.HasPrefix(k, seek[:]) {
			k, v = c.Next()
		}
		w.cursors = append(w.cursors, c)
		w.keys = append(w.keys, nil)
		w.vals = append(w.vals, nil)
		w.set(len(w.cursors)-1, s.Step, k, v)
	}
	return w
}

func (w *changeWalk) set(i int, step uint32, k, v []byte) {
	if len(k) < 5 || binary.BigEndian.Uint32(k) != step || len(v) != 2 {
		w.keys[i] = nil
		return
	}
	w.keys[i], w.vals[i] = k[4:], v
}

// next moves to the next record any step changed.
func (w *changeWalk) next() bool {
	var min []byte
	for _, k := range w.keys {
		if k != nil && (min == nil || bytes.Compare(k, min) < 0) {
			min = k
		}
	}
	if min == nil {
		return false
	}
	w.key = append(w.key[:0], min...)
	w.seen, w.seenBefore = w.seen[:0], w.seenBefore[:0]
	for i, k := range w.keys {
		if k == nil || !bytes.Equal(k, w.key) {
			continue
		}
		if len(w.seen) == 0 {
			w.before = w.vals[i][0]
		}
		w.after = w.vals[i][1]
		w.seen = append(w.seen, i)
		w.seenBefore = append(w.seenBefore, w.vals[i][0])
		nk, nv := w.cursors[i].Next()
		w.set(i, w.steps[i].Step, nk, nv)
	}
	return true
}

// beforeStep returns the zone of the record before step i: what the first
// step at or after i that changed it found, or what the last one left.
func (w *changeWalk) beforeStep(i int) byte {
	for j, s := range w.seen {
		if s >= i {
			return w.seenBefore[j]
		}
	}
	return w.after
}

// CheckCursor returns an error wrapping ErrBadCursor when q.After is given
// and is not a cursor of the list q asks for, which Changes would refuse:
// a caller can name it beside its other parameters.
func (q ChangesQuery) CheckCursor() error {
	if q.After == "" {
		return nil
	}
	_, _, err := decodeCursor(q.After, q)
	return err
}

// encodeCursor makes the cursor after the record key of the list of q
// that started at generation pin: pin, uvarint-length-prefixed, a zero
// byte, the listSum of q, then the key. A record key starts with
// ChangeSet or ChangeCard, so the zero byte makes a version of catalogd
// that read the key right after pin refuse the cursor, rather than take
// the sum for a key (replicas of two versions, during an upgrade).
func encodeCursor(pin string, q ChangesQuery, key []byte) string {
	b := binary.AppendUvarint(nil, uint64(len(pin)))
	b = append(b, pin...)
	b = append(b, 0)
	b = binary.BigEndian.AppendUint32(b, listSum(q))
	b = append(b, key...)
	return base64.RawURLEncoding.EncodeToString(b)
}

// decodeCursor returns the generation and the record key of a cursor of
// the list of q.
func decodeCursor(s string, q ChangesQuery) (string, []byte, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return "", nil, fmt.Errorf("cursor %s: %w", catalog.Quote(s), ErrBadCursor)
	}
	n, used := binary.Uvarint(b)
	if used <= 0 || n > uint64(len(b)-used) || len(b)-used-int(n) < 5 {
		return "", nil, fmt.Errorf("cursor %s: %w", catalog.Quote(s), ErrBadCursor)
	}
	pin, rest := string(b[used:used+int(n)]), b[used+int(n):]
	marker, sum, key := rest[0], rest[1:5], rest[5:]
	if marker != 0 || len(key) < 2 || (key[0] != layout.ChangeSet && key[0] != layout.ChangeCard) {
		return "", nil, fmt.Errorf("cursor %s: %w", catalog.Quote(s), ErrBadCursor)
	}
	if binary.BigEndian.Uint32(sum) != listSum(q) {
		return "", nil, fmt.Errorf("cursor %s is of another list of changes (another since or zone): %w", catalog.Quote(s), ErrBadCursor)
	}
	return pin, key, nil
}

// listSum is a checksum of what chooses a list of changes, since and zone,
// which its cursors carry: a cursor given with another list would skip
// whatever that list holds before the cursor's record, so it is refused.
// Such a cursor passes only when the two lists' sums collide, one time in
// 2^32: this guards against a client that mixes its lists up, not against
// forgery, which gains a client nothing it cannot ask for.
func listSum(q ChangesQuery) uint32 {
	return crc32.ChecksumIEEE([]byte(q.Since + "\x00" + q.Zone))
}

// Previous is the catalogue a new one replaces, as Follow reads it: a
// *DB open for reading.
type Previous interface {
	Info() layout.Info
	Path() string
	View(fn func(tx *bolt.Tx) error) error
}

// Follow makes the catalogue being written the next generation of prev,
// which stays open until Finish returns: Finish compares the two, record by
// record, and the new file holds the changes of the last keep imports, this
// one included. keep 0 keeps none, and compares nothing.
func (w *Writer) Follow(prev Previous, keep int) {
	w.prev, w.keep = prev, keep
}

// writeChanges writes the kept steps of prev's history and the step from
// prev to this catalogue, and sets info.History. It runs in Finish, once
// every card and set is in the open transaction: the comparison walks both
// files' cards by id, and what it finds goes through a sorter, which holds
// a bounded buffer and spills to disk, before it is put (putting commits
// now and then, which would end the walk's cursors).
func (w *Writer) writeChanges(info *layout.Info) error {
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
		// The reads of the file met the damage first (recoverDamage).
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
	err := w.prev.View(func(tx *bolt.Tx) error {
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
	return w.prev.View(func(tx *bolt.Tx) error {
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
	return w.prev.View(func(tx *bolt.Tx) error {
		old := tx.Bucket(layout.BucketCards)
		oldIDs, oldCards := old.Cursor(), old.Cursor()
		var key []byte
		// The id keys (keyCardID + id, to the locator) are the last of
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
