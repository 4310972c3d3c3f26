package layout

import (
	"encoding/binary"
	"math"
	"unicode/utf8"

	"github.com/catalogd/catalogd/catalog"
)

// The index of autocomplete (docs/SEARCH.md, Autocomplete), in the
// completions bucket. The import counts the cards of every distinct name
// as printed and ranks the names in each of four namespaces (every zone,
// then each zone alone): more cards first, then the folded name, then the
// name as printed. The four rankings share one order of places: a name
// printed in one zone has one place, in every zone's ranking and in its
// zone's at once, for it has as many cards in both; a name printed in
// several zones has a place in every zone's ranking and one in each of
// its zones'. A place's ordinal is its rank in that order, so the places
// of a namespace, in ordinal order, are its names in rank order, and the
// first of them are the best there.
//
// Every form (a folded name, a romanized form, a name of a group) and every
// word of one has a run: the names that have it, in ordinal order, and
// the groups that have it, whose names are in their own run. The forms or
// words that start with what was typed are one range of keys: a query
// reads the first names of each run in the range. A prefix that starts
// more than TopPrefixRuns of them has its first names in each namespace
// stored once, so that no query reads more than that many runs.
//
// Where names repeat (KeyNameGrams in the meta bucket), every gram of the
// names' forms, of one, two and three characters as the search index
// cuts them (EachGram), has a run too: the names whose forms hold it.
// A query of several terms finds the names that hold the terms before
// its last through them, rather than through the cards' lists
// (docs/SEARCH.md, Autocomplete).
const (
	CompleteNames byte = 'n' // + 4-byte block number -> a block of name records
	CompletePlace byte = 'p' // + 4-byte block number -> the places of a block of cards
	CompleteGroup byte = 'a' // + 4-byte group index -> the run of the group's names
	CompleteForm  byte = 'f' // + a form + 0 -> the run of that form
	CompleteTop   byte = 'h' // + 'f' or 'w' + a prefix + 0 -> the first names that start so
	CompleteWord  byte = 'w' // + a word + 0 -> the run of that word
	CompleteGram  byte = 'g' // + a gram + 0 -> the run of that gram, where names repeat
)

// The segments of a run: the places in every zone's ranking (each a name
// printed in one zone or the every-zone place of a name printed in
// several), the zone-only places, the groups, and for a run of many
// places the first names of each zone.
const (
	RunShared = iota
	RunZoneOnly
	RunGroups
	RunZoneTops
	RunSegments
)

// MaxAutocompleteLimit is the most names one autocomplete answers.
const MaxAutocompleteLimit = 20

// TopPrefixRuns is the most runs a prefix may start, its runs' groups'
// counted, before its first names are stored: a query reads at most this
// many runs of a prefix.
const TopPrefixRuns = 32

// NameBlockSize is the name records to a value of the completions bucket.
const NameBlockSize = 64

// The places of the cards' names, by card: a query of several terms that
// finds cards ranks their names without reading the cards. Each card, in
// ordinal order, has PlaceSize bytes in the value of its block: the place
// of its name in every zone's ranking, then in its zone's, each a 4-byte
// big-endian ordinal (the same, for a name printed in one zone), then the
// 8-byte big-endian WordStarts of its search text and its groups' texts,
// by which a query passes over a card none of whose words can start with
// its last term.
const (
	PlaceBlockSize = 4096
	PlaceSize      = 16
)

// AppendCardPlaces appends to a block of places a card's: its name's
// place in every zone's ranking, and in its zone's, and the starts of its
// words.
func AppendCardPlaces(dst []byte, shared, zone uint32, starts uint64) []byte {
	dst = binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(dst, shared), zone)
	return binary.BigEndian.AppendUint64(dst, starts)
}

// CardPlace returns, from the block of places that holds card ord, the
// place of its name in namespace ns (every zone's, 0, or its zone's) and
// the starts of its words.
func CardPlace(block []byte, ord uint32, ns int) (place uint32, starts uint64, ok bool) {
	at := int(ord%PlaceBlockSize) * PlaceSize
	if at+PlaceSize > len(block) {
		return 0, 0, false
	}
	return binary.BigEndian.Uint32(block[at+min(ns, 1)*4:]), binary.BigEndian.Uint64(block[at+8:]), true
}

// WordStarts adds to starts the first character of each word of text
// (catalog.EachWord), a bit each: a to z and 0 to 9 a bit of their own,
// any other character one of the 28 bits left, by its code point. A
// word can start with a prefix only if the bit of the prefix's first
// character is set.
func WordStarts(starts uint64, text []byte) uint64 {
	catalog.EachWord(text, func(w []byte) {
		r, _ := utf8.DecodeRune(w)
		starts |= WordStartBit(r)
	})
	return starts
}

// WordStartBit is the bit of WordStarts for a word's first character.
func WordStartBit(r rune) uint64 {
	switch {
	case 'a' <= r && r <= 'z':
		return 1 << (r - 'a')
	case '0' <= r && r <= '9':
		return 1 << (26 + r - '0')
	}
	return 1 << (36 + uint32(r)%28)
}

// NameRecord is a distinct name as the completions bucket holds it, at
// each of its places: its cards in each zone, and the ordinal of a card
// that bears it for each romanization its cards take (almost always one),
// whose index entry holds its search text and groups, and whose record
// its name as printed.
type NameRecord struct {
	Cards [3]uint64
	Ords  []uint32
}

func (n *NameRecord) Count(ns int) uint64 {
	if ns == 0 {
		return n.Cards[0] + n.Cards[1] + n.Cards[2]
	}
	return n.Cards[ns-1]
}

func (n *NameRecord) Append(dst []byte) []byte {
	for _, c := range n.Cards {
		dst = binary.AppendUvarint(dst, c)
	}
	for _, o := range n.Ords {
		dst = binary.AppendUvarint(dst, uint64(o))
	}
	return dst
}

// DecodeNameRecord decodes the record of a name into n.
func DecodeNameRecord(n *NameRecord, v []byte) error {
	for i := range n.Cards {
		c, w := binary.Uvarint(v)
		if w <= 0 {
			return ErrBadEntry
		}
		n.Cards[i], v = c, v[w:]
	}
	n.Ords = n.Ords[:0]
	for len(v) > 0 {
		o, w := binary.Uvarint(v)
		if w <= 0 || o > math.MaxUint32 {
			return ErrBadEntry
		}
		n.Ords, v = append(n.Ords, uint32(o)), v[w:]
	}
	if len(n.Ords) == 0 {
		return ErrBadEntry
	}
	return nil
}
