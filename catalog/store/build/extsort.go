package build

import (
	"bufio"
	"bytes"
	"cmp"
	"container/heap"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"slices"
	"unsafe"
)

// sorter orders key/value entries with bounded memory: it keeps up to limit
// bytes of entries (keys, values and their index) in memory, spills them
// as sorted runs to temporary files in dir, and merges the runs at the
// end. Bulk loading bbolt in key order writes each page once; random order
// would rewrite pages over and over.
//
// The memory is two buffers of half the limit each: while one is sorted
// and written on a goroutine of its own, the caller fills the other. Most
// of the import's last steps are one goroutine feeding a sort, so the
// second core does the sorting.
//
// The buffered entries live back to back in one byte slice and are sorted
// through an index of offsets: no allocation per entry, and nothing in the
// buffer for the garbage collector to scan.
type sorter struct {
	dir     string
	limit   int // bytes of the two buffers together
	sortBuf     // the buffer being filled
	runs    sortedRuns
	// spilling, when a buffer is being spilled, receives it back once it
	// is written and its run added to runs, with the error of either.
	// Only the spill's goroutine reads or changes runs meanwhile.
	spilling chan spilled
}

// sortBuf is a buffer of entries.
type sortBuf struct {
	data  []byte    // keys and values of the buffered entries
	index []sortRef // one per buffered entry
}

// spilled is a buffer the spill's goroutine is done with.
type spilled struct {
	sortBuf
	err error
}

// mergeFanIn is how many runs of one level a sort merges into one run of the
// next level: a spilled buffer is a run of level 0, and as soon as there
// are mergeFanIn runs of one level they are merged, so that no level ever
// holds more than mergeFanIn-1. The merge at the end reads every run
// through a buffer of its own and holds each file open; with runs merged
// this way their number grows by mergeFanIn-1 each time the input grows
// mergeFanIn-fold (about 60 for a terabyte spilled 16 MiB at a time), and
// each entry is written once more for each such fold.
const mergeFanIn = 16

// compactBufSize is the read buffer of each run while runs are merged
// into one.
const compactBufSize = 64 << 10

// sortedRuns are the runs of a sort, oldest first, with the level of each.
// Merging keeps the runs in order: a merged run takes the place of the
// newest runs it replaces, so a run holds only entries added after those
// of every run before it.
type sortedRuns struct {
	fanIn  int // runs merged at once: mergeFanIn, or the Writer's limits
	files  []*os.File
	levels []int
}

// add appends f, a run of level 0, and merges the newest runs through
// merge, which closes them, for as long as the newest fanIn are of one
// level. Levels never rise from oldest to newest, so the newest fanIn are
// of one level when the first and the last of them are.
func (r *sortedRuns) add(f *os.File, merge func(runs []*os.File) (*os.File, error)) error {
	r.files, r.levels = append(r.files, f), append(r.levels, 0)
	for n := len(r.files); r.fanIn > 1 && n >= r.fanIn && r.levels[n-r.fanIn] == r.levels[n-1]; n = len(r.files) {
		merged, err := merge(r.files[n-r.fanIn:])
		if err != nil {
			return err
		}
		level := r.levels[n-1] + 1
		r.files, r.levels = append(r.files[:n-r.fanIn], merged), append(r.levels[:n-r.fanIn], level)
	}
	return nil
}

// close closes the runs.
func (r *sortedRuns) close() {
	for _, f := range r.files {
		f.Close()
	}
	r.files, r.levels = nil, nil
}

// sortRef locates one buffered entry in data. prefix holds the first eight
// bytes of the key, so that most comparisons never read data.
type sortRef struct {
	prefix     uint64
	off        uint32
	klen, vlen uint32
}

func newSorter(dir string, limit int) *sorter {
	return &sorter{dir: dir, limit: limit, runs: sortedRuns{fanIn: mergeFanIn}}
}

// sortRefSize is the memory of one sortRef.
const sortRefSize = int(unsafe.Sizeof(sortRef{}))

// add copies key and value into the sorter.
func (s *sorter) add(key, value []byte) error {
	n, limit := len(key)+len(value), s.limit/2
	if len(s.index) > 0 && len(s.data)+n+(len(s.index)+1)*sortRefSize > limit {
		if err := s.spill(); err != nil {
			return err
		}
	}
	if need := len(s.data) + n; need > cap(s.data) {
		// Grow in steps up to the limit rather than allocating it all for
		// a small catalogue.
		c := min(max(2*cap(s.data), 1<<20, need), max(limit, need))
		s.data = append(make([]byte, 0, c), s.data...)
	}
	off := len(s.data)
	s.data = append(append(s.data, key...), value...)
	s.index = append(s.index, sortRef{prefix: keyPrefix(key), off: uint32(off), klen: uint32(len(key)), vlen: uint32(len(value))})
	return nil
}

func keyPrefix(key []byte) uint64 {
	var b [8]byte
	copy(b[:], key)
	return binary.BigEndian.Uint64(b[:])
}

func (b *sortBuf) key(r *sortRef) []byte { return b.data[r.off : r.off+r.klen] }

func (b *sortBuf) value(r *sortRef) []byte {
	return b.data[r.off+r.klen : r.off+r.klen+r.vlen]
}

func (b *sortBuf) sort() {
	slices.SortFunc(b.index, func(x, y sortRef) int {
		if c := cmp.Compare(x.prefix, y.prefix); c != 0 {
			return c
		}
		return bytes.Compare(b.key(&x), b.key(&y))
	})
}

// spill hands the buffer to a goroutine that sorts it and writes it as a
// run, once the spill before it is done, and goes on with that spill's
// buffer, emptied.
func (s *sorter) spill() error {
	free, err := s.waitSpill()
	if err != nil {
		return err
	}
	full := s.sortBuf
	s.data, s.index = free.data[:0], free.index[:0]
	done := make(chan spilled, 1)
	s.spilling = done
	go func() { done <- spilled{full, s.writeRun(&full)} }()
	return nil
}

// waitSpill waits for the spill in flight, if any, and returns its buffer.
func (s *sorter) waitSpill() (sortBuf, error) {
	if s.spilling == nil {
		return sortBuf{}, nil
	}
	done := <-s.spilling
	s.spilling = nil
	return done.sortBuf, done.err
}

// writeRun sorts b, writes it as a run and adds the run to s.runs.
func (s *sorter) writeRun(b *sortBuf) error {
	b.sort()
	f, w, err := createRun(s.dir, ".catalogd-sort-*")
	if err != nil {
		return err
	}
	for i := range b.index {
		r := &b.index[i]
		writeEntry(w, b.key(r), b.value(r))
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("write sort run %s: %w", f.Name(), err)
	}
	return s.runs.add(f, func(runs []*os.File) (*os.File, error) {
		return compactRuns(s.dir, ".catalogd-sort-*", runs, newRunReader, lessRun,
			func(w *bufio.Writer, r *runReader) { writeEntry(w, r.key, r.value) })
	})
}

// createRun creates a temporary file for a run in dir, and its writer. The
// file is unlinked at once: it lives as long as it is open, so an
// interrupted import leaves nothing behind.
func createRun(dir, pattern string) (*os.File, *bufio.Writer, error) {
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return nil, nil, fmt.Errorf("create a sorted run: %w", err)
	}
	_ = os.Remove(f.Name())
	return f, bufio.NewWriterSize(f, 1<<20), nil
}

// writeEntry writes one entry of a run: the lengths of key and value, then
// both. A write error stays in w for its Flush.
func writeEntry(w *bufio.Writer, key, value []byte) {
	var hdr [2 * binary.MaxVarintLen64]byte
	n := binary.PutUvarint(hdr[:], uint64(len(key)))
	n += binary.PutUvarint(hdr[n:], uint64(len(value)))
	w.Write(hdr[:n])
	w.Write(key)
	w.Write(value)
}

// compactRuns merges runs, in the order less gives, into one new run in
// dir that write writes entry by entry, and closes them.
func compactRuns[C runCursor](dir, pattern string, runs []*os.File, open func(run int, r *bufio.Reader) C, less func(a, b C) bool, write func(w *bufio.Writer, c C)) (*os.File, error) {
	f, w, err := createRun(dir, pattern)
	if err != nil {
		return nil, err
	}
	err = mergeSortedRuns(runs, compactBufSize, open, less, func(c C) error {
		write(w, c)
		return nil
	})
	if err == nil {
		err = w.Flush()
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("merge sorted runs: %w", err)
	}
	for _, r := range runs {
		r.Close()
	}
	return f, nil
}

// each calls fn for every entry in key order. The slices passed to fn are
// valid only until fn returns. The sorter is spent afterwards.
func (s *sorter) each(fn func(key, value []byte) error) error {
	if s.spilling == nil && len(s.runs.files) == 0 {
		s.sort()
		for i := range s.index {
			r := &s.index[i]
			if err := fn(s.key(r), s.value(r)); err != nil {
				return err
			}
		}
		return nil
	}
	if len(s.index) > 0 {
		if err := s.spill(); err != nil {
			return err
		}
	}
	if _, err := s.waitSpill(); err != nil {
		return err
	}
	// The buffers are no longer needed: free them for what fn builds.
	s.data, s.index = nil, nil
	return mergeSortedRuns(s.runs.files, 256<<10, newRunReader, lessRun,
		func(r *runReader) error { return fn(r.key, r.value) })
}

func newRunReader(_ int, r *bufio.Reader) *runReader { return &runReader{r: r} }

func lessRun(a, b *runReader) bool { return bytes.Compare(a.key, b.key) < 0 }

// runCursor reads the entries of one run in order.
type runCursor interface {
	// next moves to the next entry; false at the end of the run.
	next() (bool, error)
}

// mergeSortedRuns merges sorted runs: it rewinds each file, reads it through a
// cursor that open makes on a buffer of bufSize, and calls emit with the
// cursor whose entry is the least by less, until every run is spent.
func mergeSortedRuns[C runCursor](runs []*os.File, bufSize int, open func(run int, r *bufio.Reader) C, less func(a, b C) bool, emit func(C) error) error {
	h := runHeap[C]{less: less}
	for i, f := range runs {
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return fmt.Errorf("rewind a sorted run: %w", err)
		}
		c := open(i, bufio.NewReaderSize(f, bufSize))
		ok, err := c.next()
		if err != nil {
			return err
		}
		if ok {
			h.cursors = append(h.cursors, c)
		}
	}
	heap.Init(&h)
	for len(h.cursors) > 0 {
		c := h.cursors[0]
		if err := emit(c); err != nil {
			return err
		}
		ok, err := c.next()
		if err != nil {
			return err
		}
		if ok {
			heap.Fix(&h, 0)
		} else {
			heap.Pop(&h)
		}
	}
	return nil
}

// close releases the runs.
func (s *sorter) close() {
	_, _ = s.waitSpill() // its error was returned, or the sort is abandoned
	s.runs.close()
	s.data, s.index = nil, nil
}

type runReader struct {
	r          *bufio.Reader
	key, value []byte
}

func (r *runReader) next() (bool, error) {
	klen, err := binary.ReadUvarint(r.r)
	if err == io.EOF {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read sort run: %w", err)
	}
	vlen, err := binary.ReadUvarint(r.r)
	if err != nil {
		return false, fmt.Errorf("read sort run: %w", err)
	}
	r.key = slices.Grow(r.key[:0], int(klen))[:klen]
	r.value = slices.Grow(r.value[:0], int(vlen))[:vlen]
	if _, err := io.ReadFull(r.r, r.key); err != nil {
		return false, fmt.Errorf("read sort run: %w", err)
	}
	if _, err := io.ReadFull(r.r, r.value); err != nil {
		return false, fmt.Errorf("read sort run: %w", err)
	}
	return true, nil
}

// runHeap orders the cursors of runs by their entries.
type runHeap[C runCursor] struct {
	cursors []C
	less    func(a, b C) bool
}

func (h *runHeap[C]) Len() int { return len(h.cursors) }

func (h *runHeap[C]) Less(i, j int) bool { return h.less(h.cursors[i], h.cursors[j]) }

func (h *runHeap[C]) Swap(i, j int) { h.cursors[i], h.cursors[j] = h.cursors[j], h.cursors[i] }

func (h *runHeap[C]) Push(x any) { h.cursors = append(h.cursors, x.(C)) }

func (h *runHeap[C]) Pop() any {
	c := h.cursors[len(h.cursors)-1]
	h.cursors = h.cursors[:len(h.cursors)-1]
	return c
}
