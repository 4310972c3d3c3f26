package store

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/catalogd/catalogd/catalog"
	"github.com/catalogd/catalogd/catalog/store/internal/layout"
	bolt "go.etcd.io/bbolt"
)

// DB is an open, read-only catalogue file. It is safe for concurrent use.
// Open reads the catalogue's info and nothing that grows with it: sets,
// cards and the search index stay in the file until a call asks.
type DB struct {
	db   *bolt.DB
	path string
	info layout.Info
	now  func() time.Time // tells a generation this server is switching to (notHeld)

	// file is the file mapped, size the bytes its pages take, mapStart
	// where the map begins; cut is set once the file is found cut short
	// or written over (cutShort).
	file     *os.File
	size     int64
	mapStart uintptr
	pageSize int64
	metas    metaPages // as opened (cutShort)
	cut      atomic.Bool

	toFollow bool // opened by OpenToFollow: for its records only

	exportOnce sync.Once // measures the cards of each set for Export
	exportSets []measuredSet
	exportErr  error
	exportTail []byte // "]", the name groups, "}"

	// zoneOrdinals are the ordinals of the search index entries of each
	// zone, by zone index (see internal/layout/postings.go).
	zoneOrdinals [3]ordinalRange
	// longestName is the bytes of the longest folded name: a longer term
	// is in no name.
	longestName int
	// words is the dictionary of a fuzzy search (words.go).
	words dictionary
	// denseList is the length from which the search takes lists a window
	// at a time (see windowed): denseList of the catalogue's cards but in
	// tests, which check both walks.
	denseList uint64
	// nameGrams is whether the names' grams have runs, where names repeat
	// (namegrams.go).
	nameGrams bool

	// readers holds idle read transactions. Beginning one takes two
	// exclusive locks inside bbolt and half a dozen allocations, more than
	// looking a card up; the file is read-only and never remapped, so a
	// transaction may stay open as long as the DB.
	readers chan *reader
	// closing guards readers against Close: a reader handed back after
	// Close began is rolled back, so bbolt's Close does not wait on it.
	closing sync.RWMutex
	closed  bool
}

// reader is one read transaction with the cursors every call uses: a
// cursor's stack is reused by each Seek, where a Get or a new cursor would
// allocate one. It serves one call at a time: bbolt transactions are not
// safe for concurrent use.
type reader struct {
	tx            *bolt.Tx
	cardCursor    *bolt.Cursor    // cards
	markCursor    *bolt.Cursor    // pageMarks, nil in a file without them
	setCursor     *bolt.Cursor    // sets
	codeCursor    *bolt.Cursor    // setCodes
	entryCursors  [3]*bolt.Cursor // numbers, one for each zone's walk
	listCursors   cursorPool      // postings, for the walk of long lists
	postingCursor *bolt.Cursor    // postings
	groupCursor   *bolt.Cursor    // groups
	completions   *bolt.Cursor    // completions, for runs
	// completionRecords reads the records of names and the runs of
	// groups while completions walks a range of runs.
	completionRecords *bolt.Cursor
	// groupListCursors walk the lists of groups, groupTexts reads their
	// texts (see groupindex.go).
	groupListCursors cursorPool
	groupTexts       groupTexts
}

// cursorPool hands out cursors of one bucket, kept from call to call: a
// new cursor costs allocations, and a search may walk a dozen lists.
type cursorPool struct {
	bucket *bolt.Bucket
	all    []*bolt.Cursor
	used   int
	// damaged is the first list of the call found not as the import
	// writes lists: the call fails with it rather than answer from what
	// it could read.
	damaged error
}

func (p *cursorPool) get() *bolt.Cursor {
	if p.used == len(p.all) {
		p.all = append(p.all, p.bucket.Cursor())
	}
	p.used++
	return p.all[p.used-1]
}

// reset makes every cursor free again, for the next call.
func (p *cursorPool) reset() { p.used, p.damaged = 0, nil }

// readersPerDB bounds the idle transactions kept; more run at once when
// needed, and are closed when done.
const readersPerDB = 64

func (db *DB) getReader() (r *reader, err error) {
	if db.cut.Load() {
		return nil, errCutShort
	}
	select {
	case r := <-db.readers:
		return r, nil
	default:
	}
	tx, err := db.begin()
	if err != nil {
		return nil, err
	}
	// A bucket on a page the file no longer holds, or a panic that is no
	// damage: the transaction ends here, for no reader holds it.
	made := false
	defer func() {
		if !made {
			tx.Rollback()
			r = nil
		}
	}()
	defer db.recoverDamage(&err)
	r = &reader{
		tx:            tx,
		cardCursor:    tx.Bucket(layout.BucketCards).Cursor(),
		markCursor:    pageMarkCursor(tx),
		setCursor:     tx.Bucket(layout.BucketSets).Cursor(),
		codeCursor:    tx.Bucket(layout.BucketSetCodes).Cursor(),
		listCursors:   cursorPool{bucket: tx.Bucket(layout.BucketPostings)},
		postingCursor: tx.Bucket(layout.BucketPostings).Cursor(),
		groupCursor:   tx.Bucket(layout.BucketGroups).Cursor(),
		completions:   tx.Bucket(layout.BucketCompletions).Cursor(),

		completionRecords: tx.Bucket(layout.BucketCompletions).Cursor(),

		groupListCursors: cursorPool{bucket: tx.Bucket(layout.BucketGroups)},
		groupTexts:       groupTexts{c: tx.Bucket(layout.BucketGroups).Cursor()},
	}
	for i := range r.entryCursors {
		r.entryCursors[i] = tx.Bucket(layout.BucketNumbers).Cursor()
	}
	made = true
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

// discard ends a reader that met damage, or a panic: its cursors may be
// anywhere, so it is not kept for the next call; and a file found cut
// short begins no transaction again (cutShort).
func (db *DB) discard(r *reader) {
	r.tx.Rollback()
	db.cutShort()
}

// read runs fn with a reader, as bbolt's View runs a function in a
// transaction.
func (db *DB) read(fn func(r *reader) error) (err error) {
	defer debug.SetPanicOnFault(readsMap())
	r, err := db.getReader()
	if err != nil {
		return err
	}
	done := false
	defer func() {
		if !done || errors.Is(err, layout.ErrDamaged) {
			db.discard(r) // damage, or a panic that goes on
			return
		}
		db.putReader(r)
	}()
	defer db.recoverDamage(&err)
	err = fn(r)
	done = true
	return err
}

// Open opens the catalogue file at path read-only. It takes a shared lock,
// so several processes may serve the same file.
func Open(path string) (*DB, error) { return open(path, false) }

// OpenToFollow is Open for an import that keeps the history of the
// catalogue it replaces: it opens a file of an earlier format too, when
// its sets, cards and history are stored as this one's
// (layout.SameRecordsAs), to read those and its generation. It is never
// served: an upgrade that changes the format then keeps partners' sync.
func OpenToFollow(path string) (*DB, error) { return open(path, true) }

func open(path string, toFollow bool) (*DB, error) {
	// The file bbolt maps, to measure it rather than whatever the path
	// names a moment later.
	var file *os.File
	openFile := func(name string, flag int, perm os.FileMode) (*os.File, error) {
		f, err := os.OpenFile(name, flag, perm)
		if err != nil {
			return nil, err
		}
		// bbolt would write a new database into an empty file, and fail
		// to, read-only, with "bad file descriptor".
		if info, err := f.Stat(); err == nil && info.Size() == 0 {
			f.Close()
			return nil, errors.New("the file is empty, not a catalogue: import one into it")
		}
		file = f
		return f, nil
	}
	bdb, err := bolt.Open(path, 0o444, &bolt.Options{ReadOnly: true, Timeout: 2 * time.Second, OpenFile: openFile})
	if err != nil {
		return nil, fmt.Errorf("open catalogue %s: %w", path, err)
	}
	db := &DB{db: bdb, path: path, now: time.Now, readers: make(chan *reader, readersPerDB), file: file, mapStart: bdb.Info().Data, pageSize: int64(bdb.Info().PageSize), toFollow: toFollow}
	if err := bdb.View(func(tx *bolt.Tx) error { return db.loadWhole(tx, file) }); err != nil {
		bdb.Close()
		return nil, fmt.Errorf("open catalogue %s: %w", path, err)
	}
	return db, nil
}

// loadWhole loads the catalogue's info from a file that holds every page
// its meta page counts. A file cut short (a copy that stopped, a full
// disk) has a valid meta page and ends before its last pages: bbolt maps
// it whole without checking, and reading past its end kills the process
// with a memory fault that no recover catches, or makes bbolt panic on
// the zeros of the last mapped page. A page that is there but damaged
// makes bbolt panic too, which is this error. Refused here, serve keeps
// the catalogue it has, catalogd info says why, and an import over the
// file starts a history of its own.
func (db *DB) loadWhole(tx *bolt.Tx, file *os.File) (err error) {
	fi, err := file.Stat()
	if err != nil {
		return err
	}
	if fi.Size() < tx.Size() {
		return fmt.Errorf("the file is %d bytes and its pages take %d: a copy cut short, or a damaged file", fi.Size(), tx.Size())
	}
	db.size = tx.Size()
	if db.metas, err = readMetaPages(file, db.pageSize); err != nil {
		return err
	}
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("%w: %v", layout.ErrDamaged, v)
		}
	}()
	return db.load(tx)
}

func (db *DB) load(tx *bolt.Tx) error {
	meta := tx.Bucket(layout.BucketMeta)
	if meta == nil {
		return errors.New("not a catalogd catalogue (no meta bucket)")
	}
	if f := meta.Get(layout.KeyFormat); string(f) != layout.FormatVersion && !(db.toFollow && slices.Contains(layout.SameRecordsAs, string(f))) {
		return fmt.Errorf("catalogue format %q, this catalogd reads %q: run catalogd import again to rebuild the catalogue", f, layout.FormatVersion)
	}
	if err := json.Unmarshal(meta.Get(layout.KeyInfo), &db.info); err != nil {
		return fmt.Errorf("read info: %w", err)
	}
	longest, n := binary.Uvarint(meta.Get(layout.KeyLongestName))
	if n <= 0 {
		return errors.New("read the longest name: missing or malformed")
	}
	db.longestName = int(min(longest, math.MaxInt32))
	db.nameGrams = meta.Get(layout.KeyNameGrams) != nil
	for _, name := range [][]byte{layout.BucketSets, layout.BucketSetCodes, layout.BucketSetOrder, layout.BucketSetLists, layout.BucketCards, layout.BucketNumbers, layout.BucketPostings, layout.BucketGroups, layout.BucketCompletions} {
		if tx.Bucket(name) == nil {
			return fmt.Errorf("bucket %s missing", name)
		}
	}
	// The entries are ordered by zone, so each zone's are the ordinals
	// after those of the zones before it.
	var counts [3]uint64
	for _, zc := range db.info.Zones {
		z := catalog.ZoneIndex(zc.Zone)
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
	db.denseList = denseList(lo)
	var err error
	if db.words, err = loadWords(tx); err != nil {
		return err
	}

	return nil
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
// catalogue. Its slices are the caller's: changing them changes no other
// caller's.
func (db *DB) Info() layout.Info {
	info := db.info
	info.Sources = slices.Clone(info.Sources)
	info.Zones = slices.Clone(info.Zones)
	info.History = slices.Clone(info.History)
	return info
}

// Set resolves ref the way /catalog/sets/{code}/cards does
// (docs/CONTRACT.md, Endpoints): an exact set id first, then an exact set
// code, a code used in several zones resolving in zone order. It returns
// ErrNotFound when nothing matches.
func (db *DB) Set(ref string) (catalog.Set, error) {
	var set catalog.Set
	err := db.read(func(r *reader) error {
		s, ok, err := r.resolveSet(ref)
		if err != nil || !ok {
			return err
		}
		set, err = s.Set()
		return err
	})
	if err != nil {
		return catalog.Set{}, fmt.Errorf("set %q: %w", ref, err)
	}
	if set.ID == "" {
		return catalog.Set{}, fmt.Errorf("set %q: %w", ref, ErrNotFound)
	}
	return set, nil
}

// SetCards calls fn with the canonical JSON of each card on one page of the
// set that ref resolves to (as Set does), in printed-number order, and
// returns the set's true number of cards. A page past the end calls fn
// never. The slice passed to fn is valid only until fn returns. It returns
// ErrNotFound when ref resolves to no set. The set itself is Set's: a page
// does not decode it.
func (db *DB) SetCards(ref string, page, pageSize int64, fn func(card []byte)) (int64, error) {
	if page < 1 || pageSize < 1 {
		return 0, fmt.Errorf("set %q: page %d of size %d: page and size start at 1", ref, page, pageSize)
	}
	var total int64
	found := false
	err := db.read(func(r *reader) error {
		s, ok, err := r.resolveSet(ref)
		if err != nil || !ok {
			return err
		}
		found, total = true, s.Total
		offset := (page - 1) * pageSize // page and pageSize are bounded by the API
		if s.Total == 0 || offset >= s.Total || offset < 0 {
			return nil
		}
		// The set's cards are the total keys in a row from its prefix, so
		// those before the page are stepped over unchecked. A key past the
		// set, in a damaged file, ends the page below.
		k, v, err := r.seekPage(s.Prefix, offset)
		if err != nil {
			return err
		}
		c := r.cardCursor
		for n := int64(0); bytes.HasPrefix(k, s.Prefix) && n < pageSize; n++ {
			fn(v)
			k, v = c.Next()
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("list cards of set %q: %w", ref, err)
	}
	if !found {
		return 0, fmt.Errorf("set %q: %w", ref, ErrNotFound)
	}
	return total, nil
}

// AppendCard appends the canonical JSON of the card with id to dst. It
// returns ErrNotFound when there is no such card.
func (db *DB) AppendCard(dst []byte, id string) ([]byte, error) {
	found := false
	err := db.read(func(r *reader) error {
		card, ok, err := r.card(id)
		dst, found = append(dst, card...), ok
		return err
	})
	if err != nil {
		return dst, fmt.Errorf("get card %q: %w", id, err)
	}
	if !found {
		return dst, fmt.Errorf("card %q: %w", id, ErrNotFound)
	}
	return dst, nil
}

// card returns the canonical JSON of the card with id, valid until the
// reader's next seek, and whether there is one: one seek of the key that
// id names when it has the usual shape (layout.AppendGuessedCardKey), or
// else two of one cursor, the id's locator and then the card.
func (r *reader) card(id string) ([]byte, bool, error) {
	var buf [128]byte
	c := r.cardCursor
	if key, ok := layout.AppendGuessedCardKey(buf[:0], id); ok {
		if k, v := c.Seek(key); bytes.Equal(k, key) {
			return v, true, nil
		}
	}
	key := layout.AppendCardIDKey(buf[:0], id)
	k, loc := c.Seek(key)
	if !bytes.Equal(k, key) {
		return nil, false, nil
	}
	key = layout.AppendLocatedCardKey(key[:0], loc, id)
	k, v := c.Seek(key)
	if !bytes.Equal(k, key) {
		return nil, false, damagef("card %q of the id index is missing", id)
	}
	return v, true, nil
}

// Generation is the id of the import that wrote this catalogue.
func (db *DB) Generation() string { return db.info.Generation }

// Sizes returns the bytes of pages each part of the file takes: "sets",
// "cards" and, for search, "numbers" and "postings".
func (db *DB) Sizes() (map[string]int64, error) {
	sizes := make(map[string]int64)
	err := db.view(func(tx *bolt.Tx) error {
		return tx.ForEach(func(name []byte, b *bolt.Bucket) error {
			s := b.Stats()
			sizes[string(name)] = int64(s.BranchAlloc + s.LeafAlloc)
			return nil
		})
	})
	return sizes, err
}
