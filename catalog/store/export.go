package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"sort"

	"github.com/catalogd/catalogd/catalog"
	"github.com/catalogd/catalogd/catalog/store/internal/layout"
	bolt "go.etcd.io/bbolt"
)

// Export is the snapshot of the catalogue, or of one zone of it, that
// GET /catalog/export serves and catalogd import reads back
// (docs/CONTRACT.md, Partner sync): {"sets":[...],"cards":[...]}, the sets in
// list order, the cards set by set in that order, each set's in
// printed-number order, then "names" when the catalogue has name groups. Its bytes are the stored JSON, joined: nothing is
// encoded per download, and the sizes the import stores for each set
// (internal/layout/export.go) let a reader start at any
// offset without reading what comes before.
type Export struct {
	db    *DB
	head  []byte // {"sets":[...],"cards":[
	sets  []exportSet
	cards int64  // bytes of the cards, commas included
	tail  []byte // the end of the cards, the name groups, the end
	size  int64
}

// exportSet is one set with cards in an Export: where its cards start,
// relative to the first card, and what they take, each card's comma
// included (the first card of the export has none).
type exportSet struct {
	prefix []byte // of its cards' keys
	start  int64
	size   int64
}

// measuredSet is one set of the catalogue, in list order, with the bytes
// of its cards' JSON.
type measuredSet struct {
	prefix []byte
	total  int64
	size   int64
}

// Export returns the export of zone, or of every zone when zone is "". The
// first call reads the bytes of every set's cards; later calls cost a pass
// over the sets.
func (db *DB) Export(zone string) (*Export, error) {
	if zone != "" && catalog.ZoneIndex(zone) < 0 {
		return nil, fmt.Errorf("export: zone %q: %w", zone, ErrNotFound)
	}
	db.exportOnce.Do(func() {
		db.exportSets, db.exportErr = db.measureSets()
		if db.exportErr == nil {
			db.exportTail, db.exportErr = db.appendNamesTail(nil)
		}
	})
	if db.exportErr != nil {
		return nil, db.exportErr
	}
	sets, err := db.SetList(zone)
	if err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	e := &Export{db: db}
	e.head = append([]byte(`{"sets":`), bytes.Join(sets, nil)...)
	e.head = append(e.head, `,"cards":[`...)
	z := catalog.ZoneIndex(zone)
	for _, s := range db.exportSets {
		if zone != "" && int(s.prefix[0]) != z || s.total == 0 {
			continue
		}
		size := s.size + s.total // a comma before each card
		if len(e.sets) == 0 {
			size-- // but the first
		}
		e.sets = append(e.sets, exportSet{prefix: s.prefix, start: e.cards, size: size})
		e.cards += size
	}
	e.tail = db.exportTail
	e.size = int64(len(e.head)) + e.cards + int64(len(e.tail))
	return e, nil
}

// appendNamesTail appends what follows the cards in an export: the end of
// their array, then the name groups, when there are any, in the order of
// the snapshot, as ,"names":[...], then the end of the snapshot. The groups
// are held while the catalogue is open: they are bounded
// (catalog.MaxNameGroupBytes), and few.
func (db *DB) appendNamesTail(dst []byte) ([]byte, error) {
	groups, err := db.appendNameGroups(nil)
	if err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	dst = append(dst, ']')
	if groups != nil {
		dst = append(append(dst, `,"names":`...), groups...)
	}
	return append(dst, '}'), nil
}

// appendNameGroups appends the JSON array of the name groups, in the
// order of the snapshot; nothing when there are none.
func (db *DB) appendNameGroups(dst []byte) ([]byte, error) {
	n := 0
	err := db.view(func(tx *bolt.Tx) error {
		b := tx.Bucket(layout.BucketNames)
		if b == nil {
			return nil
		}
		return b.ForEach(func(_, group []byte) error {
			if n == 0 {
				dst = append(dst, '[')
			} else {
				dst = append(dst, ',')
			}
			n++
			dst = append(dst, group...)
			return nil
		})
	})
	if err != nil {
		return dst, fmt.Errorf("name groups: %w", err)
	}
	if n > 0 {
		dst = append(dst, ']')
	}
	return dst, nil
}

// measureSets returns every set, in list order, with the bytes of its
// cards' JSON, which the DB keeps (a few dozen bytes a set).
func (db *DB) measureSets() ([]measuredSet, error) {
	var sets []measuredSet
	err := db.read(func(r *reader) error {
		stored := r.tx.Bucket(layout.BucketSetBytes)
		return r.eachSetInOrder(func(id []byte, s layout.StoredSet) error {
			n, err := r.setBytes(stored, s)
			if err != nil {
				return fmt.Errorf("set %q: %w", id, err)
			}
			sets = append(sets, measuredSet{prefix: bytes.Clone(s.Prefix), total: s.Total, size: n})
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("export: measure the cards: %w", err)
	}
	return sets, nil
}

// setBytes returns the bytes of the set's cards' JSON: as the import stored
// them in stored, or, in a file without, by a walk of the cards.
func (r *reader) setBytes(stored *bolt.Bucket, s layout.StoredSet) (int64, error) {
	if stored != nil {
		if v := stored.Get(s.Prefix); v != nil {
			if len(v) != 8 {
				return 0, damagef("the bytes of its cards are stored in %d bytes, not 8", len(v))
			}
			// Every card takes a byte at least, and all of them less than
			// the file: past those bounds sets would overlap in the layout,
			// and a download read the wrong set without noticing.
			n := binary.BigEndian.Uint64(v)
			if n < uint64(s.Total) || n > uint64(r.tx.Size()) {
				return 0, damagef("its %d cards are stored as %d bytes of JSON, which cannot be", s.Total, n)
			}
			return int64(n), nil
		}
	}
	var n, count int64
	c := r.cardCursor
	for k, v := c.Seek(s.Prefix); bytes.HasPrefix(k, s.Prefix); k, v = c.Next() {
		n += int64(len(v))
		count++
	}
	if count != s.Total {
		return 0, damagef("its record counts %d cards, the cards bucket holds %d", s.Total, count)
	}
	return n, nil
}

// Size is the length of the export in bytes.
func (e *Export) Size() int64 { return e.size }

// Generation is the generation the export is of.
func (e *Export) Generation() string { return e.db.Generation() }

// Open returns a reader of the export, which holds one read transaction of
// the catalogue until it is closed. It reads the cards in place, a card at
// a time, so it holds one card in memory whatever the catalogue's size.
func (e *Export) Open() (*ExportReader, error) {
	r, err := e.db.getReader()
	if err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	return &ExportReader{e: e, r: r, set: -1}, nil
}

// ExportReader reads an Export; it is an io.ReadSeeker. It is not safe for
// concurrent use.
type ExportReader struct {
	e   *Export
	r   *reader
	off int64 // the next byte to read

	// The card being read: unit is its comma and JSON, which start at
	// unitOff in the cards; set is the index of its set in e.sets, and the
	// cursor is on it. set is -1 when no card is loaded.
	set     int
	unit    []byte
	unitOff int64

	damaged bool // a read met damage: the transaction is not kept
}

// Read reads the export from the current offset. A fault on the file's
// map is an ErrDamaged, as in any read (DB.read), and the reader's
// transaction is not kept.
func (x *ExportReader) Read(p []byte) (n int, err error) {
	done := false
	defer func() {
		if !done || errors.Is(err, layout.ErrDamaged) {
			x.damaged = true // damage, or a panic that goes on
		}
	}()
	defer x.e.db.recoverDamage(&err)
	defer debug.SetPanicOnFault(readsMap())
	n, err = x.read(p)
	done = true
	return n, err
}

func (x *ExportReader) read(p []byte) (n int, err error) {
	if x.r == nil {
		return 0, errors.New("export: read after close")
	}
	e := x.e
	if x.off >= e.size {
		return 0, io.EOF
	}
	head := int64(len(e.head))
	for n < len(p) && x.off < e.size {
		var m int
		switch {
		case x.off < head:
			m = copy(p[n:], e.head[x.off:])
		case x.off >= head+e.cards:
			m = copy(p[n:], e.tail[x.off-head-e.cards:])
		default:
			c, err := x.cardBytes(x.off - head)
			if err != nil {
				return n, err
			}
			m = copy(p[n:], c)
		}
		n += m
		x.off += int64(m)
	}
	return n, nil
}

// cardBytes returns the rest of the card unit (comma and JSON) holding
// offset off of the cards, loading it: the next card when off is where the
// loaded one ends, else by a seek to the set that holds off and a walk
// through its cards.
func (x *ExportReader) cardBytes(off int64) ([]byte, error) {
	if x.set >= 0 && off >= x.unitOff && off < x.unitOff+int64(len(x.unit)) {
		return x.unit[off-x.unitOff:], nil
	}
	var err error
	if x.set >= 0 && off == x.unitOff+int64(len(x.unit)) {
		err = x.next()
	} else {
		err = x.seekSet(off)
	}
	for err == nil && off >= x.unitOff+int64(len(x.unit)) {
		err = x.next()
	}
	if err != nil {
		return nil, err
	}
	return x.unit[off-x.unitOff:], nil
}

// seekSet loads the first card of the set that holds offset off of the
// cards.
func (x *ExportReader) seekSet(off int64) error {
	sets := x.e.sets
	i := sort.Search(len(sets), func(i int) bool { return sets[i].start+sets[i].size > off })
	x.set = i
	x.unitOff = sets[i].start
	k, v := x.r.cardCursor.Seek(sets[i].prefix)
	if !bytes.HasPrefix(k, sets[i].prefix) {
		return x.mismatch()
	}
	return x.load(v, i > 0)
}

// next loads the card after the loaded one, in its set or the next. A set
// whose cards end elsewhere than its measure says fails it: the bytes of
// the sets after it would be at other offsets than the layout's.
func (x *ExportReader) next() error {
	sets := x.e.sets
	start := x.unitOff + int64(len(x.unit))
	k, v := x.r.cardCursor.Next()
	if !bytes.HasPrefix(k, sets[x.set].prefix) {
		if start != sets[x.set].start+sets[x.set].size || x.set+1 >= len(sets) {
			return x.mismatch()
		}
		x.set++
		if k, v = x.r.cardCursor.Seek(sets[x.set].prefix); !bytes.HasPrefix(k, sets[x.set].prefix) {
			return x.mismatch()
		}
	}
	x.unitOff = start
	return x.load(v, true)
}

// load makes card, with a comma before it or not, the loaded unit, which
// must end within its set's measure.
func (x *ExportReader) load(card []byte, comma bool) error {
	x.unit = x.unit[:0]
	if comma {
		x.unit = append(x.unit, ',')
	}
	x.unit = append(x.unit, card...)
	if s := x.e.sets[x.set]; x.unitOff+int64(len(x.unit)) > s.start+s.size {
		return x.mismatch()
	}
	return nil
}

// mismatch is the error of a set whose cards are not the bytes its measure
// says: a damaged file, which the download cannot go on reading.
func (x *ExportReader) mismatch() error {
	s := x.e.sets[x.set]
	x.set = -1 // nothing loaded
	return damagef("export: the cards of set %s do not match their measure of %d bytes at offset %d of the cards", describeSetPrefix(s.prefix), s.size, s.start)
}

// Seek sets the offset of the next Read.
func (x *ExportReader) Seek(offset int64, whence int) (int64, error) {
	off, err := SeekOffset(x.off, x.e.size, offset, whence)
	x.off = off
	return off, err
}

// SeekOffset is where io.Seeker's Seek(offset, whence) moves a reader of
// an export of size bytes that is at off; on an error, off. The compressed
// export the server sends seeks alike.
func SeekOffset(off, size, offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		offset += off
	case io.SeekEnd:
		offset += size
	default:
		return off, fmt.Errorf("export: seek: whence %d", whence)
	}
	if offset < 0 {
		return off, fmt.Errorf("export: seek to %d, before the start", offset)
	}
	return offset, nil
}

// Close releases the reader's transaction.
func (x *ExportReader) Close() error {
	switch {
	case x.r == nil:
	case x.damaged:
		x.e.db.discard(x.r)
	default:
		x.e.db.putReader(x.r)
	}
	x.r = nil
	return nil
}

// describeSetPrefix names the set of a set prefix in an error: its code
// and zone.
func describeSetPrefix(prefix []byte) string {
	if len(prefix) > 0 && int(prefix[0]) < len(catalog.Zones()) {
		if code, rest, ok := layout.LengthPrefixed(prefix[1:]); ok && len(rest) == 0 {
			return fmt.Sprintf("%q of zone %s", code, catalog.Zones()[prefix[0]])
		}
	}
	return fmt.Sprintf("of prefix %q", prefix)
}
