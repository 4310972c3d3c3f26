package store

import (
	"bytes"
	"container/heap"
	"encoding/binary"
	"math"
	"unicode/utf8"

	"github.com/catalogd/catalogd/catalog/store/internal/layout"
	bolt "go.etcd.io/bbolt"
)

// A query of several terms needs the names with a word that starts with
// the last term that also hold the others, which the first names stored
// for a prefix may not reach. nameStream yields the names of a prefix
// in rank order, as far as asked: from the first names stored for it,
// then, once those are spent, from its longer prefixes, each by its own
// first names or, for a prefix of few runs, by the runs themselves. A
// name may come from several of them; it is yielded once.

// termCursor reads the runs of one kind in term order, across blocks.
type termCursor struct {
	c    *bolt.Cursor
	kind byte
	k    []byte // the key of the block being read
	b    blockRuns
	term []byte // the run at the cursor, and its term, when ok
	run  []byte
	ok   bool
}

// seek places the cursor on the first run whose term is at or after from.
func (tc *termCursor) seek(from []byte) error {
	k, v := blockBefore(tc.c, tc.kind, from)
	tc.k, tc.b = k, blockRuns{v: v}
	for {
		if err := tc.next(); err != nil || !tc.ok || bytes.Compare(tc.term, from) >= 0 {
			return err
		}
	}
}

// next moves the cursor to the next run.
func (tc *termCursor) next() error {
	for tc.k != nil && tc.k[0] == tc.kind {
		t, run, ok, err := tc.b.next()
		if err != nil {
			tc.ok = false
			return damagef("autocomplete index damaged: block %q: %v; import the catalogue again", tc.k, err)
		}
		if ok {
			tc.term, tc.run, tc.ok = t, run, true
			return nil
		}
		var v []byte
		tc.k, v = tc.c.Next()
		tc.b = blockRuns{v: v}
	}
	tc.ok = false
	return nil
}

// nameSource is one list of names in rank order: a run's, read as it
// goes, or the first names stored for a prefix, which stand for the
// prefix's names until they are spent.
type nameSource struct {
	names  *runNames // of a run: its names left
	top    []uint32  // of a prefix: its first names left
	prefix []byte    // the prefix whose first names top holds
	next   uint32    // the next ordinal, or the last one of a spent prefix
	done   bool      // a spent run
}

// advance reads the source's next ordinal.
func (s *nameSource) advance() error {
	if s.prefix != nil {
		if len(s.top) > 0 {
			s.next, s.top = s.top[0], s.top[1:]
			return nil
		}
		s.done = true // its names go on in its longer prefixes
		return nil
	}
	ord, ok, err := s.names.next()
	s.next, s.done = ord, !ok
	return err
}

type sourceHeap []*nameSource

func (h sourceHeap) Len() int           { return len(h) }
func (h sourceHeap) Less(i, j int) bool { return h[i].next < h[j].next }
func (h sourceHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *sourceHeap) Push(x any)        { *h = append(*h, x.(*nameSource)) }
func (h *sourceHeap) Pop() any {
	old := *h
	s := old[len(old)-1]
	*h = old[:len(old)-1]
	return s
}

// nameStream yields the names of the namespace with a term of its kind
// that starts with a prefix, in rank order, each once.
type nameStream struct {
	a       *completer
	terms   termCursor
	sources sourceHeap
	yielded map[uint32]bool
}

func newNameStream(a *completer, kind byte, prefix []byte) (*nameStream, error) {
	s := &nameStream{a: a, terms: termCursor{c: a.c.Bucket().Cursor(), kind: kind}, yielded: make(map[uint32]bool)}
	return s, s.addPrefix(prefix)
}

// addPrefix adds the sources of the names of prefix: its stored first
// names, or its runs.
func (s *nameStream) addPrefix(prefix []byte) error {
	a := s.a
	a.key = append(append(append(a.key[:0], layout.CompleteTop, s.terms.kind), prefix...), 0)
	if k, v := a.c.Seek(a.key); bytes.Equal(k, a.key) {
		top, err := segmentOrdinals(nil, v, a.ns, -1)
		if err != nil {
			return damagef("autocomplete index damaged: %q: %v; import the catalogue again", k, err)
		}
		return s.push(&nameSource{top: top, prefix: bytes.Clone(prefix)})
	}
	if err := s.terms.seek(prefix); err != nil {
		return err
	}
	for s.terms.ok && bytes.HasPrefix(s.terms.term, prefix) {
		if err := s.addRun(s.terms.term, s.terms.run); err != nil {
			return err
		}
		if err := s.terms.next(); err != nil {
			return err
		}
	}
	return nil
}

// addRun adds the names of a run, and of its groups, as sources.
func (s *nameStream) addRun(term, run []byte) error {
	a := s.a
	a.runs++
	names, err := newRunNames(run, a.ns)
	if err != nil {
		return damagef("autocomplete index damaged: run %q: %v; import the catalogue again", term, err)
	}
	if err := s.push(&nameSource{names: names}); err != nil {
		return err
	}
	return a.eachGroupRun(term, run, func(g uint32, grun []byte) error {
		names, err := newRunNames(grun, a.ns)
		if err != nil {
			return damagef("autocomplete index damaged: group %d: %v; import the catalogue again", g, err)
		}
		return s.push(&nameSource{names: names})
	})
}

// push reads the source's first ordinal and adds it, unless it has none.
func (s *nameStream) push(src *nameSource) error {
	if err := src.advance(); err != nil {
		return damagef("autocomplete index damaged: %v; import the catalogue again", err)
	}
	if !src.done {
		heap.Push(&s.sources, src)
	}
	return nil
}

// next returns the next name, or ok false when there are no more.
func (s *nameStream) next() (ord uint32, ok bool, err error) {
	for len(s.sources) > 0 {
		src := s.sources[0]
		ord = src.next
		if err := src.advance(); err != nil {
			return 0, false, damagef("autocomplete index damaged: %v; import the catalogue again", err)
		}
		if src.done {
			heap.Pop(&s.sources)
			if src.prefix != nil {
				// Its names go on, from ord, in its longer prefixes: they
				// must be read before any name after ord is yielded.
				if err := s.addLonger(src.prefix); err != nil {
					return 0, false, err
				}
			}
		} else {
			heap.Fix(&s.sources, 0)
		}
		if !s.yielded[ord] {
			s.yielded[ord] = true
			return ord, true, nil
		}
	}
	return 0, false, nil
}

// addLonger adds the sources of the names of every prefix one character
// longer than prefix, and of the run of prefix itself.
func (s *nameStream) addLonger(prefix []byte) error {
	if err := s.terms.seek(prefix); err != nil {
		return err
	}
	for s.terms.ok && bytes.HasPrefix(s.terms.term, prefix) {
		t := s.terms.term
		if len(t) == len(prefix) {
			if err := s.addRun(t, s.terms.run); err != nil {
				return err
			}
			if err := s.terms.next(); err != nil {
				return err
			}
			continue
		}
		_, w := utf8.DecodeRune(t[len(prefix):])
		longer := bytes.Clone(t[:len(prefix)+w])
		if err := s.addPrefix(longer); err != nil {
			return err
		}
		// Past every term that starts with longer: no term holds 0xff.
		if err := s.terms.seek(append(longer, 0xff)); err != nil {
			return err
		}
	}
	return nil
}

// runSegment returns segment seg of run (as build/completionruns.go
// writes it), or nil when it has none.
func runSegment(run []byte, seg int) ([]byte, error) {
	if len(run) == 0 {
		return nil, nil
	}
	mask, v := run[0], run[1:]
	var s []byte
	for i := 0; i <= seg; i++ {
		if mask&(1<<i) == 0 {
			continue
		}
		var ok bool
		if s, v, ok = layout.LengthPrefixed(v); !ok {
			return nil, layout.ErrBadEntry
		}
	}
	if mask&(1<<seg) == 0 {
		return nil, nil
	}
	return s, nil
}

// placeReader reads a segment of a run's places: each a gap and a zone
// (as build/completionruns.go writes them).
type placeReader struct {
	data    []byte
	ord     uint32
	zone    byte
	started bool
	ok      bool // whether ord and zone hold a place
}

func (p *placeReader) advance() error {
	if len(p.data) == 0 {
		p.ok = false
		return nil
	}
	v, w := binary.Uvarint(p.data)
	if w <= 0 || v>>2 > math.MaxUint32 {
		return layout.ErrBadEntry
	}
	p.data, p.zone = p.data[w:], byte(v&3)
	d := uint32(v >> 2)
	if p.started {
		if p.ord+d < p.ord {
			return layout.ErrBadEntry
		}
		p.ord += d
	} else {
		p.ord, p.started = d, true
	}
	p.ok = true
	return nil
}

// runNames reads the names of one namespace in a run, in rank order:
// every place of the shared segment for every zone's; for a zone's, the
// places of that zone in both segments, merged.
type runNames struct {
	zone  byte // 1 + ZoneIndex, or 0 for every zone's
	segs  [2]placeReader
	ready bool
}

func newRunNames(run []byte, ns int) (*runNames, error) {
	r := &runNames{zone: byte(ns)}
	for seg := range r.segs {
		if seg == layout.RunZoneOnly && ns == 0 {
			break // no every-zone place is there
		}
		data, err := runSegment(run, seg)
		if err != nil {
			return nil, err
		}
		r.segs[seg].data = data
	}
	return r, nil
}

// skip moves a segment to its next place of the namespace.
func (r *runNames) skip(p *placeReader) error {
	for {
		if err := p.advance(); err != nil || !p.ok || r.zone == 0 || p.zone == r.zone {
			return err
		}
	}
}

// next returns the next name's place, or ok false when there are no more.
func (r *runNames) next() (ord uint32, ok bool, err error) {
	if !r.ready {
		for i := range r.segs {
			if err := r.skip(&r.segs[i]); err != nil {
				return 0, false, err
			}
		}
		r.ready = true
	}
	p := &r.segs[0]
	if q := &r.segs[1]; q.ok && (!p.ok || q.ord < p.ord) {
		p = q
	}
	if !p.ok {
		return 0, false, nil
	}
	ord = p.ord
	return ord, true, r.skip(p)
}

// firstNames appends the places of the first n names of namespace ns in
// run (all when n < 0): those stored for a zone when they are enough.
func firstNames(dst []uint32, run []byte, ns, n int) ([]uint32, error) {
	if ns > 0 && n >= 0 && n <= layout.MaxAutocompleteLimit {
		tops, err := runSegment(run, layout.RunZoneTops)
		if err != nil {
			return dst, err
		}
		if tops != nil {
			return segmentOrdinals(dst, tops, ns, n) // a zone's first names, stored
		}
	}
	r, err := newRunNames(run, ns)
	for i := 0; err == nil && (n < 0 || i < n); i++ {
		var ord uint32
		var ok bool
		if ord, ok, err = r.next(); !ok {
			break
		}
		dst = append(dst, ord)
	}
	return dst, err
}
