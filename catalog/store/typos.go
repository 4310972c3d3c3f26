package store

import (
	"bytes"
	"encoding/binary"

	"github.com/catalogd/catalogd/catalog"
	"github.com/catalogd/catalogd/catalog/store/internal/layout"
	bolt "go.etcd.io/bbolt"
)

// A fuzzy search (docs/CONTRACT.md, Typos; docs/SEARCH.md). A term of
// MinFuzzyTerm code points or more, with no digit, may be a word of a
// card's texts (its search text, or a name group's) mistyped: one edit
// away, or two from TwoEditsFrom code points. The plan walks, besides the
// term's own lists, those of every word of the dictionary near it
// (planTypo); the check counts the edits each result takes
// (matchesWithin), and the results are ranked by them (rankByEdits).

// typo is what a fuzzy search knows of a term that may be mistyped.
type typo struct {
	edits     int            // the most a word may be from the term
	automaton *editAutomaton // built when first needed

	// Once planned (the words near it looked up): the fewest edits of
	// those words, 0 when there are none, and whether the term's own
	// lists name a card, which may then take no edit for it.
	planned bool
	nearest int
	exact   bool

	// groupEdits and nameEdits keep, by group and by card name, the
	// fewest edits from the term to a word of the group's text or of the
	// name (0 for none within): the cards a walk checks share a few
	// groups and, in most catalogues, their names, whose words would
	// otherwise be measured again for each card. At most groupTextsKept
	// groups a term; the names of all the query's terms share kept, at
	// most keptNameBytes.
	groupEdits map[uint32]int
	nameEdits  map[string]int
	kept       *int
}

// keptNameBytes bounds what a query's terms keep of names, whatever the
// number of its terms (folding may make a query of 200 code points into
// many more): each name's bytes and keptNameCost for its entry.
const (
	keptNameBytes = 256 << 10
	keptNameCost  = 48
)

// markTypos marks the terms a fuzzy search lets be mistyped.
func markTypos(terms []term) {
	kept := new(int)
	for i := range terms {
		if e := maxEdits(terms[i].text); e > 0 {
			terms[i].typo = &typo{edits: e, kept: kept}
		}
	}
}

// automaton returns the term's edit automaton.
func (t *term) automaton() *editAutomaton {
	if t.typo.automaton == nil {
		t.typo.automaton = newEditAutomaton(t.text, t.typo.edits)
	}
	return t.typo.automaton
}

// planTypo returns the lists of the words of the dictionary near the
// term: of a word that names its few cards, those cards; of another, the
// lists a term's own are found by, its names' grams and its groups.
func planTypo(r *reader, t *term, words dictionary, longestName int, refIn func(*bolt.Cursor, []byte) listRef) ([]termRef, error) {
	near, err := nearWords(words, t.automaton())
	if err != nil || len(near) == 0 {
		return nil, err
	}
	ref := func(key []byte) listRef { return refIn(r.postingCursor, key) }
	refs := make([]termRef, len(near))
	for i, w := range near {
		nt := &term{text: w.word}
		cards, n, ok := layout.WordCards(w.cards)
		if !ok {
			return nil, damagef("dictionary damaged: word %q names no cards (%#x); import the catalogue again", w.word, w.cards)
		}
		if n > 0 {
			refs[i] = termRef{term: nt, byName: []listRef{cardsList(w.word, cards[:n])}}
			continue
		}
		// A walk of near words takes two grams of each (zoneWalks).
		refs[i] = termRef{term: nt}
		refs[i].byName, _ = appendNameLists(nil, w.word, longestName, ref)
		refs[i].byGroup, refs[i].byGrams, refs[i].inGroups = planGroups(r, w.word, refIn)
	}
	t.typo.nearest = near[0].edits
	for _, w := range near[1:] {
		t.typo.nearest = min(t.typo.nearest, w.edits)
	}
	return refs, nil
}

// cardsList returns a list held whole of cards, ascending ordinals, the
// cards of a word of the dictionary (its key names the word in a report
// of damage).
func cardsList(word []byte, cards []uint32) listRef {
	l := listRef{key: append([]byte("word "), word...), count: uint64(len(cards))}
	prev := uint32(0)
	for _, c := range cards {
		l.inline = binary.AppendUvarint(l.inline, uint64(c-prev))
		prev = c
	}
	return l
}

// leastEdits reports whether a result of the terms may take edits, and
// the fewest any takes. A planned term takes none when its own lists name
// a card, else at least its nearest word's; an unplanned one may take
// none.
func leastEdits(terms []termRef) (typos bool, least int) {
	for i := range terms {
		ty := terms[i].term.typo
		switch {
		case ty == nil:
		case !ty.planned:
			typos = true
		case ty.nearest > 0:
			typos = true
			if !ty.exact {
				least += ty.nearest
			}
		}
	}
	return typos, least
}

// matchesWithin reports whether every term matches the entry as matches
// has it, or, for a term that may be mistyped, is within its edits of a
// word of the entry's texts; e.edits is then the sum of those edits.
func matchesWithin(e *layout.IndexEntry, terms []term, groups *groupTexts) bool {
	e.Edits = 0
	for i := range terms {
		t := &terms[i]
		if bytes.Contains(e.Name, t.text) || string(e.Number) == t.number || groups.anyHolds(e.Groups, t.text) {
			continue
		}
		if t.typo == nil {
			return false
		}
		d, ok := t.nearest(e, groups)
		if !ok {
			return false
		}
		e.Edits += d
	}
	return true
}

// nearest returns the fewest edits from the term to a word of the
// dictionary in the entry's texts, and false when none is within the
// term's edits.
func (t *term) nearest(e *layout.IndexEntry, groups *groupTexts) (int, bool) {
	best, ok := t.typo.nameEdits[string(e.Name)]
	if !ok {
		best = t.nearestWord(e.Name)
		if t.typo.nameEdits == nil {
			t.typo.nameEdits = make(map[string]int)
		}
		if cost := len(e.Name) + keptNameCost; *t.typo.kept+cost <= keptNameBytes {
			t.typo.nameEdits[string(e.Name)] = best
			*t.typo.kept += cost
		}
	}
	if best == 1 {
		return 1, true // no word is nearer
	}
	layout.EachGroupID(e.Groups, func(id uint32) bool {
		d, ok := t.typo.groupEdits[id]
		if !ok {
			d = t.nearestWord(groups.text(id))
			if t.typo.groupEdits == nil {
				t.typo.groupEdits = make(map[uint32]int)
			}
			if len(t.typo.groupEdits) < groupTextsKept {
				t.typo.groupEdits[id] = d
			}
		}
		if d > 0 && (best == 0 || d < best) {
			best = d
		}
		return best != 1
	})
	return best, best > 0
}

// nearestWord returns the fewest edits, more than none, from the term to
// a word of the dictionary in text, and 0 when none is within the term's
// edits.
func (t *term) nearestWord(text []byte) int {
	a := t.automaton()
	best := 0
	catalog.EachWord(text, func(word []byte) {
		if best == 1 || !layout.DictWord(word) {
			return
		}
		if d, ok := a.distance(word); ok && d > 0 && (best == 0 || d < best) {
			best = d
		}
	})
	return best
}

// rankByEdits calls fn with the cards of the walks' results, at most
// limit: those that take the fewest edits first, then in result order. A
// result after limit others that take as few edits or fewer can never be
// given, so the walk ends once limit results take least, the fewest any
// can.
func rankByEdits(walks []*zoneWalk, r *reader, limit, least int, check func(*layout.IndexEntry) bool, fn func(card []byte)) error {
	var byEdits [][][]byte // card keys of the results, by their edits
	err := merge(walks, check, func(e *layout.IndexEntry) (bool, error) {
		ahead := 0
		for s := 0; s <= e.Edits && s < len(byEdits); s++ {
			ahead += len(byEdits[s])
		}
		if ahead < limit {
			for len(byEdits) <= e.Edits {
				byEdits = append(byEdits, nil)
			}
			byEdits[e.Edits] = append(byEdits[e.Edits], appendEntryCardKey(nil, e))
		}
		return least >= len(byEdits) || len(byEdits[least]) < limit, nil
	})
	if err != nil {
		return err
	}
	given := 0
	for _, keys := range byEdits {
		for _, key := range keys {
			if given == limit {
				return nil
			}
			k, card := r.cardCursor.Seek(key)
			if !bytes.Equal(k, key) {
				return damagef("search index damaged: card key %q is missing", key)
			}
			fn(card)
			given++
		}
	}
	return nil
}
