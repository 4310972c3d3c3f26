package store

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"unicode/utf8"

	"github.com/catalogd/catalogd/catalog"
	"github.com/catalogd/catalogd/catalog/store/internal/layout"
	bolt "go.etcd.io/bbolt"
)

// groupLists tells the posting builder which lists a card of a group is
// added to: the group's own, and those of its common grams.
type groupLists struct {
	texts []string
	// common holds the card lists' keys of the grams more than
	// MaxGroupLists groups hold: at most one for every maxGroupLists
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
		if err := addWords(w.words, w.wordsBackward, []byte(text)); err != nil {
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

// appendGroupIDs appends the groups of a card whose folded name is folded, as
// its index entry holds them: a uvarint-length-prefixed run of uvarint
// group indexes, each once.
func (g *nameGroups) appendGroupIDs(dst, folded []byte) []byte {
	var found [8]uint32
	groups := found[:0]
	if len(g.texts) > 0 {
		catalog.EachWholeWords(folded, g.longest, func(words []byte) {
			if !g.lengths[len(words)] {
				return // a cheaper miss than the map's
			}
			for _, id := range g.byName[string(words)] {
				if !slices.Contains(groups, id) {
					groups = append(groups, id)
				}
			}
		})
	}
	var scratch [8 * binary.MaxVarintLen32]byte
	ids := scratch[:0]
	for _, id := range groups {
		ids = binary.AppendUvarint(ids, uint64(id))
	}
	dst = binary.AppendUvarint(dst, uint64(len(ids)))
	return append(dst, ids...)
}

// groupTexts reads the texts of groups for the check of results, keeping
// those it read: the file never changes under a reader.
type groupTexts struct {
	c       *bolt.Cursor
	read    map[uint32][]byte
	key     []byte
	damaged error // the first group found missing in the call
}

// groupTextsKept bounds the texts a reader keeps.
const groupTextsKept = 4096

// text returns the text of group id, valid for the reader's transaction.
func (g *groupTexts) text(id uint32) []byte {
	if t, ok := g.read[id]; ok {
		return t
	}
	g.key = layout.AppendGroupTextKey(g.key[:0], id)
	k, v := g.c.Seek(g.key)
	if !bytes.Equal(k, g.key) {
		if g.damaged == nil {
			g.damaged = damagef("search index damaged: name group %d is missing; import the catalogue again", id)
		}
		return nil
	}
	if g.read == nil || len(g.read) >= groupTextsKept {
		g.read = make(map[uint32][]byte)
	}
	g.read[id] = v
	return v
}

// anyHolds reports whether the text of one of groups, an entry's, holds
// term.
func (g *groupTexts) anyHolds(groups, term []byte) bool {
	found := false
	ok := layout.EachGroupID(groups, func(id uint32) bool {
		found = bytes.Contains(g.text(id), term)
		return !found
	})
	if !ok && g.damaged == nil {
		g.damaged = layout.ErrBadEntry
	}
	return found
}

// planGroups finds the lists of the cards of the groups whose text holds
// text, a term: each group's own list, to be united, when at most
// MaxGroupLists groups may hold it; else two lists of its grams over the
// cards of the groups that hold them, to be intersected (intersect is
// then true). count is the most cards the lists name.
func planGroups(r *reader, text []byte, ref func(c *bolt.Cursor, key []byte) listRef) (lists []listRef, intersect bool, count uint64) {
	n := min(3, utf8.RuneCount(text))
	grams, none := termGrams(nil, text, n, func(key []byte) listRef { return ref(r.groupCursor, key) })
	if none || len(grams) == 0 {
		return nil, false, 0
	}
	apart := appendRarestApart(nil, grams, n)
	var key []byte
	if apart[0].count > layout.MaxGroupLists {
		count = math.MaxUint64
		for _, l := range apart {
			term, _, _ := layout.LengthPrefixed(l.key[1:])
			cards := ref(r.postingCursor, layout.AppendListKey(key[:0], layout.GroupGramKinds[n], term))
			lists = append(lists, cards)
			count = min(count, cards.count)
		}
		return lists, true, count
	}
	walk := make(intersection, len(apart))
	for i, l := range apart {
		sl := newList(&r.groupListCursors, l)
		walk[i] = &sl
	}
	for id, ok := walk.seek(0); ok; id, ok = walk.seek(id + 1) {
		if bytes.Contains(r.groupTexts.text(id), text) {
			l := ref(r.postingCursor, layout.AppendGroupListKey(key[:0], id))
			lists = append(lists, l)
			count += l.count
		}
		if id == math.MaxUint32 {
			break
		}
	}
	return lists, false, count
}
