package layout

import "encoding/binary"

// The search index has two parts (see layout.go). The numbers bucket holds
// one entry per card, found by its ordinal: its position in the order zone,
// printed-number key, id. A zone is a range of ordinals, and within it
// ordinals are in result order. The postings bucket maps a trigram of
// folded names, a bigram, a single character, a normalized printed number,
// or a set to the ordered list of the ordinals of its cards. A term is
// looked up by its trigrams when it has three characters or more: they are
// far rarer than bigrams, so a term made of common bigrams (arararar) still
// walks a short list.
//
// A list longer than PostingBlockSize ordinals is stored in blocks of that
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

// The blocks of a long list come in two forms, told by their first byte.
// Where a list holds at least BitmapMin ordinals of an aligned span of
// BitmapSpan, the span is one bitmap: a walk ORs it into its window a word
// at a time and a seek into it is a scan of bits, where deltas would be
// decoded one by one. Elsewhere, blocks hold up to PostingBlockSize
// ordinals as deltas.
const (
	// BlockDeltas + the first ordinal, then the others as deltas, all
	// uvarints.
	BlockDeltas byte = 0
	// BlockBitmap + the span's first ordinal, 4 bytes big-endian, then
	// a bit for each ordinal of the span, 64 to a little-endian word.
	BlockBitmap byte = 1
)

// BitmapSpan is the ordinals a bitmap block covers: 248 words of 64, so
// that two blocks fit a page of bbolt's 4 KiB with their keys (up to 35
// bytes; a gram's is at most 18) and headers. A bitmap of 16,384 bits
// took a page to itself, half of it empty (bbolt puts at least two
// values in a node, and two such made a node of two pages):
// docs/BENCHMARKS.md, "Bitmaps two to a page".
const BitmapSpan = 248 * 64

// BitmapMin is the fewest ordinals of a span stored as a bitmap: at this
// density the bitmap is at most four times the deltas it replaces, and
// lists this dense are the ones a conjunction of common terms walks.
const BitmapMin = BitmapSpan / 32

// BitmapBlockLen is the length of a bitmap block's value.
const BitmapBlockLen = 1 + 4 + BitmapSpan/8
