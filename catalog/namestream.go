package catalog

import (
	"bytes"
	"container/heap"
	"encoding/binary"
	"unicode/utf8"

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

// nameSource is one list of names in rank order: a run's segment, read as
// it goes, or the first names stored for a prefix, which stand for the
// prefix's names until they are spent.
type nameSource struct {
	seg     []byte   // of a run: the ordinals left, as gaps
	started bool     // whether the first ordinal of seg was read
	top     []uint32 // of a prefix: its first names left
	prefix  []byte   // the prefix whose first names top holds
	next    uint32   // the next ordinal, or the last one of a spent prefix
	done    bool     // a spent run
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
	if len(s.seg) == 0 {
		s.done = true
		return nil
	}
	d, w := binary.Uvarint(s.seg)
	if w <= 0 {
		return errBadEntry
	}
	if s.started {
		s.next += uint32(d)
	} else {
		s.next, s.started = uint32(d), true
	}
	s.seg = s.seg[w:]
	return nil
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
	a.key = append(append(append(a.key[:0], completeTop, s.terms.kind), prefix...), 0)
	if k, v := a.c.Seek(a.key); bytes.Equal(k, a.key) {
		top, err := runOrdinals(nil, v, a.ns, -1)
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
	seg, err := runSegment(run, a.ns)
	if err != nil {
		return damagef("autocomplete index damaged: run %q: %v; import the catalogue again", term, err)
	}
	if err := s.push(&nameSource{seg: seg}); err != nil {
		return err
	}
	return a.eachGroupRun(term, run, func(g uint32, grun []byte) error {
		seg, err := runSegment(grun, a.ns)
		if err != nil {
			return damagef("autocomplete index damaged: group %d: %v; import the catalogue again", g, err)
		}
		return s.push(&nameSource{seg: seg})
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

// runSegment returns segment seg of run: its ordinals, as gaps.
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
		if s, v, ok = lengthPrefixed(v); !ok {
			return nil, errBadEntry
		}
	}
	if mask&(1<<seg) == 0 {
		return nil, nil
	}
	return s, nil
}
