package build

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/catalogd/catalogd/catalog"
	"github.com/catalogd/catalogd/catalog/store/internal/layout"
)

// groupLists tells the posting builder which lists a card of a group is
// added to: the group's own, and those of its common grams.
type groupLists struct {
	texts []string
	// common holds the card lists' keys of the grams more than
	// MaxGroupLists groups hold: at most one for every MaxGroupLists
	// postings of the groups' grams.
	common map[string]struct{}
	key    []byte
}

// eachKey calls fn with the key of every list a card of group id is on.
func (g *groupLists) eachKey(id uint32, fn func(key []byte)) {
	g.key = layout.AppendGroupListKey(g.key[:0], id)
	fn(g.key)
	if len(g.common) == 0 {
		return
	}
	layout.EachShortGram([]byte(g.texts[id]), func(n int, gram []byte) {
		g.key = layout.AppendListKey(g.key[:0], layout.GroupGramKinds[n], gram)
		if _, ok := g.common[string(g.key)]; ok {
			fn(g.key)
		}
	})
}

// writeGroups writes the groups bucket: the lists of the grams of the
// groups' texts over group indexes, then each group's text. It returns
// what the postings of the cards need of the groups.
func (w *Writer) writeGroups() (*groupLists, error) {
	g := &groupLists{texts: w.groups.texts, common: make(map[string]struct{})}
	if len(g.texts) == 0 {
		return g, nil
	}
	postings := w.newPostings()
	defer postings.close()
	for id, text := range g.texts {
		if err := postings.addGrams(uint32(id), []byte(text)); err != nil {
			return nil, fmt.Errorf("write catalogue %s: name groups: %w", w.path, err)
		}
		if err := addWords(w.words, w.wordsBackward, []byte(text), layout.GroupWord); err != nil {
			return nil, fmt.Errorf("write catalogue %s: name groups: %w", w.path, err)
		}
	}
	put := func(key, value []byte) error { return w.putOrdered(layout.BucketGroups, key, value) }
	if err := postings.write(put); err != nil {
		return nil, err
	}
	var key []byte
	for id, text := range g.texts {
		key = layout.AppendGroupTextKey(key[:0], uint32(id))
		if err := put(key, []byte(text)); err != nil {
			return nil, err
		}
	}
	c := w.tx.Bucket(layout.BucketGroups).Cursor()
	for k, v := c.First(); k != nil && k[0] != layout.GroupTextKey; k, v = c.Next() {
		term, rest, ok := layout.LengthPrefixed(k[1:])
		n, _ := binary.Uvarint(v)
		if ok && len(rest) == 0 && n > layout.MaxGroupLists {
			g.common[string(layout.AppendListKey(nil, layout.GroupGramKinds[gramLength(k[0])], term))] = struct{}{}
		}
	}
	return g, nil
}

// gramLength returns the characters of a gram of a list of that kind.
func gramLength(kind byte) int {
	switch kind {
	case layout.PostingRune:
		return 1
	case layout.PostingGram:
		return 2
	}
	return 3
}

// named returns the groups one of whose names, folded, is name.
func (g *nameGroups) named(name []byte) []uint32 {
	if len(name) >= len(g.lengths) || !g.lengths[len(name)] {
		return nil // a cheaper miss than the map's
	}
	return g.byName[string(name)]
}

// appendGroupIDs appends the groups of a card whose folded name is folded,
// and printed as printed, as its index entry holds them: a
// uvarint-length-prefixed run of uvarint group indexes, each once. A name
// of the groups stands in the folded name as whole words, or in the
// printed name's words apart (catalog.SplitUnspacedWords), folded; or it
// ends a word of kana or Han of the latter (of the folded name, when
// nothing is apart) that is no name of a group (catalog.EachWordEnding).
//
// A name in more than MaxCardGroups groups is an error (ErrTooManyGroups):
// real names hold one to three, and each group of a card is read by every
// search that finds it.
func (g *nameGroups) appendGroupIDs(dst, folded, printed []byte) ([]byte, error) {
	var found [8]uint32
	groups := found[:0]
	add := func(words []byte) bool {
		ids := g.named(words)
		for _, id := range ids {
			if len(groups) > MaxCardGroups {
				break // an error below: no more are kept
			}
			if !slices.Contains(groups, id) {
				groups = append(groups, id)
			}
		}
		return len(ids) > 0
	}
	addWholeWords := func(words []byte) { add(words) }
	addEnding := func(word []byte) {
		if g.named(word) == nil {
			catalog.EachWordEnding(word, add) // the longest name only
		}
	}
	if len(g.texts) > 0 {
		catalog.EachWholeWords(folded, g.longest, addWholeWords)
		words := folded // the words whose endings may be names
		if apart, ok := catalog.SplitUnspacedWords(printed); ok {
			// Folded, a particle is katakana and would run into the word
			// after it: ロケット団のコラッタ would end in コラッタ's ラッタ.
			words = []byte(catalog.Fold(string(apart)))
			catalog.EachWholeWords(words, g.longest, addWholeWords)
		}
		catalog.EachWord(words, addEnding)
	}
	if len(groups) > MaxCardGroups {
		return dst, fmt.Errorf("named %s: %w", catalog.Quote(string(printed)), ErrTooManyGroups)
	}
	var scratch [8 * binary.MaxVarintLen32]byte
	ids := scratch[:0]
	for _, id := range groups {
		ids = binary.AppendUvarint(ids, uint64(id))
	}
	dst = binary.AppendUvarint(dst, uint64(len(ids)))
	return append(dst, ids...), nil
}

// MaxCardGroups is the most name groups a card's name may hold the names of.
const MaxCardGroups = 64

// ErrTooManyGroups is the error of a catalogue one of whose cards' names
// holds the names of more than MaxCardGroups name groups.
var ErrTooManyGroups = fmt.Errorf("its name holds names of more than %d name groups; a name is of one to three: check the name groups", MaxCardGroups)
