package catalog

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
)

// DB is an open, read-only catalogue file. It is safe for concurrent use.
// Sets are few and read on every call, so Open loads them into memory; cards
// stay in the file.
type DB struct {
	db   *bolt.DB
	path string
	info Info

	setsByID   map[string]*storedSet
	setsByCode map[string][]*storedSet // zones in resolution order
	setList    [4][]byte               // JSON arrays: all zones, then by zone index
	setOrder   []*storedSet            // every set, in list order

	exportOnce  sync.Once // measures the cards of each set for Export
	exportSizes []int64   // by position in setOrder: the bytes of its cards' JSON
	exportErr   error

	// zoneOrdinals are the ordinals of the search index entries of each
	// zone, by zone index (see postings.go).
	zoneOrdinals [3]ordinalRange

	// readers holds idle read transactions. Beginning one takes two
	// exclusive locks inside bbolt and half a dozen allocations, more than
	// looking a card up; the file is read-only and never remapped, so a
	// transaction may stay open as long as the DB.
	readers chan *reader
	// closing guards readers against Close: a reader handed back after
	// Close began is rolled back, so bbolt's Close does not wait on it.
	closing sync.RWMutex
	closed  bool

	derivedOnce sync.Once
	derived     any // see Derived
}

// reader is one read transaction with the cursors every call uses: a
// cursor's stack is reused by each Seek, where a Get or a new cursor would
// allocate one. It serves one call at a time: bbolt transactions are not
// safe for concurrent use.
type reader struct {
	tx            *bolt.Tx
	cardCursor    *bolt.Cursor    // cards
	entryCursors  [3]*bolt.Cursor // numbers, one for each zone's walk
	postingCursor *bolt.Cursor    // postings
}

// readersPerDB bounds the idle transactions kept; more run at once when
// needed, and are closed when done.
const readersPerDB = 64

func (db *DB) getReader() (*reader, error) {
	select {
	case r := <-db.readers:
		return r, nil
	default:
	}
	tx, err := db.db.Begin(false)
	if err != nil {
		return nil, err
	}
	r := &reader{
		tx:            tx,
		cardCursor:    tx.Bucket(bucketCards).Cursor(),
		postingCursor: tx.Bucket(bucketPostings).Cursor(),
	}
	for i := range r.entryCursors {
		r.entryCursors[i] = tx.Bucket(bucketNumbers).Cursor()
	}
	return r, nil
}

func (db *DB) putReader(r *reader) {
	db.closing.RLock()
	defer db.closing.RUnlock()
	if !db.closed {
		select {
		case db.readers <- r:
			return
		default:
		}
	}
	r.tx.Rollback()
}

// read runs fn with a reader, as bbolt's View runs a function in a
// transaction.
func (db *DB) read(fn func(r *reader) error) error {
	r, err := db.getReader()
	if err != nil {
		return err
	}
	defer db.putReader(r)
	return fn(r)
}

type storedSet struct {
	Set
	total  int64  // cards actually in the file, which is what listing returns
	prefix []byte // of the keys of its cards in the cards bucket; prefix[0] is the zone byte
}

// Open opens the catalogue file at path read-only. It takes a shared lock,
// so several processes may serve the same file.
func Open(path string) (*DB, error) {
	bdb, err := bolt.Open(path, 0o444, &bolt.Options{ReadOnly: true, Timeout: 2 * time.Second})
	if err != nil {
		return nil, fmt.Errorf("open catalogue %s: %w", path, err)
	}
	db := &DB{db: bdb, path: path, readers: make(chan *reader, readersPerDB)}
	if err := bdb.View(db.load); err != nil {
		bdb.Close()
		return nil, fmt.Errorf("open catalogue %s: %w", path, err)
	}
	return db, nil
}

func (db *DB) load(tx *bolt.Tx) error {
	meta := tx.Bucket(bucketMeta)
	if meta == nil {
		return errors.New("not a catalogd catalogue (no meta bucket)")
	}
	if f := meta.Get(keyFormat); string(f) != formatVersion {
		return fmt.Errorf("catalogue format %q, this catalogd reads %q: run catalogd import again to rebuild the catalogue", f, formatVersion)
	}
	if err := json.Unmarshal(meta.Get(keyInfo), &db.info); err != nil {
		return fmt.Errorf("read info: %w", err)
	}
	for _, name := range [][]byte{bucketSets, bucketCards, bucketNumbers, bucketPostings} {
		if tx.Bucket(name) == nil {
			return fmt.Errorf("bucket %s missing", name)
		}
	}
	// The entries are ordered by zone, so each zone's are the ordinals
	// after those of the zones before it.
	var counts [3]uint64
	for _, zc := range db.info.Zones {
		z := ZoneIndex(zc.Zone)
		if z < 0 || zc.Cards < 0 || zc.Cards > math.MaxUint32 {
			return fmt.Errorf("read info: zone %q with %d cards", zc.Zone, zc.Cards)
		}
		counts[z] = uint64(zc.Cards)
	}
	var lo uint64
	for z, n := range counts {
		if lo+n > math.MaxUint32 {
			return fmt.Errorf("read info: %d cards, more than the index holds", lo+n)
		}
		db.zoneOrdinals[z] = ordinalRange{uint32(lo), uint32(lo + n)}
		lo += n
	}

	db.setsByID = make(map[string]*storedSet)
	db.setsByCode = make(map[string][]*storedSet)
	var all []*storedSet
	err := tx.Bucket(bucketSets).ForEach(func(k, v []byte) error {
		if len(v) < 8 {
			return fmt.Errorf("set %q: record too short", k)
		}
		s := &storedSet{total: int64(binary.BigEndian.Uint64(v))}
		if err := json.Unmarshal(v[8:], &s.Set); err != nil {
			return fmt.Errorf("set %q: %w", k, err)
		}
		s.prefix = appendSetPrefix(nil, zoneByte(s.Zone), s.Code)
		db.setsByID[s.ID] = s
		db.setsByCode[s.Code] = append(db.setsByCode[s.Code], s)
		all = append(all, s)
		return nil
	})
	if err != nil {
		return err
	}
	for _, list := range db.setsByCode {
		slices.SortFunc(list, func(a, b *storedSet) int { return ZoneIndex(a.Zone) - ZoneIndex(b.Zone) })
	}
	slices.SortFunc(all, compareSetOrder)
	db.setOrder = all
	db.setList[0] = appendSetArray(nil, all, "")
	for i, z := range Zones() {
		db.setList[i+1] = appendSetArray(nil, all, z)
	}
	return nil
}

// compareSetOrder is the order of the list of sets (docs/CONTRACT.md, Endpoints):
// releasedOn newest first, sets without a date after those with one, then id.
func compareSetOrder(a, b *storedSet) int {
	ad, bd := a.ReleasedOn.HasValue(), b.ReleasedOn.HasValue()
	switch {
	case ad && bd:
		if c := strings.Compare(b.ReleasedOn.Value, a.ReleasedOn.Value); c != 0 {
			return c
		}
	case ad:
		return -1
	case bd:
		return 1
	}
	return strings.Compare(a.ID, b.ID)
}

func appendSetArray(dst []byte, sets []*storedSet, zone string) []byte {
	dst = append(dst, '[')
	first := true
	for _, s := range sets {
		if zone != "" && s.Zone != zone {
			continue
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = s.AppendJSON(dst)
	}
	return append(dst, ']')
}

// Close closes the file. It waits for calls in progress to finish.
func (db *DB) Close() error {
	db.closing.Lock()
	db.closed = true
	// Without blocking: a call may take the last idle reader between a
	// look at the length and a receive, and its putReader waits for this
	// lock.
	for drained := false; !drained; {
		select {
		case r := <-db.readers:
			r.tx.Rollback()
		default:
			drained = true
		}
	}
	db.closing.Unlock()
	return db.db.Close()
}

// Path returns the file the catalogue was opened from.
func (db *DB) Path() string { return db.path }

// Info returns the generation, import time, sources and counts of the
// catalogue.
func (db *DB) Info() Info { return db.info }

// SetsJSON returns the JSON array of the sets of zone, or of every zone when
// zone is "", in list order. The caller must not modify it.
func (db *DB) SetsJSON(zone string) []byte {
	if zone == "" {
		return db.setList[0]
	}
	i := ZoneIndex(zone)
	if i < 0 {
		return []byte("[]")
	}
	return db.setList[i+1]
}

// Set resolves ref the way /catalog/sets/{code}/cards does
// (docs/CONTRACT.md, Endpoints): an exact set id first, then an exact set code, a code used in several
// zones resolving in zone order. It returns ErrNotFound when nothing
// matches.
func (db *DB) Set(ref string) (Set, error) {
	s, err := db.resolve(ref)
	if err != nil {
		return Set{}, err
	}
	return s.Set, nil
}

func (db *DB) resolve(ref string) (*storedSet, error) {
	if s, ok := db.setsByID[ref]; ok {
		return s, nil
	}
	if list := db.setsByCode[ref]; len(list) > 0 {
		return list[0], nil
	}
	return nil, fmt.Errorf("set %q: %w", ref, ErrNotFound)
}

// SetCards calls fn with the canonical JSON of each card on one page of the
// set that ref resolves to (as Set does), in printed-number order, and
// returns the set and its true number of cards. A page past the end calls fn
// never. The slice passed to fn is valid only until fn returns. It returns
// ErrNotFound when ref resolves to no set.
func (db *DB) SetCards(ref string, page, pageSize int64, fn func(card []byte)) (Set, int64, error) {
	s, err := db.resolve(ref)
	if err != nil {
		return Set{}, 0, err
	}
	if page < 1 || pageSize < 1 {
		return Set{}, 0, fmt.Errorf("set %q: page %d of size %d: page and size start at 1", ref, page, pageSize)
	}
	offset := (page - 1) * pageSize // page and pageSize are bounded by the API
	if s.total == 0 || offset >= s.total || offset < 0 {
		return s.Set, s.total, nil
	}
	err = db.read(func(r *reader) error {
		c := r.cardCursor
		k, v := c.Seek(s.prefix)
		for i := int64(0); bytes.HasPrefix(k, s.prefix) && i < offset; i++ {
			k, v = c.Next()
		}
		for n := int64(0); bytes.HasPrefix(k, s.prefix) && n < pageSize; n++ {
			fn(v)
			k, v = c.Next()
		}
		return nil
	})
	if err != nil {
		return Set{}, 0, fmt.Errorf("list cards of set %q: %w", s.ID, err)
	}
	return s.Set, s.total, nil
}

// AppendCard appends the canonical JSON of the card with id to dst. It
// returns ErrNotFound when there is no such card.
func (db *DB) AppendCard(dst []byte, id string) ([]byte, error) {
	found := false
	err := db.read(func(r *reader) error {
		var buf [128]byte
		key := appendCardIDKey(buf[:0], id)
		c := r.cardCursor
		k, loc := c.Seek(key)
		if !bytes.Equal(k, key) {
			return nil
		}
		key = appendLocatedCardKey(key[:0], loc, id)
		k, v := c.Seek(key)
		if !bytes.Equal(k, key) {
			return fmt.Errorf("card %q of the id index is missing", id)
		}
		dst = append(dst, v...)
		found = true
		return nil
	})
	if err != nil {
		return dst, fmt.Errorf("get card %q: %w", id, err)
	}
	if !found {
		return dst, fmt.Errorf("card %q: %w", id, ErrNotFound)
	}
	return dst, nil
}

// Generation is the id of the import that wrote this catalogue.
func (db *DB) Generation() string { return db.info.Generation }

// Derived returns what derive makes of db, made by the first call and kept
// with db: the place for what a user of the catalogue computes from it once
// (its caches), which then lasts exactly as long as the catalogue and needs
// no invalidation when another replaces it. db keeps one such value, so it
// has one user, whose every call passes the same kind of derive; the first
// call's derive is the one that runs, and concurrent first calls wait for it.
func (db *DB) Derived(derive func() any) any {
	db.derivedOnce.Do(func() { db.derived = derive() })
	return db.derived
}

// Sizes returns the bytes of pages each part of the file takes: "sets",
// "cards" and, for search, "numbers" and "postings".
func (db *DB) Sizes() (map[string]int64, error) {
	sizes := make(map[string]int64)
	err := db.db.View(func(tx *bolt.Tx) error {
		return tx.ForEach(func(name []byte, b *bolt.Bucket) error {
			s := b.Stats()
			sizes[string(name)] = int64(s.BranchAlloc + s.LeafAlloc)
			return nil
		})
	})
	return sizes, err
}
