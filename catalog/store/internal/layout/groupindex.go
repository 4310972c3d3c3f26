package layout

import (
	"encoding/binary"
	"math"
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
// gram that more than MaxGroupLists groups hold, the postings bucket also
// holds the list of the cards of all of them: a term whose grams are all
// that common walks two such lists, as it walks two of its own grams. The
// grams this common are few, and their lists dense enough to be stored as
// bitmaps (see postings.go).
const (
	PostingGroup        byte = 'm' // + 4-byte big-endian group index: the group's cards
	PostingGroupRune    byte = 'R' // + a character held by many groups' names: their cards
	PostingGroupGram    byte = 'B' // + two characters, likewise
	PostingGroupTrigram byte = 'T' // + three characters, likewise

	// GroupTextKey + 4-byte big-endian group index -> the group's text,
	// in the groups bucket, after the grams' lists.
	GroupTextKey byte = 'x'
)

// MaxGroupLists is the most groups whose lists a term's cards are the
// union of; a term in the names of more groups walks the lists of its
// grams over the cards of all of them. Changing it changes the format.
const MaxGroupLists = 32

// GroupGramKinds is the kind of a list of the cards of the groups that
// hold a gram of one, two and three characters.
var GroupGramKinds = [...]byte{1: PostingGroupRune, 2: PostingGroupGram, 3: PostingGroupTrigram}

// AppendGroupListKey appends the key of the list of group id's cards in
// the postings bucket.
func AppendGroupListKey(dst []byte, id uint32) []byte {
	var gid [4]byte
	binary.BigEndian.PutUint32(gid[:], id)
	return AppendListKey(dst, PostingGroup, gid[:])
}

// AppendGroupTextKey appends the key of group id's text in the groups
// bucket.
func AppendGroupTextKey(dst []byte, id uint32) []byte {
	return binary.BigEndian.AppendUint32(append(dst, GroupTextKey), id)
}

// EachGroupID calls fn with each group index of an entry's groups, and
// reports false when they are not as the import writes them.
func EachGroupID(groups []byte, fn func(id uint32) bool) bool {
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
