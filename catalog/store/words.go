package store

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"unicode/utf8"

	"github.com/blevesearch/vellum"
	"github.com/catalogd/catalogd/catalog"
	"github.com/catalogd/catalogd/catalog/store/internal/layout"
	bolt "go.etcd.io/bbolt"
)

// The dictionary of words a fuzzy search finds a mistyped term's words in
// (docs/CONTRACT.md, Typos; docs/SEARCH.md): every word of the cards'
// search texts and of the name groups' texts that a term may be a few
// edits from, sorted and stored as finite-state transducers (vellum), by
// script, in pieces of a bounded size (build/words.go); and the words a term of two
// edits may be near written backwards, sorted likewise. A term's words are
// those its edit automaton accepts, found by walking the pieces with it
// (see nearWords); each word is then looked up by the cards its value
// names, or, when it names none, in the index as a term would be
// (planTypo).

// dictionary is the pieces of the dictionary, by script: forward, and
// backward.
type dictionary struct {
	forward, backward [layout.WordScripts][]*vellum.FST
}

// maxEdits returns how many edits from a word a fuzzy search lets term,
// folded, be: none for a term of fewer than MinFuzzyTerm code points or
// with a digit in it (a printed number or a code is typed as printed), one
// up to TwoEditsFrom code points, two from there.
func maxEdits(term []byte) int {
	n := utf8.RuneCount(term)
	switch {
	case n < layout.MinFuzzyTerm || layout.HasDigit(term):
		return 0
	case n < layout.TwoEditsFrom:
		return 1
	}
	return 2
}

// loadWords reads the pieces of the dictionary, which stay in the file's
// mapping: a piece is one value, and bbolt keeps a value in pages in a
// row.
func loadWords(tx *bolt.Tx) (dictionary, error) {
	var d dictionary
	b := tx.Bucket(layout.BucketWords)
	if b == nil {
		return d, fmt.Errorf("bucket %s missing", layout.BucketWords)
	}
	c := b.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if len(k) != 6 || k[0] != layout.WordsForward && k[0] != layout.WordsBackward || int(k[1]) >= layout.WordScripts {
			return d, damagef("dictionary damaged: %x is not a key of a piece", k)
		}
		pieces := &d.forward[k[1]]
		if k[0] == layout.WordsBackward {
			pieces = &d.backward[k[1]]
		}
		if binary.BigEndian.Uint32(k[2:]) != uint32(len(*pieces)) {
			return d, damagef("dictionary damaged: piece %x out of order", k)
		}
		fst, err := vellum.Load(v)
		if err != nil {
			return d, damagef("dictionary damaged: piece %x: %v", k, err)
		}
		*pieces = append(*pieces, fst)
	}
	return d, nil
}

// nearWord is a word of the dictionary a few edits from a term, with
// its value (layout.WordCards).
type nearWord struct {
	word  []byte
	edits int
	cards uint64
}

// nearWords returns the words of the dictionary that whole, a term's
// automaton, accepts, other than the term itself, whose own lists are the
// term's.
//
// With one edit, the forward pieces of the term's scripts are walked
// with its automaton. With two, that walk would reach every prefix of two
// characters and most of three: tens of milliseconds on millions of words.
// So the term is cut in two halves. An alignment of a word with the term
// costs at most two; cut where the halves meet, the second half's part
// costs at most one, or else it costs two and the first half's nothing
// but its share of a swap across the cut: the word starts with the first
// half as it is, or, when a swap crosses the cut, with the first half's
// last character replaced by the second's first. The words of the first
// kind are found in the backward pieces, walked with the term's automaton
// reversed and held to starts within one edit of the second half reversed
// (prefixedAutomaton); those of the second in the forward pieces, held to
// those two starts, which leave few branches to walk. A word within two
// edits of a term of TwoEditsFrom code points has the build's
// minBackwardWord or more, which the backward pieces hold.
//
// A damaged piece makes vellum panic: it is told as a damaged file.
func nearWords(dict dictionary, whole *editAutomaton) (words []nearWord, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = damagef("dictionary damaged: %v; import the catalogue again", v)
		}
	}()
	runes, edits := whole.term, whole.edits
	term := []byte(string(runes))
	seen := make(map[string]bool)
	add := func(word []byte, cards uint64) {
		if !bytes.Equal(word, term) && !seen[string(word)] {
			seen[string(word)] = true
			edits, _ := whole.distance(word)
			words = append(words, nearWord{bytes.Clone(word), edits, cards})
		}
	}
	type walk struct {
		pieces *[layout.WordScripts][]*vellum.FST
		a      vellum.Automaton
		back   bool
	}
	walks := []walk{{&dict.forward, whole, false}}
	if edits == 2 {
		half := len(runes) / 2
		start := func(first []rune) walk {
			return walk{&dict.forward, newPrefixedAutomaton(whole, newEditAutomaton([]byte(string(first)), 0)), false}
		}
		walks = []walk{
			start(runes[:half]),
			{&dict.backward, newPrefixedAutomaton(newEditAutomaton(layout.AppendReversed(nil, term), 2), newEditAutomaton(layout.AppendReversed(nil, []byte(string(runes[half:]))), 1)), true},
		}
		if runes[half-1] != runes[half] {
			swapped := append(slices.Clone(runes[:half-1]), runes[half])
			walks = append(walks, start(swapped))
		}
	}
	// The words of the term's scripts, and of none.
	var pieces []*vellum.FST
	scriptsOf := func(dict *[layout.WordScripts][]*vellum.FST) []*vellum.FST {
		pieces = append(pieces[:0], dict[0]...)
		var seen [layout.WordScripts]bool
		for _, r := range runes {
			if s := catalog.ScriptOf(r); s != 0 && !seen[s] {
				seen[s] = true
				pieces = append(pieces, dict[s]...)
			}
		}
		return pieces
	}
	var word []byte
	for _, walk := range walks {
		for _, p := range scriptsOf(walk.pieces) {
			it, err := p.Search(walk.a, nil, nil)
			for err == nil {
				found, cards := it.Current()
				if walk.back {
					found = layout.AppendReversed(word[:0], found)
				}
				add(found, cards)
				err = it.Next()
			}
			if err != vellum.ErrIteratorDone {
				return nil, damagef("dictionary damaged: %v; import the catalogue again", err)
			}
		}
	}
	return words, nil
}

// prefixedAutomaton accepts the words whole accepts that start with a
// prefix that prefix accepts. Its bytes fall in whole's classes, which
// tell apart every byte prefix tells apart: prefix's term is a part of
// whole's.
type prefixedAutomaton struct {
	whole, prefix *editAutomaton
	states        [][2]int32 // whole's state, and prefix's or -1 once a prefix was accepted
	ids           map[[2]int32]int32
	next          []int32 // as editAutomaton's
}

func newPrefixedAutomaton(whole, prefix *editAutomaton) *prefixedAutomaton {
	a := &prefixedAutomaton{whole: whole, prefix: prefix, ids: make(map[[2]int32]int32)}
	a.states = append(a.states, [2]int32{}) // 0, dead
	a.next = make([]int32, whole.classes, 64*whole.classes)
	p := int32(prefix.Start())
	if prefix.IsMatch(int(p)) {
		p = -1
	}
	a.intern(int32(whole.Start()), p)
	return a
}

func (a *prefixedAutomaton) intern(whole, prefix int32) int {
	if whole == 0 || prefix == 0 {
		return 0
	}
	if id, ok := a.ids[[2]int32{whole, prefix}]; ok {
		return int(id)
	}
	id := int32(len(a.states))
	a.states = append(a.states, [2]int32{whole, prefix})
	a.ids[[2]int32{whole, prefix}] = id
	a.next = append(a.next, make([]int32, a.whole.classes)...)
	return int(id)
}

// Start, IsMatch, CanMatch, WillAlwaysMatch and Accept make it a
// vellum.Automaton.
func (a *prefixedAutomaton) Start() int { return 1 }
func (a *prefixedAutomaton) IsMatch(s int) bool {
	st := a.states[s]
	return s != 0 && st[1] < 0 && a.whole.IsMatch(int(st[0]))
}
func (a *prefixedAutomaton) CanMatch(s int) bool      { return s != 0 }
func (a *prefixedAutomaton) WillAlwaysMatch(int) bool { return false }

func (a *prefixedAutomaton) Accept(s int, b byte) int {
	at := s*a.whole.classes + int(a.whole.class[b])
	if n := a.next[at]; n != 0 {
		return int(n) - 1
	}
	n := 0
	if s != 0 {
		st := a.states[s]
		whole, prefix := int32(a.whole.Accept(int(st[0]), b)), st[1]
		if prefix > 0 {
			if prefix = int32(a.prefix.Accept(int(prefix), b)); prefix != 0 && a.prefix.IsMatch(int(prefix)) {
				prefix = -1
			}
		}
		n = a.intern(whole, prefix)
	}
	a.next[at] = int32(n) + 1
	return n
}
