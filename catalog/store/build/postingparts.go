package build

import (
	"encoding/binary"
	"sync"
	"sync/atomic"

	"github.com/catalogd/catalogd/catalog/store/internal/layout"
)

// postingParts builds the posting lists of the index in two parts, each
// on a goroutine of its own: the early part, the lists of characters,
// bigrams, numbers, runs and groups, and the late part, those of sets and
// trigrams. The lists cost more than the rest of the index's loop, and on
// one goroutine they were the import's longest stretch on one core
// (docs/BENCHMARKS.md, "The posting lists in two parts"). The keys of the
// two parts never meet and the early part's come first, so the lists are
// written one part after the other, in key order. The parts share the
// posting lists' memory.
type postingParts struct {
	parts  [2]*postingBuilder
	in     [2]chan postingBatch
	batch  postingBatch
	closed bool
	wg     sync.WaitGroup
	failed atomic.Pointer[error] // the first error of either part, as soon as it happens
}

// postingBatch is consecutive entries of the index, handed to both parts
// at once, which only read it.
type postingBatch struct {
	first uint32 // the ordinal of the first entry
	data  []byte // the entries, each uvarint-length-prefixed
}

// postingBatchBytes is the size of a batch of entries.
const postingBatchBytes = 64 << 10

// startPostings starts the two parts of the index's posting lists, within
// the Writer's limits, knowing the name groups' lists.
func (w *Writer) startPostings(groups *groupLists) *postingParts {
	p := &postingParts{}
	for i, part := range []int{partEarly, partLate} {
		b := w.newPostings()
		b.limit /= 2
		b.part, b.groups = part, groups
		p.parts[i], p.in[i] = b, make(chan postingBatch, 4)
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			var err error
			for batch := range p.in[i] {
				if err == nil {
					if err = b.addBatch(batch); err != nil {
						p.failed.CompareAndSwap(nil, &err)
					}
				}
			}
		}()
	}
	return p
}

// addBatch adds the cards of a batch.
func (b *postingBuilder) addBatch(batch postingBatch) error {
	data := batch.data
	for ord := batch.first; len(data) > 0; ord++ {
		entry, rest, ok := layout.LengthPrefixed(data)
		if !ok {
			return layout.ErrBadEntry
		}
		e, err := layout.DecodeIndexEntry(entry)
		if err == nil {
			err = b.addCard(ord, &e)
		}
		if err != nil {
			return err
		}
		data = rest
	}
	return nil
}

// add hands the entry of the card at ord to both parts, or returns the
// error a part met. Ordinals come in increasing order, one after the
// other.
func (p *postingParts) add(ord uint32, entry []byte) error {
	if err := p.failed.Load(); err != nil {
		return *err
	}
	if len(p.batch.data) == 0 {
		p.batch.first = ord
	}
	p.batch.data = binary.AppendUvarint(p.batch.data, uint64(len(entry)))
	p.batch.data = append(p.batch.data, entry...)
	if len(p.batch.data) >= postingBatchBytes {
		p.send()
	}
	return nil
}

func (p *postingParts) send() {
	for _, in := range p.in {
		in <- p.batch
	}
	p.batch = postingBatch{}
}

// done hands the last entries to the parts and waits for both to end,
// returning the first error of either.
func (p *postingParts) done() error {
	if !p.closed {
		if len(p.batch.data) > 0 {
			p.send()
		}
		for _, in := range p.in {
			close(in)
		}
		p.closed = true
		p.wg.Wait()
	}
	if err := p.failed.Load(); err != nil {
		return *err
	}
	return nil
}

// write writes every list of both parts, in key order, through put:
// the merge of their runs on a goroutine of its own, beside put.
func (p *postingParts) write(put func(key, value []byte) error) error {
	if err := p.done(); err != nil {
		return err
	}
	return putBeside(func(put func(key, value []byte) error) error {
		lw := listWriter{put: put}
		for _, b := range p.parts {
			if err := b.each(lw.chunk); err != nil {
				return err
			}
		}
		return lw.end()
	}, put)
}

// close ends both parts and releases their runs.
func (p *postingParts) close() {
	p.done()
	for _, b := range p.parts {
		b.close()
	}
}
