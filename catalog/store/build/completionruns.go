package build

import (
	"bytes"
	"encoding/binary"
	"slices"
	"unicode/utf8"

	"github.com/catalogd/catalogd/catalog/store/internal/layout"
)

// The runs of autocomplete's index as the import writes them, in blocks,
// and the first names of the prefixes that start many of them (see
// completions.go).

// runBuilder builds one run, its names in ordinal order and then its
// groups, and the first names of each namespace it holds, its groups'
// included.
type runBuilder struct {
	seg      [layout.RunSegments][]byte
	last     [layout.RunSegments]uint32
	top      topNames
	groups   []uint32
	places   int
	topsSegs [namespaces][]byte // scratch of storeZoneTops
}

func (b *runBuilder) reset() {
	b.places = 0
	for i := range b.seg {
		b.seg[i] = b.seg[i][:0]
	}
	for i := range b.top {
		b.top[i] = b.top[i][:0]
	}
	b.groups = b.groups[:0]
}

// runs is the runs a query of this one reads: its own and its groups'.
func (b *runBuilder) runs() int { return 1 + len(b.groups) }

// addGroup adds group id to the run.
func (b *runBuilder) addGroup(id uint32) {
	b.append(layout.RunGroups, id, 0)
	b.groups = append(b.groups, id)
}

// addName adds the name placed at ord, whose place is told by place (see
// zoneOnly): to the segment of its kind, and to the first names of each
// namespace it is in.
func (b *runBuilder) addName(ord uint32, place byte) {
	b.places++
	zone := place &^ zoneOnly
	if place&zoneOnly != 0 {
		b.append(layout.RunZoneOnly, ord, zone)
	} else {
		b.append(layout.RunShared, ord, zone)
		b.addTop(0, ord)
	}
	if zone != 0 {
		b.addTop(int(zone), ord)
	}
}

func (b *runBuilder) addTop(ns int, ord uint32) {
	if len(b.top[ns]) < layout.MaxAutocompleteLimit {
		b.top[ns] = append(b.top[ns], ord)
	}
}

// append adds id to segment seg: a name's gap and zone (the segments of
// places), a group's gap alone (layout.RunGroups).
func (b *runBuilder) append(seg int, id uint32, zone byte) {
	delta := id
	if len(b.seg[seg]) > 0 {
		delta = id - b.last[seg]
	}
	v := uint64(delta)
	if seg != layout.RunGroups {
		v = v<<2 | uint64(zone)
	}
	b.seg[seg] = binary.AppendUvarint(b.seg[seg], v)
	b.last[seg] = id
}

// zoneTopsAfter is the most places a run holds without the first names
// of each zone stored apart: a query of a zone reads the run past other
// zones' places up to its first names there, so no more than this many.
const zoneTopsAfter = 2 * layout.MaxAutocompleteLimit

// storeZoneTops stores the first names of each zone of a run of more than
// zoneTopsAfter places, as those of a prefix are (appendTopNames).
func (b *runBuilder) storeZoneTops() {
	if b.places > zoneTopsAfter {
		b.seg[layout.RunZoneTops] = appendTopNames(b.seg[layout.RunZoneTops], &b.top, 1, &b.topsSegs)
	}
}

// appendTopNames appends the first names of each namespace from from on:
// a segment for each namespace (appendRun), its ordinals the first and
// then the gaps. segs is scratch.
func appendTopNames(dst []byte, top *topNames, from int, segs *[namespaces][]byte) []byte {
	for ns := range segs {
		segs[ns] = segs[ns][:0]
		if ns >= from {
			segs[ns] = appendOrdinals(segs[ns], top[ns])
		}
	}
	return appendRun(dst, segs[:])
}

// appendRun appends a run: a byte whose bit i tells whether segment i
// has entries, then each such segment, uvarint-length-prefixed. The first
// names stored for a prefix are written so too, a segment for each
// namespace.
func appendRun(dst []byte, segs [][]byte) []byte {
	var mask byte
	for i, s := range segs {
		if len(s) > 0 {
			mask |= 1 << i
		}
	}
	dst = append(dst, mask)
	for _, s := range segs {
		if len(s) > 0 {
			dst = binary.AppendUvarint(dst, uint64(len(s)))
			dst = append(dst, s...)
		}
	}
	return dst
}

// runsPerBlock is the most runs in one value of the completions bucket:
// their terms share prefixes, written once, and a key of bbolt costs
// about as much as a run of one name.
const runsPerBlock = 32

// runBlocks writes runs in blocks, in key order: a block is stored under
// the key of its first run (kind + term + 0), and holds each run's term,
// after the bytes it shares with the term before it, then the run,
// each uvarint-length-prefixed.
type runBlocks struct {
	w     *Writer
	key   []byte
	prev  []byte
	value []byte
	n     int
}

func (rb *runBlocks) add(kind byte, term, run []byte) error {
	if rb.n == runsPerBlock || (rb.n > 0 && kind != rb.key[0]) {
		if err := rb.flush(); err != nil {
			return err
		}
	}
	if rb.n == 0 {
		rb.key = append(append(append(rb.key[:0], kind), term...), 0)
		rb.prev = rb.prev[:0]
	}
	shared := 0
	for shared < len(term) && shared < len(rb.prev) && term[shared] == rb.prev[shared] {
		shared++
	}
	rb.value = binary.AppendUvarint(rb.value, uint64(shared))
	rb.value = binary.AppendUvarint(rb.value, uint64(len(term)-shared))
	rb.value = append(rb.value, term[shared:]...)
	rb.value = binary.AppendUvarint(rb.value, uint64(len(run)))
	rb.value = append(rb.value, run...)
	rb.prev = append(rb.prev[:0], term...)
	rb.n++
	return nil
}

func (rb *runBlocks) flush() error {
	if rb.n == 0 {
		return nil
	}
	rb.n = 0
	err := rb.w.putOrdered(layout.BucketCompletions, rb.key, rb.value)
	rb.value = rb.value[:0]
	return err
}

// topNames is the first names of each namespace of a run or a prefix.
type topNames [namespaces][]uint32

// mergeTops returns the first names of both, which it does not change.
func mergeTops(a, b *topNames) *topNames {
	if a == nil {
		return b
	}
	if b == nil {
		return a
	}
	m := new(topNames)
	for ns := range m {
		m[ns] = layout.MergeFirst(make([]uint32, 0, layout.MaxAutocompleteLimit), a[ns], b[ns], layout.MaxAutocompleteLimit)
	}
	return m
}

// prefixNode is a prefix of the term whose run was written last, with
// what the runs that start with it hold so far.
type prefixNode struct {
	end  int // bytes of the term
	runs int
	top  *topNames
}

// prefixTops finds the prefixes that start more than TopPrefixRuns runs,
// as the runs come in key order, and adds their first names to tops.
type prefixTops struct {
	kind  byte
	term  []byte
	stack []prefixNode
	tops  *sorter
	key   []byte
	value []byte
	segs  [namespaces][]byte // scratch of appendTopNames
}

// add takes the run of term, of kind, holding runs runs and top.
func (p *prefixTops) add(kind byte, term []byte, runs int, top *topNames) error {
	lcp := 0
	if kind == p.kind {
		for lcp < len(term) && lcp < len(p.term) && term[lcp] == p.term[lcp] {
			lcp++
		}
		for lcp > 0 && lcp < len(term) && !utf8.RuneStart(term[lcp]) {
			lcp--
		}
	}
	if err := p.closeTo(lcp); err != nil {
		return err
	}
	p.kind, p.term = kind, append(p.term[:0], term...)
	for i := lcp; i < len(term); {
		_, w := utf8.DecodeRune(term[i:])
		i += w
		p.stack = append(p.stack, prefixNode{end: i})
	}
	if n := len(p.stack); n > 0 {
		last := &p.stack[n-1]
		last.runs += runs
		last.top = mergeTops(last.top, top)
	}
	return nil
}

// closeTo ends the prefixes longer than end bytes, deepest first, each
// adding what it holds to the one it extends.
func (p *prefixTops) closeTo(end int) error {
	for n := len(p.stack); n > 0 && p.stack[n-1].end > end; n = len(p.stack) {
		node := p.stack[n-1]
		p.stack = p.stack[:n-1]
		if node.runs > layout.TopPrefixRuns {
			p.key = append(append(append(p.key[:0], layout.CompleteTop, p.kind), p.term[:node.end]...), 0)
			p.value = appendTopNames(p.value[:0], node.top, 0, &p.segs)
			if err := p.tops.add(p.key, p.value); err != nil {
				return err
			}
		}
		if n > 1 {
			parent := &p.stack[n-2]
			parent.runs += node.runs
			parent.top = mergeTops(parent.top, node.top)
		}
	}
	return nil
}

// appendOrdinals appends ordinals in increasing order as a segment of a
// run: the first, then the gaps.
func appendOrdinals(dst []byte, ords []uint32) []byte {
	var last uint32
	for i, o := range ords {
		if i == 0 {
			dst = binary.AppendUvarint(dst, uint64(o))
		} else {
			dst = binary.AppendUvarint(dst, uint64(o-last))
		}
		last = o
	}
	return dst
}

// writeRuns writes the run of every group, form and word from their
// sorted entries (addRunKey), in which an ordinal from names on is a
// group's, and adds to tops the first names of the prefixes of forms and
// words that start many runs.
func (w *Writer) writeRuns(keys *sorter, names uint32, tops *sorter) error {
	groupTops := make([]*topNames, len(w.groups.texts))
	prefixes := startPrefixFeed(tops)
	defer prefixes.wait()
	var b runBuilder
	blocks := runBlocks{w: w}
	var runKey, value []byte
	end := func() error {
		if len(runKey) == 0 {
			return nil
		}
		kind, term := runKey[0], runKey[1:]
		if kind != layout.CompleteGroup {
			term = term[:len(term)-1]
		}
		if kind == layout.CompleteGram {
			// A gram's run is walked whole, never read for its first
			// names, and a gram is never a prefix.
			return blocks.add(kind, term, appendRun(value[:0], b.seg[:]))
		}
		b.storeZoneTops()
		value = appendRun(value[:0], b.seg[:])
		if err := blocks.add(kind, term, value); err != nil {
			return err
		}
		top := new(topNames)
		for ns := range top {
			top[ns] = slices.Clone(b.top[ns])
		}
		if kind == layout.CompleteGroup {
			if len(term) != 4 {
				return layout.ErrBadEntry
			}
			if id := binary.BigEndian.Uint32(term); int(id) < len(groupTops) {
				groupTops[id] = top
			}
			return nil
		}
		for _, id := range b.groups {
			if int(id) < len(groupTops) {
				top = mergeTops(top, groupTops[id])
			}
		}
		prefixes.add(kind, term, b.runs(), top)
		return nil
	}
	err := keys.each(func(k, _ []byte) error {
		if len(k) < 7 {
			return layout.ErrBadEntry
		}
		key, ord, place := k[:len(k)-5], binary.BigEndian.Uint32(k[len(k)-5:]), k[len(k)-1]
		if !bytes.Equal(key, runKey) {
			if err := end(); err != nil {
				return err
			}
			runKey = append(runKey[:0], key...)
			b.reset()
		}
		if ord >= names {
			b.addGroup(ord - names)
		} else {
			b.addName(ord, place)
		}
		return nil
	})
	if err == nil {
		err = end()
	}
	if err == nil {
		err = blocks.flush()
	}
	if err == nil {
		err = prefixes.wait()
	}
	return err
}

// prefixFeed hands the runs, as writeRuns writes them, to a goroutine of
// its own that gathers the first names of their prefixes (prefixTops)
// and owns the sort of them until wait returns: some 3 s of the import's
// last step on a million names that do not repeat, which had one busy
// core (docs/BENCHMARKS.md, "Sorts, prefixes and lists beside what
// feeds them").
type prefixFeed struct {
	in     chan *prefixBatch
	batch  *prefixBatch
	done   chan error
	waited bool
	err    error
}

// prefixBatch is runs handed to the feed's goroutine at once: their
// terms back to back, and each run's end among them, kind, runs and
// first names.
type prefixBatch struct {
	terms []byte
	runs  []prefixRun
}

type prefixRun struct {
	end  int
	kind byte
	runs int
	top  *topNames
}

// prefixBatchRuns and prefixBatchBytes bound a batch: its runs, and the
// bytes of their terms, for a term may be a name's whole form of 16 KB
// (catalog.MaxNameLength), and six batches are held at once.
const (
	prefixBatchRuns  = 1024
	prefixBatchBytes = 256 << 10
)

func startPrefixFeed(tops *sorter) *prefixFeed {
	f := &prefixFeed{in: make(chan *prefixBatch, 4), batch: new(prefixBatch), done: make(chan error, 1)}
	go func() {
		p := &prefixTops{tops: tops}
		var err error
		for b := range f.in {
			start := 0
			for _, r := range b.runs {
				if err == nil {
					err = p.add(r.kind, b.terms[start:r.end], r.runs, r.top)
				}
				start = r.end
			}
		}
		if err == nil {
			err = p.closeTo(0)
		}
		f.done <- err
	}()
	return f
}

// add hands over the run of term, of kind, holding runs runs and top.
func (f *prefixFeed) add(kind byte, term []byte, runs int, top *topNames) {
	b := f.batch
	b.terms = append(b.terms, term...)
	b.runs = append(b.runs, prefixRun{end: len(b.terms), kind: kind, runs: runs, top: top})
	if len(b.runs) == prefixBatchRuns || len(b.terms) >= prefixBatchBytes {
		f.in <- b
		f.batch = new(prefixBatch)
	}
}

// wait hands over the last runs, waits for the goroutine to end, and
// returns its first error.
func (f *prefixFeed) wait() error {
	if !f.waited {
		f.waited = true
		if len(f.batch.runs) > 0 {
			f.in <- f.batch
		}
		close(f.in)
		f.err = <-f.done
	}
	return f.err
}
