package build

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/catalogd/catalogd/catalog/store/internal/layout"
)

// entrySort puts the cards' index entries into the numbers sort on a
// goroutine of its own, beside the rest of AddCard: a name's search text,
// folded and romanized (searchText), is most of what a card costs the
// import, and needs nothing of the Writer but that sort and the cache of
// recent names, which the goroutine has to itself until Finish
// (docs/BENCHMARKS.md, "Search texts beside the records").
type entrySort struct {
	in     chan []byte // batches of cards, each its sort key, its entry's head, its name and language, uvarint-length-prefixed
	batch  []byte
	closed bool
	done   chan struct{}
	failed atomic.Pointer[error] // the first error, as soon as it happens
}

// entryBatchBytes is the size of a batch of cards handed to the sort.
const entryBatchBytes = 64 << 10

// startEntrySort starts the goroutine that owns w.numbers and w.folded
// until wait returns.
func (w *Writer) startEntrySort() *entrySort {
	s := &entrySort{in: make(chan []byte, 4), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		var entry []byte
		var err error
		for batch := range s.in {
			for len(batch) > 0 && err == nil {
				var f [4][]byte
				for i := range f {
					var ok bool
					if f[i], batch, ok = layout.LengthPrefixed(batch); !ok {
						err = layout.ErrBadEntry
					}
				}
				if err != nil {
					break
				}
				text := w.searchText(string(f[2]), string(f[3]))
				entry = binary.AppendUvarint(append(entry[:0], f[1]...), uint64(text.Folded))
				if err = w.numbers.add(f[0], append(entry, text.Text...)); err != nil {
					err = fmt.Errorf("write catalogue %s: search index: %w", w.path, err)
				}
			}
			if err != nil {
				s.failed.CompareAndSwap(nil, &err)
			}
		}
	}()
	return s
}

// add hands a card to the sort: its key in the numbers sort, the head of
// its sorted entry (appendSortedHead), and what its search text is made
// of.
func (s *entrySort) add(sortKey, head []byte, name, language string) error {
	if err := s.failed.Load(); err != nil {
		return *err
	}
	if s.closed {
		return errors.New("write catalogue: a card after Finish or Abort")
	}
	for _, f := range [][]byte{sortKey, head} {
		s.batch = binary.AppendUvarint(s.batch, uint64(len(f)))
		s.batch = append(s.batch, f...)
	}
	for _, f := range []string{name, language} {
		s.batch = binary.AppendUvarint(s.batch, uint64(len(f)))
		s.batch = append(s.batch, f...)
	}
	if len(s.batch) >= entryBatchBytes {
		s.in <- s.batch
		s.batch = nil
	}
	return nil
}

// wait hands the last cards to the sort and waits for it to end, once
// every card is in or the Writer is aborted; it returns the first error.
func (s *entrySort) wait() error {
	if !s.closed {
		if len(s.batch) > 0 {
			s.in <- s.batch
			s.batch = nil
		}
		close(s.in)
		s.closed = true
	}
	<-s.done
	if err := s.failed.Load(); err != nil {
		return *err
	}
	return nil
}
