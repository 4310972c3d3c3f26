package store

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"unicode/utf8"

	"github.com/catalogd/catalogd/catalog"
	bolt "go.etcd.io/bbolt"
)

// The name groups in the search index (docs/SEARCH.md, Name groups). Each
// group is indexed once, not once per card: its text (its names, folded,
// and their romanized forms) is posted in the groups bucket by the grams
// of its names over group indexes, and the postings bucket holds the list
// of each group's cards. A term's groups are found among the groups, then
// its cards are the union of their lists. A card's index entry holds its
// groups, and the check of a result reads their texts.
//
// A term of a few common characters is in the names of hundreds of groups,
// and a union of hundreds of lists costs hundreds of seeks. So for every
// gram that more than maxGroupLists groups hold, the postings bucket also
// holds the list of the cards of all of them: a term whose grams are all
// that common walks two such lists, as it walks two of its own grams. The
// grams this common are few, and their lists dense enough to be stored as
// bitmaps (see postings.go).
const (
	postingGroup        byte = 'm' // + 4-byte big-endian group index: the group's cards
	postingGroupRune    byte = 'R' // + a character held by many groups' names: their cards
	postingGroupGram    byte = 'B' // + two characters, likewise
	postingGroupTrigram byte = 'T' // + three characters, likewise

	// groupTextKey + 4-byte big-endian group index -> the group's text,
	// in the groups bucket, after the grams' lists.
	groupTextKey byte = 'x'
)

// maxGroupLists is the most groups whose lists a term's cards are the
// union of; a term in the names of more groups walks the lists of its
// grams over the cards of all of them. Changing it changes the format.
const maxGroupLists = 32

// groupGramKinds is the kind of a list of the cards of the groups that
// hold a gram of one, two and three characters.
var groupGramKinds = [...]byte{1: postingGroupRune, 2: postingGroupGram, 3: postingGroupTrigram}

// appendGroupListKey appends the key of the list of group id's cards in
// the postings bucket.
func appendGroupListKey(dst []byte, id uint32) []byte {
	var gid [4]byte
	binary.BigEndian.PutUint32(gid[:], id)
	return appendListKey(dst, postingGroup, gid[:])
}

// appendGroupTextKey appends the key of group id's text in the groups
// bucket.
func appendGroupTextKey(dst []byte, id uint32) []byte {
	return binary.BigEndian.AppendUint32(append(dst, groupTextKey), id)
}

// groupLists tells the posting builder which lists a card of a group is
// added to: the group's own, and those of its common grams.
type groupLists struct {
	texts []string
	// common holds the card lists' keys of the grams more than
	// maxGroupLists groups hold: at most one for every maxGroupLists
	// postings of the groups' grams.
	common map[string]struct{}
	key    []byte
}

// eachKey calls fn with the key of every list a card of group id is on.
func (g *groupLists) eachKey(id uint32, fn func(key []byte)) {
	g.key = appendGroupListKey(g.key[:0], id)
	fn(g.key)
	if len(g.common) == 0 {
		return
	}
	eachShortGram([]byte(g.texts[id]), func(n int, gram []byte) {
		g.key = appendListKey(g.key[:0], groupGramKinds[n], gram)
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
	put := func(key, value []byte) error { return w.putOrdered(bucketGroups, key, value) }
	if err := postings.write(put); err != nil {
		return nil, err
	}
	var key []byte
	for id, text := range g.texts {
		key = appendGroupTextKey(key[:0], uint32(id))
		if err := put(key, []byte(text)); err != nil {
			return nil, err
		}
	}
	c := w.tx.Bucket(bucketGroups).Cursor()
	for k, v := c.First(); k != nil && k[0] != groupTextKey; k, v = c.Next() {
		term, rest, ok := lengthPrefixed(k[1:])
		n, _ := binary.Uvarint(v)
		if ok && len(rest) == 0 && n > maxGroupLists {
			g.common[string(appendListKey(nil, groupGramKinds[gramLength(k[0])], term))] = struct{}{}
		}
	}
	return g, nil
}

// gramLength returns the characters of a gram of a list of that kind.
func gramLength(kind byte) int {
	switch kind {
	case postingRune:
		return 1
	case postingGram:
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

// eachGroupID calls fn with each group index of an entry's groups, and
// reports false when they are not as the import writes them.
func eachGroupID(groups []byte, fn func(id uint32) bool) bool {
	for len(groups) > 0 {
		id, w := binary.Uvarint(groups)
		if w <= 0 || id > math.MaxUint32 {
			return false
		}
		if !fn(uint32(id)) {
			return true
		}
		groups = groups[w:]
	}
	return true
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
	g.key = appendGroupTextKey(g.key[:0], id)
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
	ok := eachGroupID(groups, func(id uint32) bool {
		found = bytes.Contains(g.text(id), term)
		return !found
	})
	if !ok && g.damaged == nil {
		g.damaged = errBadEntry
	}
	return found
}

// planGroups finds the lists of the cards of the groups whose text holds
// text, a term: each group's own list, to be united, when at most
// maxGroupLists groups may hold it; else two lists of its grams over the
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
	if apart[0].count > maxGroupLists {
		count = math.MaxUint64
		for _, l := range apart {
			term, _, _ := lengthPrefixed(l.key[1:])
			cards := ref(r.postingCursor, appendListKey(key[:0], groupGramKinds[n], term))
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
			l := ref(r.postingCursor, appendGroupListKey(key[:0], id))
			lists = append(lists, l)
			count += l.count
		}
		if id == math.MaxUint32 {
			break
		}
	}
	return lists, false, count
}
