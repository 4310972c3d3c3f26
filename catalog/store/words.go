package store

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
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
// script, in pieces of at most wordPieceBytes; and the words a term of two
// edits may be near written backwards, sorted likewise. A term's words are
// those its edit automaton accepts, found by walking the pieces with it
// (see nearWords); each word is then looked up in the index as a term
// would be.

const (
	minBackwardWord = layout.TwoEditsFrom - 2

	// wordPieceBytes bounds a piece of the dictionary: what the import
	// holds of it before it is put, and what one value of the file is.
	wordPieceBytes = 2 << 20

	// wordSortMemory bounds the sort of the words before they spill.
	wordSortMemory = 8 << 20
)

// dictionary is the pieces of the dictionary, by script: forward, and
// backward.
type dictionary struct {
	forward, backward [layout.WordScripts][]*vellum.FST
}

// wordScript returns the script of a word: that of its first letter of a
// script (catalog.ScriptOf), 0 when it has none. A change of script ends a word
// (catalog.EachWord), so its other letters are of that script too, or of none.
// A term within a few edits of a word shares most of its letters, so it
// is looked for among the words of its own scripts only: a Latin term
// never walks the millions of Han and kana words.
func wordScript(word []byte) byte {
	for _, r := range string(word) {
		if s := catalog.ScriptOf(r); s != 0 {
			return byte(s)
		}
	}
	return 0
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

// addWords adds the words of a text to the sorts of the dictionary, which
// keep each once, after its script: forward, and backward those that a
// term of two edits may be near.
func addWords(forward, backward *sorter, text []byte) error {
	var err error
	var key []byte
	catalog.EachWord(text, func(word []byte) {
		if err != nil || !layout.DictWord(word) {
			return
		}
		key = append(append(key[:0], wordScript(word)), word...)
		if err = forward.add(key, nil); err == nil && utf8.RuneCount(word) >= minBackwardWord {
			key = layout.AppendReversed(key[:1], word)
			err = backward.add(key, nil)
		}
	})
	return err
}

// wordBuild builds the dictionary in a goroutine of its own, beside the
// writing of the index: it takes the search texts as the entries are
// written, in batches, sorts their words, and once the last text is in,
// builds the pieces of the dictionary, which writeWords puts. It needs
// nothing of the file, and on two cores costs the import little time.
type wordBuild struct {
	texts  chan []byte // batches of uvarint-length-prefixed texts
	batch  []byte
	closed bool
	pieces chan wordPiece
	stop   chan struct{}
	err    error // once pieces is closed
}

// wordPiece is a piece of the dictionary: forward or backward, and the
// script of its words.
type wordPiece struct {
	kind, script byte
	fst          []byte
}

// wordBatchBytes is the size of a batch of texts handed to the build, and
// recentTexts the texts it remembers so as not to add their words again.
const (
	wordBatchBytes = 64 << 10
	recentTexts    = 8192
)

// startWords starts the build of the dictionary from the words added to
// w.words so far and the texts add is given; w.words is the build's from
// now on.
func (w *Writer) startWords() *wordBuild {
	b := &wordBuild{texts: make(chan []byte, 4), pieces: make(chan wordPiece, 1), stop: make(chan struct{})}
	forward, backward := w.words, w.wordsBackward
	go func() {
		defer close(b.pieces)
		var err error
		// Names repeat: a text met lately adds no word.
		seen := make(map[string]struct{})
		for batch := range b.texts {
			for len(batch) > 0 && err == nil {
				text, rest, ok := layout.LengthPrefixed(batch)
				if !ok {
					err = layout.ErrBadEntry
				}
				batch = rest
				if _, ok := seen[string(text)]; ok {
					continue
				}
				if len(seen) == recentTexts {
					clear(seen)
				}
				seen[string(text)] = struct{}{}
				err = cmp.Or(err, addWords(forward, backward, text))
			}
		}
		for _, kind := range []byte{layout.WordsForward, layout.WordsBackward} {
			words := forward
			if kind == layout.WordsBackward {
				words = backward
			}
			if err == nil {
				err = buildWordPieces(words, func(script byte, fst []byte) bool {
					select {
					case b.pieces <- wordPiece{kind, script, fst}:
						return true
					case <-b.stop:
						return false
					}
				})
			}
		}
		b.err = err
	}()
	return b
}

// add hands the words of a search text to the build.
func (b *wordBuild) add(text []byte) {
	b.batch = binary.AppendUvarint(b.batch, uint64(len(text)))
	b.batch = append(b.batch, text...)
	if len(b.batch) >= wordBatchBytes {
		b.texts <- b.batch
		b.batch = nil
	}
}

// done tells the build that every text is in.
func (b *wordBuild) done() {
	if b.closed {
		return
	}
	if len(b.batch) > 0 {
		b.texts <- b.batch
	}
	close(b.texts)
	b.closed = true
}

// cancel stops the build and waits for it to end.
func (b *wordBuild) cancel() {
	b.done()
	close(b.stop)
	for range b.pieces {
	}
}

// writeWords puts the pieces of the dictionary as they are built.
func (w *Writer) writeWords(b *wordBuild) error {
	b.done()
	numbers := make(map[[2]byte]uint32)
	for piece := range b.pieces {
		at := [2]byte{piece.kind, piece.script}
		key := binary.BigEndian.AppendUint32(at[:], numbers[at])
		if err := w.putOrdered(layout.BucketWords, key, piece.fst); err != nil {
			b.cancel()
			return err
		}
		numbers[at]++
	}
	if b.err != nil {
		return fmt.Errorf("write catalogue %s: dictionary: %w", w.path, b.err)
	}
	return nil
}

// buildWordPieces builds FSTs of the sorted words, each once, and gives
// each to put with the script of its words, when it has about
// wordPieceBytes or the script changes, until put returns false. Each
// sorted word starts with its script.
func buildWordPieces(words *sorter, put func(script byte, piece []byte) bool) error {
	var piece bytes.Buffer
	var b *vellum.Builder
	var last []byte
	stopped := errors.New("stopped")
	flush := func() error {
		if b == nil {
			return nil
		}
		if err := b.Close(); err != nil {
			return err
		}
		b = nil
		if !put(last[0], bytes.Clone(piece.Bytes())) {
			return stopped
		}
		piece.Reset()
		return nil
	}
	err := words.each(func(key, _ []byte) error {
		if len(key) < 2 || int(key[0]) >= layout.WordScripts {
			return fmt.Errorf("sorted word %q: %w", key, layout.ErrBadEntry)
		}
		if last != nil && bytes.Equal(key, last) {
			return nil
		}
		if last != nil && key[0] != last[0] {
			if err := flush(); err != nil {
				return err
			}
		}
		last = append(last[:0], key...)
		if b == nil {
			var err error
			if b, err = vellum.New(&piece, nil); err != nil {
				return err
			}
		}
		if err := b.Insert(key[1:], 0); err != nil {
			return fmt.Errorf("word %q: %w", key[1:], err)
		}
		if piece.Len() >= wordPieceBytes {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	if err == stopped {
		return nil
	}
	return err
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

// nearWord is a word of the dictionary a few edits from a term.
type nearWord struct {
	word  []byte
	edits int
}

// nearWords returns the words of the dictionary that whole, a term's
// automaton, accepts, other than the term itself, whose own lists are the
// term's.
//
// With one edit, the forward pieces of the term's scripts are walked
// with its automaton. With two, that walk would reach every prefix of two
// characters and most of three: tens of milliseconds on millions of words.
// So the term is cut in two halves, and a word within two edits has a
// start within one edit of the first half, or an end within one edit of
// the second: an alignment of the word with the term costs at most two,
// cut where the halves meet it costs at most three (a swap across the
// cut is two substitutions), so one half costs at most one. The words of
// the first kind are found in the forward pieces, walked with the term's
// automaton held to starts near the first half (prefixedAutomaton); those
// of the second in the backward pieces, likewise with everything
// reversed. A word within two edits of a term of TwoEditsFrom code points
// has minBackwardWord or more, which the backward pieces hold.
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
	add := func(word []byte) {
		if !bytes.Equal(word, term) && !seen[string(word)] {
			seen[string(word)] = true
			edits, _ := whole.distance(word)
			words = append(words, nearWord{bytes.Clone(word), edits})
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
		walks = []walk{
			{&dict.forward, newPrefixedAutomaton(whole, newEditAutomaton([]byte(string(runes[:half])), 1)), false},
			{&dict.backward, newPrefixedAutomaton(newEditAutomaton(layout.AppendReversed(nil, term), 2), newEditAutomaton(layout.AppendReversed(nil, []byte(string(runes[half:]))), 1)), true},
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
				found, _ := it.Current()
				if walk.back {
					found = layout.AppendReversed(word[:0], found)
				}
				add(found)
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
