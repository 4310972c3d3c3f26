package store

import (
	"bytes"
	"cmp"
	"math"
	"slices"
	"unicode/utf8"

	"github.com/catalogd/catalogd/catalog/store/internal/layout"
	bolt "go.etcd.io/bbolt"
)

// The plan of a search: the lists every result is on, found once per
// query, and the walk of them (docs/SEARCH.md, How a query is answered).

// searchPlan is the lists a search walks, found once and walked by every
// zone with lists of its own.
type searchPlan struct {
	sets    []listRef // the cards of the filtered sets: on any of them
	terms   []termRef // the terms whose lists are walked, shortest first
	damaged error     // the first list found damaged, if any
	// typos is whether a result may take edits (see rankByEdits), and
	// leastEdits the fewest any can take.
	typos      bool
	leastEdits int
}

// termRef is the lists of one term: the cards whose names hold two of its
// trigrams, the rarest first (its bigram or its character, for a shorter
// term; with the list of its run first, when it has one: see
// appendNameLists), those whose number is the term, and those of the name
// groups that hold it (see planGroups); in a fuzzy search, the same of
// each word of the dictionary a few edits from it, or the cards the
// word's value names (see planTypo). moreGrams is the term's other
// grams, rarest first, whose lists a walk takes too, one at a time, as it
// refuses cards that hold the first two without the term (see zoneWalk).
type termRef struct {
	term      *term
	byName    []listRef
	moreGrams []gramList
	number    listRef
	byGroup   []listRef
	byGrams   bool   // byGroup is intersected, not united
	inGroups  uint64 // the most cards byGroup names
	near      []termRef
}

func (t *termRef) count() uint64 {
	n := t.byName[0].count + t.number.count + t.inGroups
	for i := range t.near {
		n += t.near[i].count()
	}
	return n
}

// lists returns at least how many lists the walk of the term reads, with
// more of its other grams.
func (t *termRef) lists(more int) int {
	n := len(t.byName) + min(more, len(t.moreGrams)) + 1 + len(t.byGroup)
	for i := range t.near {
		n += t.near[i].lists(more)
	}
	return n
}

// nameLists returns the lists of the grams of the term that a walk
// intersects: byName, and the first more of its others.
func (t *termRef) nameLists(more int) []listRef {
	names := slices.Clip(t.byName)
	for _, g := range t.moreGrams[:min(more, len(t.moreGrams))] {
		names = append(names, g.listRef)
	}
	return names
}

// mostMoreGrams returns the most other grams a term has, at most
// maxMoreGrams.
func mostMoreGrams(terms []termRef) int {
	most := 0
	for i := range terms {
		most = max(most, len(terms[i].moreGrams))
	}
	return min(most, maxMoreGrams)
}

// maxMoreGrams bounds the grams a walk takes beyond its first two, and so
// the times it builds its driver again: each builds every list anew, and
// a term of 200 characters has up to 196 other grams. The rarest come
// first, and cut the most.
const maxMoreGrams = 4

// maxDriverTerms is the most terms whose lists a search intersects; the
// others are checked on the cards the intersection names, where more lists
// would cost more seeks than they save.
const maxDriverTerms = 3

// planSearch picks the lists that every result is on: those of the
// filtered sets, and for each term two of its trigrams (see
// appendRarestApart) together with its number. The walk intersects the
// shortest few, shortest first.
func planSearch(r *reader, sets []layout.StoredSet, terms []term, longestName int, words dictionary) searchPlan {
	var p searchPlan
	var key []byte
	byName := make([]listRef, 0, 2*len(terms)) // every term's, two at most each
	refIn := func(c *bolt.Cursor, key []byte) listRef {
		l, err := readListRef(c, key)
		if p.damaged == nil {
			p.damaged = err
		}
		return l
	}
	ref := func(key []byte) listRef { return refIn(r.postingCursor, key) }
	for _, set := range sets {
		p.sets = append(p.sets, ref(layout.AppendSetPostingKey(key[:0], set.Zone(), set.Code)))
	}
	for i := range terms {
		t := &terms[i]
		from := len(byName)
		var more []gramList
		byName, more = appendNameLists(byName, t.text, longestName, ref)
		p.terms = append(p.terms, termRef{term: t, byName: byName[from:len(byName):len(byName)], moreGrams: more})
	}
	// A term's lists hold at least its rarest gram's cards, so once the
	// shortest terms found so far are shorter than the next term's gram
	// list, no term after it can take their place: the number lists of
	// the rest are not looked up. A query of a hundred common characters
	// looks up three number lists, not a hundred.
	slices.SortStableFunc(p.terms, func(a, b termRef) int { return cmp.Compare(a.byName[0].count, b.byName[0].count) })
	var drivers []termRef
	typosPlanned := 0
	for _, tr := range p.terms {
		if len(drivers) == maxDriverTerms && tr.byName[0].count >= drivers[len(drivers)-1].count() {
			break
		}
		if tr.term.typo != nil && typosPlanned == maxDriverTerms {
			continue // unplanned, its typos are found by the check alone
		}
		tr.number = ref(layout.AppendListKey(key[:0], layout.PostingNumber, tr.term.number))
		tr.byGroup, tr.byGrams, tr.inGroups = planGroups(r, tr.term.text, refIn)
		if ty := tr.term.typo; ty != nil {
			typosPlanned++
			ty.planned, ty.exact = true, tr.count() > 0
			var err error
			if tr.near, err = planTypo(r, tr.term, words, longestName, refIn); err != nil && p.damaged == nil {
				p.damaged = err
			}
		}
		i, _ := slices.BinarySearchFunc(drivers, tr.count(), func(d termRef, n uint64) int { return cmp.Compare(d.count(), n+1) })
		drivers = slices.Insert(drivers, i, tr)[:min(maxDriverTerms, len(drivers)+1)]
	}
	p.typos, p.leastEdits = leastEdits(p.terms)
	p.terms = drivers
	return p
}

// appendNameLists appends the lists of the cards whose search texts may
// hold text: two of its grams, or one empty list when no text holds it.
// It returns its other grams too, rarest first.
func appendNameLists(dst []listRef, text []byte, longestName int, ref func(key []byte) listRef) (_ []listRef, more []gramList) {
	n := min(3, utf8.RuneCount(text))
	if len(text) > longestName { // then it is in no name
		return append(dst, listRef{}), nil
	}
	grams, none := termGrams(nil, text, n, ref)
	if none {
		return append(dst, listRef{}), nil // an empty list
	}
	from := len(dst)
	dst, more = appendRarestApart(dst, grams, n)
	// A run of a short pattern has few grams, whose lists hold every run
	// of three: its own list is shorter (see internal/layout/runs.go).
	if key, ok := layout.TermRunKey(text); ok {
		if run := ref(key); run.count < dst[from].count {
			dst = slices.Insert(dst, from, run)
		}
	}
	return dst, more
}

// termGrams appends to grams the lists of the grams of n characters of
// text, a term, that ref reads: each gram once, with its place in the
// term. none is true when a list is empty, and then the lookups stop: no
// card holds the term.
func termGrams(grams []gramList, text []byte, n int, ref func(key []byte) listRef) (_ []gramList, none bool) {
	var key []byte
	// at is the gram's place in the term, in characters: a term holds no
	// space, so fn is called for every gram, in order.
	at := -1
	layout.EachGram(text, n, func(gram []byte) {
		at++
		key = layout.AppendListKey(key[:0], layout.GramKinds[n], gram)
		if none || slices.ContainsFunc(grams, func(g gramList) bool { return bytes.Equal(g.key, key) }) {
			return
		}
		l := ref(key)
		grams = append(grams, gramList{l, at})
		none = l.count == 0
	})
	return grams, none
}

// gramList is the list of one gram of a term, and the gram's first
// character in the term.
type gramList struct {
	listRef
	at int
}

// appendRarestApart appends to dst the lists of a term's rarest gram and
// of the gram of n characters that shares the fewest of them with it, the
// rarest of those. It returns the other grams, rarest first: grams
// itself, reordered, less those two.
//
// The two rarest grams alone are often neighbours, and neighbours are found
// together. On a million generated names the two rarest of "700797" are
// "079" and "007", which meet on the 310 cards that hold "0079", each read
// and checked to find the one result; "079" and "700", which share one
// character, meet on 22. Queries of digits cost a quarter to a third less
// on a million and on ten million cards; the typical queries of the real
// catalogue cost the same, within the spread of runs (docs/BENCHMARKS.md,
// Two trigrams apart).
func appendRarestApart(dst []listRef, grams []gramList, n int) (_ []listRef, others []gramList) {
	slices.SortStableFunc(grams, func(a, b gramList) int { return cmp.Compare(a.count, b.count) })
	rarest := grams[0]
	if len(grams) == 1 {
		return append(dst, rarest.listRef), nil
	}
	shared := func(g gramList) int { return max(0, n-abs(g.at-rarest.at)) }
	second := 1
	for i := 2; i < len(grams); i++ {
		if shared(grams[i]) < shared(grams[second]) {
			second = i
		}
	}
	dst = append(dst, rarest.listRef, grams[second].listRef)
	return dst, slices.Delete(grams[1:], second-1, second)
}

// abs returns the distance of n from 0.
func abs(n int) int { return max(n, -n) }

// driver returns new lists, read with cursors from c, that walk the plan:
// with typos, the cards of the words near one of the terms too, and, when
// the query is that one term (nearOnly), those alone; with more of the
// other grams of each term and near word than two (termRef.nameLists).
func (p *searchPlan) driver(c *cursorPool, dense uint64, typos, nearOnly bool, more int) ordinals {
	n := len(p.sets)
	for i := range p.terms {
		n += p.terms[i].lists(more)
	}
	// One allocation for every list: the capacity is enough, so appends
	// never move the lists the ordinals point to.
	slab := make([]storedList, 0, n)
	list := func(l listRef) *storedList {
		slab = append(slab, newList(c, l))
		return &slab[len(slab)-1]
	}
	in := make(intersection, 0, n)
	switch len(p.sets) {
	case 0:
	case 1:
		in = append(in, list(p.sets[0]))
	default:
		sets := make(union, len(p.sets))
		for i, s := range p.sets {
			sets[i] = list(s)
		}
		in = append(in, sets)
	}
	// With typos, one term's words walk: the unions of several terms'
	// words, each a union of dozens of lists, cost a seek in each of
	// them for every candidate, and the check tells the others' typos.
	pick := -1
	if typos {
		for i := range p.terms {
			if t := &p.terms[i]; len(t.near) > 0 && (pick < 0 || t.count() < p.terms[pick].count()) {
				pick = i
			}
		}
	}
	for i := range p.terms {
		t := &p.terms[i]
		if typos && len(t.near) > 0 && i != pick {
			continue
		}
		if typos && nearOnly {
			near := make(union, len(t.near))
			for i := range t.near {
				near[i] = t.near[i].walk(list, true, more)
			}
			in = append(in, near)
			continue
		}
		if t.number.count == 0 && t.inGroups == 0 && (len(t.near) == 0 || !typos) {
			// No card has the term as its number, nor in a group, nor a
			// word near it: its gram lists join the intersection itself.
			for _, l := range t.nameLists(more) {
				in = append(in, list(l))
			}
			continue
		}
		in = append(in, t.walk(list, typos, more))
	}
	if len(slab) > 1 && p.shortest() >= dense {
		return &windowed{in: in}
	}
	return in
}

// walk returns the union of the term's lists: its names' (intersected),
// its number's, its groups', and with typos those of the words near it.
func (t *termRef) walk(list func(listRef) *storedList, typos bool, more int) union {
	names := t.nameLists(more)
	byName := make(intersection, len(names))
	for i, l := range names {
		byName[i] = list(l)
	}
	either := union{byName, list(t.number)}
	switch {
	case t.inGroups == 0:
	case t.byGrams:
		byGrams := make(intersection, len(t.byGroup))
		for i, l := range t.byGroup {
			byGrams[i] = list(l)
		}
		either = append(either, byGrams)
	default:
		for _, l := range t.byGroup {
			either = append(either, list(l))
		}
	}
	for i := range t.near {
		if typos {
			either = append(either, t.near[i].walk(list, false, more))
		}
	}
	return either
}

// denseList returns the length from which a list, in a catalogue of that
// many cards, is dense enough that a windowed intersection of it with
// others costs less than a leapfrog: one card in denseFraction. A window
// costs a few hundred nanoseconds whatever it holds, a leapfrog's step some
// twenty, so below that density the windows cost more than the steps they
// save (docs/SEARCH.md, How a query is answered).
func denseList(cards uint64) uint64 { return max(1, cards/denseFraction) }

const denseFraction = 256

// shortest returns the length of the shortest of the lists the plan
// intersects: of a set filter, every set's; of a term, its rarest gram's
// and its number's.
func (p *searchPlan) shortest() uint64 {
	n := uint64(math.MaxUint64)
	if p.sets != nil {
		sum := uint64(0)
		for _, s := range p.sets {
			sum += s.count
		}
		n = sum
	}
	for i := range p.terms {
		n = min(n, p.terms[i].count())
	}
	return n
}
