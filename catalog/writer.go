package catalog

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	bolt "go.etcd.io/bbolt"
)

// Writer builds a new catalogue file in one pass. It is for the importer:
// records go in as they are decoded, and Finish writes what can only be
// written once every record is known. A Writer is not safe for concurrent
// use.
type Writer struct {
	db   *bolt.DB
	path string
	tx   *bolt.Tx

	txBytes int // bytes put since the last commit

	cards    *bolt.Bucket
	setCards *bolt.Bucket
	curSet   []byte       // name of the set sub-bucket last written
	curSetB  *bolt.Bucket // and the bucket itself, in the current transaction

	sets       map[string]*Set  // by id
	setsByCode map[string]*Set  // by setCardsBucket(zone, code)
	cardTotals map[string]int64 // by setCardsBucket(zone, code)
	zoneCards  [3]int64

	numbers *sorter
	buf     []byte
	// held keeps the keys and values of the current transaction: bbolt
	// holds on to the slices given to Put until the transaction commits,
	// so buffers that are reused must be copied first.
	held arena
}

// commitEvery bounds the memory of one write transaction: bbolt keeps every
// dirty page of a transaction in memory until it commits.
const commitEvery = 16 << 20

// sortMemory bounds the memory of the search index sort before it spills to
// disk.
const sortMemory = 32 << 20

// Create starts a new catalogue file at path, which must not exist. The
// file is written without fsync until Finish, which syncs it once; a file
// that Finish did not complete is not a catalogue and Abort removes it.
func Create(path string) (*Writer, error) {
	if _, err := os.Lstat(path); err == nil {
		return nil, fmt.Errorf("create catalogue %s: file exists", path)
	}
	db, err := bolt.Open(path, 0o644, &bolt.Options{
		NoSync:         true,
		NoFreelistSync: true,
		FreelistType:   bolt.FreelistMapType,
		NoGrowSync:     true,
	})
	if err != nil {
		return nil, fmt.Errorf("create catalogue %s: %w", path, err)
	}
	w := &Writer{
		db:         db,
		path:       path,
		sets:       make(map[string]*Set),
		setsByCode: make(map[string]*Set),
		cardTotals: make(map[string]int64),
		numbers:    newSorter(filepath.Dir(path), sortMemory),
	}
	if err := w.begin(); err != nil {
		w.Abort()
		return nil, err
	}
	return w, nil
}

func (w *Writer) begin() error {
	tx, err := w.db.Begin(true)
	if err != nil {
		return fmt.Errorf("write catalogue %s: %w", w.path, err)
	}
	w.tx = tx
	for _, name := range [][]byte{bucketMeta, bucketSets, bucketCards, bucketSetCards, bucketNumbers, bucketPostings} {
		if _, err := tx.CreateBucketIfNotExists(name); err != nil {
			return fmt.Errorf("write catalogue %s: bucket %s: %w", w.path, name, err)
		}
	}
	// bbolt splits the nodes a transaction touched only when it commits;
	// filling pages whole then leaves half as many as the default, and the
	// file is never written to again.
	w.cards = tx.Bucket(bucketCards)
	w.cards.FillPercent = 1.0
	w.setCards = tx.Bucket(bucketSetCards)
	w.setCards.FillPercent = 1.0
	w.curSet, w.curSetB = nil, nil
	w.txBytes = 0
	return nil
}

// commit ends the current transaction and, unless last, starts the next.
func (w *Writer) commit(last bool) error {
	if err := w.tx.Commit(); err != nil {
		w.tx = nil
		return fmt.Errorf("write catalogue %s: commit: %w", w.path, err)
	}
	w.tx = nil
	w.held.reset()
	if last {
		return nil
	}
	return w.begin()
}

func (w *Writer) put(b *bolt.Bucket, key, value []byte) error {
	if err := b.Put(w.held.copy(key), w.held.copy(value)); err != nil {
		return fmt.Errorf("write catalogue %s: %w", w.path, err)
	}
	w.txBytes += len(key) + len(value)
	return nil
}

func (w *Writer) maybeCommit() error {
	if w.txBytes < commitEvery {
		return nil
	}
	return w.commit(false)
}

// DuplicateError is a record that repeats a value that must be unique.
type DuplicateError struct {
	Field string // "id" or "code"
	Value string
}

func (e *DuplicateError) Error() string {
	return fmt.Sprintf("%s %q is not unique", e.Field, e.Value)
}

// Is makes errors.Is(err, ErrDuplicate) hold.
func (e *DuplicateError) Is(target error) bool { return target == ErrDuplicate }

// AddSet adds a validated set. It returns a *DuplicateError when the id or
// the (zone, code) pair is already in the catalogue.
func (w *Writer) AddSet(s Set) error {
	if _, ok := w.sets[s.ID]; ok {
		return &DuplicateError{"id", s.ID}
	}
	key := string(setCardsBucket(s.Zone, s.Code))
	if _, ok := w.setsByCode[key]; ok {
		return &DuplicateError{"code", s.Code}
	}
	w.sets[s.ID] = &s
	w.setsByCode[key] = &s
	return nil
}

// SetName returns the name of the set (zone, code) added so far, if any.
func (w *Writer) SetName(zone, code string) (string, bool) {
	s, ok := w.setsByCode[string(setCardsBucket(zone, code))]
	if !ok {
		return "", false
	}
	return s.Name, true
}

// AddCard adds a validated card. It returns a *DuplicateError when the id
// is already in the catalogue. That the card's set exists is the caller's
// to check, once every set is known.
func (w *Writer) AddCard(c *Card) error {
	id := []byte(c.ID)
	if w.cards.Get(id) != nil {
		return &DuplicateError{"id", c.ID}
	}
	w.buf = c.AppendJSON(w.buf[:0])
	if err := w.put(w.cards, id, w.buf); err != nil {
		return err
	}

	setName := setCardsBucket(c.Zone, c.SetCode)
	if w.curSetB == nil || string(setName) != string(w.curSet) {
		b, err := w.setCards.CreateBucketIfNotExists(setName)
		if err != nil {
			return fmt.Errorf("write catalogue %s: set bucket %q: %w", w.path, c.SetCode, err)
		}
		b.FillPercent = 1.0
		w.curSet, w.curSetB = setName, b
	}
	numberKey := NumberKey(c.Number)
	key := append(slices.Clip(numberKey), id...)
	if err := w.put(w.curSetB, key, w.buf); err != nil {
		return err
	}
	w.cardTotals[string(setName)]++
	w.zoneCards[ZoneIndex(c.Zone)]++

	if err := w.numbers.add(key, appendIndexEntry(nil, c)); err != nil {
		return fmt.Errorf("write catalogue %s: search index: %w", w.path, err)
	}
	return w.maybeCommit()
}

// Finish writes the sets, the search index and info, syncs the file and
// closes it. The Writer is done with either way.
func (w *Writer) Finish(info Info) (_ Info, err error) {
	defer func() {
		if err != nil {
			w.Abort()
		}
	}()
	defer w.numbers.close()

	if err := w.writeIndex(); err != nil {
		return info, err
	}

	sets := w.tx.Bucket(bucketSets)
	sets.FillPercent = 1.0
	var zoneSets [3]int64
	for id, s := range w.sets {
		total := w.cardTotals[string(setCardsBucket(s.Zone, s.Code))]
		w.buf = binary.BigEndian.AppendUint64(w.buf[:0], uint64(total))
		w.buf = s.AppendJSON(w.buf)
		if err := w.put(sets, []byte(id), w.buf); err != nil {
			return info, err
		}
		zoneSets[ZoneIndex(s.Zone)]++
	}

	info.Zones = info.Zones[:0]
	for i, z := range Zones() {
		info.Zones = append(info.Zones, ZoneCount{Zone: z, Sets: zoneSets[i], Cards: w.zoneCards[i]})
	}
	infoJSON, err := json.Marshal(info)
	if err != nil {
		return info, fmt.Errorf("write catalogue %s: info: %w", w.path, err)
	}
	meta := w.tx.Bucket(bucketMeta)
	if err := w.put(meta, keyInfo, infoJSON); err != nil {
		return info, err
	}
	if err := w.put(meta, keyFormat, []byte(formatVersion)); err != nil {
		return info, err
	}
	if err := w.commit(true); err != nil {
		return info, err
	}
	if err := w.db.Sync(); err != nil {
		return info, fmt.Errorf("sync catalogue %s: %w", w.path, err)
	}
	if err := w.db.Close(); err != nil {
		return info, fmt.Errorf("close catalogue %s: %w", w.path, err)
	}
	w.db = nil
	return info, nil
}

// Abort discards the file being written.
func (w *Writer) Abort() {
	if w.tx != nil {
		_ = w.tx.Rollback()
		w.tx = nil
	}
	if w.db != nil {
		_ = w.db.Close()
		w.db = nil
	}
	w.numbers.close()
	// A file left behind is harmless: it is never the catalogue.
	_ = os.Remove(w.path)
}

// writeIndex writes the search index entries in result order, numbering
// them, and the posting lists of those numbers.
func (w *Writer) writeIndex() error {
	postings := newPostingBuilder()
	var ord uint32
	var key [4]byte
	err := w.numbers.each(func(_, value []byte) error {
		e, err := decodeIndexEntry(value)
		if err != nil {
			return fmt.Errorf("write catalogue %s: search index: %w", w.path, err)
		}
		postings.addCard(ord, &e)
		binary.BigEndian.PutUint32(key[:], ord)
		ord++
		return w.putOrdered(bucketNumbers, key[:], value)
	})
	if err != nil {
		return err
	}
	return postings.each(func(key, value []byte) error {
		return w.putOrdered(bucketPostings, key, value)
	})
}

// putOrdered puts into a bucket whose keys arrive in order, committing as
// the transaction grows.
func (w *Writer) putOrdered(bucket, key, value []byte) error {
	b := w.tx.Bucket(bucket)
	b.FillPercent = 1.0
	if err := w.put(b, key, value); err != nil {
		return err
	}
	if w.txBytes >= commitEvery {
		return w.commit(false)
	}
	return nil
}

// appendIndexEntry encodes what search needs of a card without reading the
// card: zone, id, set code, normalized number and folded name.
func appendIndexEntry(dst []byte, c *Card) []byte {
	dst = append(dst, byte(ZoneIndex(c.Zone)))
	dst = binary.AppendUvarint(dst, uint64(len(c.ID)))
	dst = append(dst, c.ID...)
	dst = binary.AppendUvarint(dst, uint64(len(c.SetCode)))
	dst = append(dst, c.SetCode...)
	norm := NormalizeNumber(c.Number)
	dst = binary.AppendUvarint(dst, uint64(len(norm)))
	dst = append(dst, norm...)
	return append(dst, Fold(c.Name)...)
}

// arena hands out copies of byte slices from large chunks, which are reused
// once the transaction that held them has committed.
type arena struct {
	used [][]byte // chunks handed out in this transaction
	free [][]byte
	cur  []byte
}

const arenaChunk = 1 << 20

func (a *arena) copy(b []byte) []byte {
	if len(b) > arenaChunk/4 {
		return append([]byte(nil), b...)
	}
	if cap(a.cur)-len(a.cur) < len(b) {
		if a.cur != nil {
			a.used = append(a.used, a.cur)
		}
		if n := len(a.free); n > 0 {
			a.cur, a.free = a.free[n-1][:0], a.free[:n-1]
		} else {
			a.cur = make([]byte, 0, arenaChunk)
		}
	}
	n := len(a.cur)
	a.cur = append(a.cur, b...)
	return a.cur[n:len(a.cur):len(a.cur)]
}

// reset makes every chunk free again; nothing may use the copies after it.
func (a *arena) reset() {
	if a.cur != nil {
		a.used = append(a.used, a.cur)
		a.cur = nil
	}
	a.free = append(a.free, a.used...)
	a.used = a.used[:0]
}
