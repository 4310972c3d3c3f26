package build

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/catalogd/catalogd/catalog"
	"github.com/catalogd/catalogd/catalog/store/internal/layout"
	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

// Writer builds a new catalogue file in one pass. It is for the importer:
// records go in as they are decoded, and Finish writes what can only be
// written once every record is known. A Writer is not safe for concurrent
// use.
type Writer struct {
	db   *bolt.DB
	path string
	tx   *bolt.Tx
	// interrupted is Finish's context's Err, which each commit but the
	// last asks; nil before Finish.
	interrupted func() error

	limits        Limits
	txBytes       int   // bytes put or pending since the last commit
	txNodes       int64 // pages changed since the last commit, as last counted (see nodes)
	putsUncounted int   // puts since that count

	// The cards added since the last commit. They are put when it ends,
	// sorted by key, in as many transactions as the pages they change
	// take (see flushCards); pendingIDs finds them by the hash of their
	// id, so that a duplicate id is caught at once.
	pending    []pendingCard
	spare      []pendingCard    // as long as pending, for sorting it
	pendingIDs map[uint64]int32 // index into pending of the first card with that hash
	seed       maphash.Seed
	ids        *bolt.Cursor // on the cards bucket, for the ids of earlier transactions

	// The sets are put as they come; what is known of them only once
	// every card goes through sorters: runCounts holds the number of
	// cards of each run of cards of one set (key: the set prefix) and the
	// bytes of their JSON,
	// setOrder each set under its place in the list of sets, cardKeys
	// the key of every card, for the marks of pages (see pages.go).
	runCounts *sorter
	setOrder  *sorter
	cardKeys  *sorter
	runSet    []byte // the set prefix of the run of cards being added
	runCount  int64
	runBytes  int64
	named     struct { // the set SetName found last: cards come by set
		key  []byte
		name string
	}
	zoneSets  [3]int64
	zoneCards [3]int64
	nameGrams bool // whether the names' grams have runs (writeCompletions)

	lastRef      deferredRef // see setrefs.go
	refNamed     []byte      // the reference being deferred (deferredRef.named)
	deferredRefs uint64      // references DeferSetCheck has put

	prev       Previous // the catalogue this one replaces, when Follow was called
	keep       int      // the steps of history to keep
	unfollowed error    // why prev could not be compared after all

	numbers   *sorter
	entries   *entrySort   // puts the cards' entries into numbers, until Finish
	cardNames cardNameSort // the cards' names, which autocomplete counts (completions.go)
	// The dictionary's words, forward and backward (words.go).
	words, wordsBackward *sorter
	sortKey              []byte // of the card being added in numbers
	longestName          int    // bytes of the longest search text
	folded               map[string]catalog.IndexText
	foldedBytes          int // of the names and texts in folded
	textKey              []byte
	groups               nameGroups
	buf                  []byte
	key                  []byte
	number               []byte // the NumberKey of the card being added
	entry                []byte
	// held keeps the values of the current transaction, and the keys of
	// its pending cards: bbolt holds on to the value given to Put until
	// the transaction commits (it copies the key), so buffers that are
	// reused must be copied first.
	held arena
}

// pendingCard is a card not yet put. key is its key in the cards bucket,
// which ends with its id; json its value.
type pendingCard struct {
	key   []byte
	json  []byte
	idLen int
}

func (p *pendingCard) id() []byte { return p.key[len(p.key)-p.idLen:] }

func (p *pendingCard) locator() []byte { return p.key[:len(p.key)-p.idLen] }

// initialMmapSize is the address space the Writer maps at once. Each time
// bbolt outgrows its mapping it copies every key and value of the open
// transaction to the heap before it maps again, doubling from 32 KiB: a
// mapping that starts large makes that happen never for a catalogue under
// 1 GiB, and once a GiB above it. Mapping costs address space only; the
// file grows with what is written.
// On 32-bit platforms, whose address space is scarce, it is left to bbolt.
const initialMmapSize = strconv.IntSize / 64 << 30

// foldCacheSize and foldCacheBytes bound the names whose catalog.Fold the Writer
// remembers, in number and in bytes of names and folds: names repeat (every
// printing of a card, every language of a zone), and folding a name that is
// not ASCII costs microseconds. Names are as long as a snapshot makes them.
const (
	foldCacheSize  = 1 << 16
	foldCacheBytes = 8 << 20
)

// Create starts a new catalogue file at path, which must not exist. The
// file is written without fsync until Finish, which syncs it once; a file
// that Finish did not complete is not a catalogue and Abort removes it, as
// Create does when it fails.
func Create(path string) (*Writer, error) { return CreateWith(path, DefaultLimits()) }

// CreateWith is Create with the limits l.
func CreateWith(path string, l Limits) (*Writer, error) {
	// The file is created here, exclusively, so that it is this Writer's
	// to remove: a file someone else put at path, even after a check that
	// there was none, is refused, never opened and never removed.
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("create catalogue %s: file exists", path)
	}
	if err != nil {
		return nil, fmt.Errorf("create catalogue %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		os.Remove(path)
		return nil, fmt.Errorf("create catalogue %s: %w", path, err)
	}
	// bbolt initialises an empty file as it does one it creates; it can
	// fail doing so, on a full disk, say.
	db, err := bolt.Open(path, 0o644, &bolt.Options{
		NoSync:          true,
		NoFreelistSync:  true,
		FreelistType:    bolt.FreelistMapType,
		NoGrowSync:      true,
		InitialMmapSize: initialMmapSize,
	})
	if err != nil {
		os.Remove(path)
		return nil, fmt.Errorf("create catalogue %s: %w", path, err)
	}
	w := &Writer{
		db:            db,
		path:          path,
		limits:        l,
		pendingIDs:    make(map[uint64]int32),
		seed:          maphash.MakeSeed(),
		runCounts:     newSorter(filepath.Dir(path), l.SetSort),
		setOrder:      newSorter(filepath.Dir(path), l.SetSort),
		cardKeys:      newSorter(filepath.Dir(path), l.SetSort),
		numbers:       newSorter(filepath.Dir(path), sortMemory),
		cardNames:     cardNameSort{sorter: newSorter(filepath.Dir(path), sortMemory)},
		words:         newSorter(filepath.Dir(path), wordSortMemory),
		wordsBackward: newSorter(filepath.Dir(path), wordSortMemory),
		folded:        make(map[string]catalog.IndexText),
	}
	w.numbers.runs.fanIn = l.MergeFanIn
	if err := w.begin(); err != nil {
		w.Abort()
		return nil, err
	}
	w.entries = w.startEntrySort()
	return w, nil
}

// ErrDuplicate means a record repeats an id or a (zone, code) pair.
var ErrDuplicate = errors.New("duplicate")

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
func (w *Writer) AddSet(s catalog.Set) error {
	sets, codes := w.tx.Bucket(layout.BucketSets), w.tx.Bucket(layout.BucketSetCodes)
	if sets.Get([]byte(s.ID)) != nil {
		return &DuplicateError{"id", s.ID}
	}
	w.key = layout.AppendSetCodeKey(w.key[:0], layout.ZoneByte(s.Zone), s.Code)
	if codes.Get(w.key) != nil {
		return &DuplicateError{"code", s.Code}
	}
	if err := w.put(codes, w.key, []byte(s.ID)); err != nil {
		return err
	}
	w.buf = layout.AppendSetValue(w.buf[:0], &s, 0) // the total comes in Finish
	if err := w.put(sets, []byte(s.ID), w.buf); err != nil {
		return err
	}
	w.key = layout.AppendSetListKey(w.key[:0], &s)
	w.buf = binary.AppendUvarint(append(w.buf[:0], layout.ZoneByte(s.Zone)), uint64(len(s.ID)))
	w.buf = s.AppendJSON(append(w.buf, s.ID...))
	if err := w.setOrder.add(w.key, w.buf); err != nil {
		return fmt.Errorf("write catalogue %s: sets: %w", w.path, err)
	}
	w.zoneSets[catalog.ZoneIndex(s.Zone)]++
	return w.maybeCommit()
}

// SetName returns the name of the set (zone, code) added so far, if any.
func (w *Writer) SetName(zone, code string) (string, bool) {
	w.key = layout.AppendSetCodeKey(w.key[:0], layout.ZoneByte(zone), code)
	if w.named.key != nil && bytes.Equal(w.key, w.named.key) {
		return w.named.name, true
	}
	id := w.tx.Bucket(layout.BucketSetCodes).Get(w.key)
	if id == nil {
		return "", false
	}
	s, err := layout.ReadStoredSet(w.tx.Bucket(layout.BucketSets).Get(id))
	if err != nil {
		return "", false
	}
	set, err := s.Set()
	if err != nil {
		return "", false
	}
	w.named.key, w.named.name = append(w.named.key[:0], w.key...), set.Name
	return set.Name, true
}

// AddCard adds a validated card. It returns a *DuplicateError when the id
// is already in the catalogue. That the card's set exists is the caller's
// to check, once every set is known.
func (w *Writer) AddCard(c *catalog.Card) error {
	h := maphash.String(w.seed, c.ID)
	if w.hasCard(h, c.ID) {
		return &DuplicateError{"id", c.ID}
	}
	w.number = catalog.AppendNumberKey(w.number[:0], c.Number)
	w.key = layout.AppendCardKey(w.key[:0], layout.ZoneByte(c.Zone), c.SetCode, w.number, c.ID)
	numberLen := len(w.number)
	setLen := len(w.key) - len(c.ID) - numberLen
	if len(w.key) > bolt.MaxKeySize {
		return fmt.Errorf("write catalogue %s: card %q: %w", w.path, c.ID, bolterrors.ErrKeyTooLarge)
	}
	w.buf = c.AppendJSON(w.buf[:0])
	key := w.held.copy(w.key)
	if _, ok := w.pendingIDs[h]; !ok {
		w.pendingIDs[h] = int32(len(w.pending))
	}
	w.pending = append(w.pending, pendingCard{key: key, json: w.held.copy(w.buf), idLen: len(c.ID)})
	w.txBytes += 2*len(key) + len(w.buf)

	if !bytes.Equal(key[:setLen], w.runSet) {
		if err := w.endRun(); err != nil {
			return err
		}
		w.runSet = append(w.runSet[:0], key[:setLen]...)
	}
	w.runCount++
	w.runBytes += int64(len(w.buf))
	w.zoneCards[catalog.ZoneIndex(c.Zone)]++
	if err := w.cardKeys.add(key, nil); err != nil {
		return fmt.Errorf("write catalogue %s: page marks: %w", w.path, err)
	}

	// The index sorts by zone, number key and id: the zone byte, then
	// the card's key without its set.
	w.entry = appendSortedHead(w.entry[:0], c, key[setLen:setLen+numberLen])
	w.sortKey = append(append(w.sortKey[:0], key[0]), key[setLen:]...)
	if err := w.entries.add(w.sortKey, w.entry, c.Name, c.Language); err != nil {
		return err
	}
	return w.maybeCommit()
}

// endRun records the count of the run of cards of one set that ends.
func (w *Writer) endRun() error {
	if w.runCount == 0 {
		return nil
	}
	var run [16]byte
	binary.BigEndian.PutUint64(run[:8], uint64(w.runCount))
	binary.BigEndian.PutUint64(run[8:], uint64(w.runBytes))
	w.runCount, w.runBytes = 0, 0
	if err := w.runCounts.add(w.runSet, run[:]); err != nil {
		return fmt.Errorf("write catalogue %s: sets: %w", w.path, err)
	}
	return nil
}

// hasCard reports whether a card with id, whose hash is h, was added
// before.
func (w *Writer) hasCard(h uint64, id string) bool {
	if i, ok := w.pendingIDs[h]; ok {
		if string(w.pending[i].id()) == id {
			return true
		}
		// Two ids with one hash: look at every pending card.
		for i := range w.pending {
			if string(w.pending[i].id()) == id {
				return true
			}
		}
	}
	w.key = layout.AppendCardIDKey(w.key[:0], id)
	k, _ := w.ids.Seek(w.key)
	return k != nil && bytes.Equal(k, w.key)
}

// flushCards puts the pending cards, their JSON and then their locators,
// each in key order. Keys that arrive
// in order fill pages from left to right; keys in the order of the input
// would land in the middle of nodes that grow until the commit splits them,
// and every insertion would move the rest of the node.
func (w *Writer) flushCards() error {
	if len(w.pending) == 0 {
		return nil
	}
	w.sortPending(func(p *pendingCard) []byte { return p.key })
	for i := range w.pending {
		p := &w.pending[i]
		if err := w.putPending(p.key, p.json, p.id()); err != nil {
			return err
		}
	}
	w.sortPending((*pendingCard).id)
	for i := range w.pending {
		p := &w.pending[i]
		// Put copies the key, not the value.
		w.key = layout.AppendCardIDKey(w.key[:0], p.id())
		if err := w.putPending(w.key, p.locator(), p.id()); err != nil {
			return err
		}
	}
	clear(w.pending)
	w.pending = w.pending[:0]
	clear(w.pendingIDs)
	return nil
}

// sortPending sorts the pending cards by key, which is unique. Cards come
// in runs already in order (a set in printed-number order; ids 1 to 9, then
// 10 to 99), so it merges those runs, not sorting from scratch: a merge of
// two runs that do not overlap, such as two sets, is a copy.
func (w *Writer) sortPending(key func(*pendingCard) []byte) {
	ps := w.pending
	bounds := []int{0}
	for i := 1; i < len(ps); i++ {
		if bytes.Compare(key(&ps[i-1]), key(&ps[i])) > 0 {
			bounds = append(bounds, i)
		}
	}
	bounds = append(bounds, len(ps))
	src, dst := ps, slices.Grow(w.spare[:0], len(ps))[:len(ps)]
	for len(bounds) > 2 {
		merged := bounds[:1]
		for i := 0; i+1 < len(bounds); i += 2 {
			lo, mid, hi := bounds[i], bounds[i+1], bounds[i+1]
			if i+2 < len(bounds) {
				hi = bounds[i+2]
			}
			mergeRuns(dst[lo:hi], src[lo:mid], src[mid:hi], key)
			merged = append(merged, hi)
		}
		bounds = merged
		src, dst = dst, src
	}
	w.pending, w.spare = src, dst
}

// mergeRuns merges the sorted runs a and b into dst.
func mergeRuns(dst, a, b []pendingCard, key func(*pendingCard) []byte) {
	switch {
	case len(b) == 0 || bytes.Compare(key(&a[len(a)-1]), key(&b[0])) < 0:
		copy(dst[copy(dst, a):], b)
		return
	case bytes.Compare(key(&b[len(b)-1]), key(&a[0])) < 0:
		copy(dst[copy(dst, b):], a)
		return
	}
	i, j, k := 0, 0, 0
	for i < len(a) && j < len(b) {
		if bytes.Compare(key(&a[i]), key(&b[j])) < 0 {
			dst[k] = a[i]
			i++
		} else {
			dst[k] = b[j]
			j++
		}
		k++
	}
	k += copy(dst[k:], a[i:])
	copy(dst[k:], b[j:])
}

// Finish writes the sets, the marks of pages, the search index and info,
// syncs the file and closes it. The Writer is done with either way. It
// ends early, with ctx's error and the file removed, once ctx is done:
// writing the index of a large catalogue takes a while, and an
// interrupted import should end at once.
func (w *Writer) Finish(ctx context.Context, info Info) (_ Info, err error) {
	w.interrupted = ctx.Err
	defer func() {
		if err != nil {
			w.Abort()
		}
	}()
	defer w.closeSorters()

	if err := ctx.Err(); err != nil {
		return info, err
	}
	if err := w.entries.wait(); err != nil {
		return info, err
	}
	if err := w.flushCards(); err != nil {
		return info, err
	}
	if err := w.dropSetRefs(); err != nil {
		return info, err
	}
	w.folded = nil
	if err := w.writePageMarks(); err != nil {
		return info, err
	}
	if err := w.writeIndex(); err != nil {
		return info, err
	}
	if err := w.writeCompletions(); err != nil {
		return info, err
	}
	if err := w.endRun(); err != nil {
		return info, err
	}
	if err := w.writeSetTotals(); err != nil {
		return info, err
	}
	if err := w.writeSetLists(); err != nil {
		return info, err
	}
	if err := w.writeChanges(&info); err != nil {
		return info, err
	}

	info.NameGroups = int64(len(w.groups.texts))
	info.Zones = info.Zones[:0]
	for i, z := range catalog.Zones() {
		info.Zones = append(info.Zones, layout.ZoneCount{Zone: z, Sets: w.zoneSets[i], Cards: w.zoneCards[i]})
	}
	infoJSON, err := json.Marshal(info)
	if err != nil {
		return info, fmt.Errorf("write catalogue %s: info: %w", w.path, err)
	}
	meta := w.tx.Bucket(layout.BucketMeta)
	if err := w.put(meta, layout.KeyInfo, infoJSON); err != nil {
		return info, err
	}
	if err := w.put(meta, layout.KeyLongestName, binary.AppendUvarint(nil, uint64(w.longestName))); err != nil {
		return info, err
	}
	if err := w.put(meta, layout.KeyFormat, []byte(layout.FormatVersion)); err != nil {
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
	w.closeSorters()
	// A file left behind is harmless: it is never the catalogue.
	_ = os.Remove(w.path)
}

func (w *Writer) closeSorters() {
	if w.entries != nil {
		w.entries.wait()
	}
	w.numbers.close()
	w.cardNames.close()
	w.words.close()
	w.wordsBackward.close()
	w.runCounts.close()
	w.setOrder.close()
	w.cardKeys.close()
}
