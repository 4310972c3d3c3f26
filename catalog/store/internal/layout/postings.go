package layout

import "encoding/binary"

// The search index has two parts (see go). The numbers bucket holds
// one entry per card, found by its ordinal: its position in the order zone,
// printed-number key, id. A zone is a range of ordinals, and within it
// ordinals are in result order. The postings bucket maps a trigram of
// folded names, a bigram, a single character, a normalized printed number,
// or a set to the ordered list of the ordinals of its cards. A term is
// looked up by its trigrams when it has three characters or more: they are
// far rarer than bigrams, so a term made of common bigrams (arararar) still
// walks a short list.
//
// A list longer than postingBlockSize ordinals is stored in blocks of that
// many, each under the key of the list followed by its last ordinal, so
// that a cursor Seek finds the block holding the first ordinal at or above
// any bound: a walk skips whole stretches of a long list, and a zone's
// range is one seek away. The key of the list itself holds its length,
// which planning reads, and a shorter list whole.
const (
	PostingTrigram byte = 't' // + three characters of a folded name
	PostingGram    byte = 'g' // + two characters of a folded name
	PostingRune    byte = 'r' // + one character of a folded name
	PostingNumber  byte = 'n' // + the key of a normalized printed number
	PostingSet     byte = 's' // + zone byte + set code
)

// PostingBlockSize is the most ordinals in one block of a list: a seek
// decodes at most this many, and a block's key costs about as much as a
// tenth of it.
const PostingBlockSize = 128

// AppendListKey appends the key of the list kind+term: the kind, then the
// term, uvarint-length-prefixed, so that no list's key is the start of
// another's and its blocks' keys follow it directly.
func AppendListKey[S ~string | ~[]byte](dst []byte, kind byte, term S) []byte {
	dst = append(dst, kind)
	dst = binary.AppendUvarint(dst, uint64(len(term)))
	return append(dst, term...)
}

// AppendSetPostingKey appends the key of the list of the cards of the set
// (zone, code), zone being the catalog.ZoneIndex as a byte.
func AppendSetPostingKey[S ~string | ~[]byte](dst []byte, zone byte, code S) []byte {
	dst = append(dst, PostingSet)
	dst = binary.AppendUvarint(dst, uint64(1+len(code)))
	return append(append(dst, zone), code...)
}

// GramKinds is the kind of the list of a gram of one, two and three
// characters.
var GramKinds = [...]byte{1: PostingRune, 2: PostingGram, 3: PostingTrigram}
