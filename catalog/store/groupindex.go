package store

import (
	"bytes"
	"math"
	"unicode/utf8"

	"github.com/catalogd/catalogd/catalog/store/internal/layout"
	bolt "go.etcd.io/bbolt"
)

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
	apart, n := groupGrams(r, text, ref)
	if len(apart) == 0 {
		return nil, false, 0
	}
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
	eachGroupHolding(r, text, apart, func(id uint32) {
		l := ref(r.postingCursor, layout.AppendGroupListKey(key[:0], id))
		lists = append(lists, l)
		count += l.count
	})
	return lists, false, count
}

// groupGrams returns the lists of groups of the two grams of text, a
// term, that planGroups walks (appendRarestApart), and the grams' length;
// none when a gram of it is in no group's text.
func groupGrams(r *reader, text []byte, ref func(c *bolt.Cursor, key []byte) listRef) ([]listRef, int) {
	n := min(3, utf8.RuneCount(text))
	grams, none := termGrams(nil, text, n, func(key []byte) listRef { return ref(r.groupCursor, key) })
	if none || len(grams) == 0 {
		return nil, n
	}
	apart, _ := appendRarestApart(nil, grams, n)
	return apart, n
}

// eachGroupHolding calls fn with each group whose text holds text, among
// those on every one of apart, the lists of groups of its grams: none
// when apart is empty.
func eachGroupHolding(r *reader, text []byte, apart []listRef, fn func(id uint32)) {
	if len(apart) == 0 {
		return
	}
	walk := make(intersection, len(apart))
	for i, l := range apart {
		sl := newList(&r.groupListCursors, l)
		walk[i] = &sl
	}
	for id, ok := walk.seek(0); ok; id, ok = walk.seek(id + 1) {
		if bytes.Contains(r.groupTexts.text(id), text) {
			fn(id)
		}
		if id == math.MaxUint32 {
			break
		}
	}
}
