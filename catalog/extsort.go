package catalog

import (
	"bufio"
	"bytes"
	"container/heap"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"slices"
)

// sorter orders key/value entries with bounded memory: it keeps up to limit
// bytes in memory, spills each full buffer as a sorted run to a temporary
// file in dir, and merges the runs at the end. Bulk loading bbolt in key
// order writes each page once; random order would rewrite pages over and
// over.
type sorter struct {
	dir     string
	limit   int
	size    int
	entries []sortEntry
	runs    []*os.File
}

type sortEntry struct{ key, value []byte }

func newSorter(dir string, limit int) *sorter { return &sorter{dir: dir, limit: limit} }

// add takes ownership of key and value.
func (s *sorter) add(key, value []byte) error {
	s.entries = append(s.entries, sortEntry{key, value})
	s.size += len(key) + len(value) + 64
	if s.size >= s.limit {
		return s.spill()
	}
	return nil
}

func (s *sorter) sortBuffer() {
	slices.SortFunc(s.entries, func(a, b sortEntry) int { return bytes.Compare(a.key, b.key) })
}

func (s *sorter) spill() error {
	s.sortBuffer()
	f, err := os.CreateTemp(s.dir, ".catalogd-sort-*")
	if err != nil {
		return fmt.Errorf("create sort run: %w", err)
	}
	// The run is unlinked at once: it lives as long as the open file, so an
	// interrupted import leaves nothing behind.
	_ = os.Remove(f.Name())
	s.runs = append(s.runs, f)
	w := bufio.NewWriterSize(f, 1<<20)
	var hdr [2 * binary.MaxVarintLen64]byte
	for _, e := range s.entries {
		n := binary.PutUvarint(hdr[:], uint64(len(e.key)))
		n += binary.PutUvarint(hdr[n:], uint64(len(e.value)))
		w.Write(hdr[:n])
		w.Write(e.key)
		w.Write(e.value)
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("write sort run %s: %w", f.Name(), err)
	}
	clear(s.entries)
	s.entries = s.entries[:0]
	s.size = 0
	return nil
}

// each calls fn for every entry in key order. The slices passed to fn are
// valid only until fn returns.
func (s *sorter) each(fn func(key, value []byte) error) error {
	if len(s.runs) == 0 {
		s.sortBuffer()
		for _, e := range s.entries {
			if err := fn(e.key, e.value); err != nil {
				return err
			}
		}
		return nil
	}
	if len(s.entries) > 0 {
		if err := s.spill(); err != nil {
			return err
		}
	}
	h := make(runHeap, 0, len(s.runs))
	for _, f := range s.runs {
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return fmt.Errorf("rewind sort run: %w", err)
		}
		r := &runReader{r: bufio.NewReaderSize(f, 256<<10)}
		ok, err := r.next()
		if err != nil {
			return err
		}
		if ok {
			h = append(h, r)
		}
	}
	heap.Init(&h)
	for len(h) > 0 {
		r := h[0]
		if err := fn(r.key, r.value); err != nil {
			return err
		}
		ok, err := r.next()
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
	for _, f := range s.runs {
		f.Close()
	}
	s.runs = nil
	s.entries = nil
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

type runHeap []*runReader

func (h runHeap) Len() int           { return len(h) }
func (h runHeap) Less(i, j int) bool { return bytes.Compare(h[i].key, h[j].key) < 0 }
func (h runHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *runHeap) Push(x any)        { *h = append(*h, x.(*runReader)) }
func (h *runHeap) Pop() any {
	old := *h
	r := old[len(old)-1]
	*h = old[:len(old)-1]
	return r
}
