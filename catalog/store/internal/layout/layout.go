package layout

import (
	"encoding/binary"
	"strings"
	"time"

	"github.com/catalogd/catalogd/catalog"
	bolt "go.etcd.io/bbolt"
)

// The file layout. Bucket names and key encodings are this package's:
// catalog/store/build writes them and catalog/store reads them; nothing
// outside catalog/store sees a bbolt transaction. One bucket is the
// build's alone, for while it runs (setRefs, catalog/store/build/setrefs.go),
// and is gone from every finished file.
//
//	meta       "format" -> FormatVersion; "info" -> Info as JSON;
//	           "longestName" -> uvarint bytes of the longest folded name;
//	           "nameGrams" -> empty, when the names' grams have runs (a file
//	           without it is read as before them: no version change)
//	sets       set id -> 8-byte card total, the set prefix (below), then
//	           the set's canonical JSON; setCodes and setLists find sets
//	           by code and list them (catalog/store/sets.go)
//	cards      the cards, under two kinds of keys:
//	           set prefix + catalog.NumberKey(number) + card id -> the card's
//	           canonical JSON, where the set prefix is the zone byte, then
//	           the set code, uvarint-length-prefixed;
//	           KeyCardID + card id -> the card's key of the first kind
//	           without the id (set prefix + catalog.NumberKey(number))
//	numbers    the search index entries, one per card, numbered by their
//	           position in the order zone, printed-number key, id (the
//	           ordinal), in blocks of
//	           IndexBlockSize: 4-byte big-endian ordinal / IndexBlockSize ->
//	           a byte counting the entries of the block, the end of each as
//	           a 4-byte big-endian offset, then the entries back to back. An
//	           entry is the zone byte, then the card id, the set code,
//	           catalog.NumberKey(number) and the card's name groups (uvarint group
//	           indexes), each uvarint-prefixed, then the bytes of the
//	           folded name as a uvarint, then the search text
//	           (catalog.SearchText: the folded name and its romanized form)
//	postings   posting lists, each under its list key: a kind byte ("t"
//	           a trigram of search texts, "g" a bigram of them, "r" one
//	           character of them, "n" a catalog.NumberKey, "s" a zone byte and set
//	           code, "p" a run of a short pattern (runs.go), "m" a 4-byte
//	           big-endian group index, "T", "B", "R" a
//	           trigram, bigram or character of the texts of more than
//	           MaxGroupLists name groups: their cards), then that term,
//	           uvarint-length-prefixed. The list key -> uvarint count of
//	           the list; list key + 4-byte big-endian last ordinal of a
//	           block -> the block: a kind byte, then its first ordinal
//	           and the others as deltas, all uvarints, or a bitmap of a
//	           window of ordinals (see postings.go)
//	pageMarks  set prefix + 8-byte big-endian position of a card in its
//	           set, every PageMarkEvery-th -> the card's key in cards: a
//	           page deep into a set seeks the mark before it and steps
//	           from there (see pages.go); optional
//	setBytes   set prefix -> 8-byte big-endian bytes of the set's cards'
//	           JSON, which lay out an export (see export.go); optional
//	names      4-byte big-endian index of a name group, in the order of
//	           the snapshot -> the group's JSON array of names (catalog/store/build/names.go)
//	words      4-byte big-endian piece number -> an FST (vellum) of a
//	           range of the dictionary's words, in order (words.go)
//	groups     the name groups' search index (groupindex.go): lists of
//	           group indexes under the keys of trigrams, bigrams and
//	           characters ("t", "g", "r") of the groups' texts, stored as
//	           postings stores lists of ordinals; "x" + 4-byte big-endian
//	           group index -> the group's text: its names, folded, and
//	           their romanized forms, joined by spaces
//	completions autocomplete's index (completions.go): "n" + 4-byte
//	           big-endian block number -> a block of name records (as
//	           numbers blocks entries), in rank order; "s" -> where each
//	           namespace's ordinals start; "a" + 4-byte group index,
//	           "f" + a form + 0, "w" + a word + 0 -> a run: the names
//	           (ordinals) of each namespace and the groups that have it;
//	           "h" + "f" or "w" + a prefix + 0 -> the first names of each
//	           namespace whose forms or words start so; "p" + 4-byte
//	           block number -> the places of the names of a block of
//	           cards, in ordinal order
//
// Each card's JSON is stored once, grouped by set and in printed-number
// order within its set: a page of a set is one contiguous range of
// ready-to-send JSON, and a card by id is one lookup of the key its id
// names (AppendGuessedCardKey) or, for an id of another shape, two with
// one cursor, its locator and then its JSON. The set prefix delimits
// itself, so the range of
// one set never holds a card of another; it starts with a zone byte, below
// KeyCardID, so no set's range holds a locator either.
var (
	BucketMeta        = []byte("meta")
	BucketSets        = []byte("sets")
	BucketSetCodes    = []byte("setCodes")
	BucketSetOrder    = []byte("setOrder")
	BucketSetLists    = []byte("setLists")
	BucketCards       = []byte("cards")
	BucketNumbers     = []byte("numbers")
	BucketPostings    = []byte("postings")
	BucketNames       = []byte("names")
	BucketGroups      = []byte("groups")
	BucketCompletions = []byte("completions")

	KeyFormat      = []byte("format")
	KeyInfo        = []byte("info")
	KeyLongestName = []byte("longestName")
	KeyNameGrams   = []byte("nameGrams") // present when the completions bucket has the runs of grams (CompleteGram)
)

// KeyCardID starts the keys of the cards bucket that map a card id to the
// card.
const KeyCardID byte = 0xFF

// IndexBlockSize is the number of search index entries in one value of the
// numbers bucket: a key per entry cost more to write and to store than the
// entry itself.
const IndexBlockSize = 16

// FormatVersion changes whenever the layout does; Open refuses other versions
// so that a newer file never serves wrong answers from an older binary, nor
// an older file from a newer one. A bucket that older binaries ignore and
// newer ones do without (pageMarks), or values that they ignore and newer
// ones read as unknown (the cards of a word of the dictionary, 0 in older
// files: words.go), or runs that older binaries ignore and newer ones
// do without (those of the names' grams, KeyNameGrams), leave it as it is.
//
// catalogd/1 stored each card twice (by id and by set); catalogd/2 stores it
// once and maps ids to it; catalogd/3 orders the search index by zone and
// stores posting lists in blocks; catalogd/4 adds lists of trigrams;
// catalogd/5 searches a name by its romanized form too (catalog.SearchText), and
// by the names of its name groups, which it keeps (the names bucket); catalogd/6
// indexes each name group once (groupindex.go); catalogd/7 adds the
// dictionary of a fuzzy search's words (words.go); catalogd/8 adds the
// lists of runs of short patterns (runs.go); catalogd/9 adds the index of
// autocomplete (completions.go) and the folded name's length to each
// search index entry; catalogd/10 makes a list's bitmap blocks a little
// shorter, two to a page (postings.go, BitmapSpan); catalogd/11 gives the
// rankings of names one order of places (completions.go); catalogd/12
// stores a long run's first names of each zone as a prefix's are;
// catalogd/13 adds the places of each card's name (completions.go);
// catalogd/14 the starts of its words beside them; catalogd/15 ends a
// word at a change of script behind the long mark or a digit
// (catalog.EachWord), and finds a card's groups in its name printed
// with its Japanese and Chinese words apart (catalog.SplitUnspacedWords);
// catalogd/16 folds traditional Chinese characters to simplified ones
// (catalog.Fold), and finds a card's groups at the end of its words of
// kana or Han too (catalog.EachWordEnding); catalogd/17 adds the inner
// words of a name (catalog.InnerWords) to its search text and to the
// words of autocomplete.
const FormatVersion = "catalogd/17"

// SameRecordsAs are the earlier formats whose sets, cards and history of
// changes are stored as FormatVersion's: an import reads a catalogue of
// one of them to keep its history (store.OpenToFollow), so that an upgrade
// to this format does not make every partner download the export again.
// A format that changes those buckets empties the list.
var SameRecordsAs = []string{"catalogd/16"}

// Info describes one generation of the catalogue.
type Info struct {
	Generation string      `json:"generation"`
	ImportedAt time.Time   `json:"importedAt"`
	Sources    []Source    `json:"sources"`
	Zones      []ZoneCount `json:"zones"`
	// History is the imports whose changes the file holds, oldest first;
	// the last one made this generation (docs/CONTRACT.md, Changes).
	History []HistoryStep `json:"history,omitempty"`
	// NameGroups is the number of name groups of the snapshot (the names
	// bucket).
	NameGroups int64 `json:"nameGroups,omitempty"`
}

// Source is one snapshot file an import read.
type Source struct {
	Name   string `json:"name"`
	SHA256 string `json:"sha256"`
	Bytes  int64  `json:"bytes"`
}

// ZoneCount is the number of sets and cards of one zone.
type ZoneCount struct {
	Zone  string `json:"zone"`
	Sets  int64  `json:"sets"`
	Cards int64  `json:"cards"`
}

// ReadTx is a read transaction of a catalogue file, as catalog/store lends
// it to the build of the next generation: a type no package outside
// catalog/store can name, so that none reads the file's buckets.
type ReadTx struct{ *bolt.Tx }

// ZoneByte is a zone's byte in keys: its catalog.ZoneIndex, for a valid zone.
func ZoneByte(zone string) byte { return byte(catalog.ZoneIndex(zone)) }

// AppendSetPrefix appends the prefix of the keys of the cards of the set
// (zone, code) in the cards bucket, zone being the catalog.ZoneIndex as a byte: the
// zone byte, then the code, uvarint-length-prefixed.
func AppendSetPrefix[S ~string | ~[]byte](dst []byte, zone byte, code S) []byte {
	dst = append(dst, zone)
	dst = binary.AppendUvarint(dst, uint64(len(code)))
	return append(dst, code...)
}

// AppendCardKey appends the key of a card in the cards bucket: the prefix
// of its set (zone, code), then its catalog.NumberKey, then its id. The key without
// the id is the card's locator.
func AppendCardKey[S ~string | ~[]byte](dst []byte, zone byte, code S, numberKey []byte, id S) []byte {
	dst = AppendSetPrefix(dst, zone, code)
	dst = append(dst, numberKey...)
	return append(dst, id...)
}

// AppendCardIDKey appends the key that maps the card id to its locator.
func AppendCardIDKey[S ~string | ~[]byte](dst []byte, id S) []byte {
	return append(append(dst, KeyCardID), id...)
}

// AppendLocatedCardKey appends the key of the card with id in the cards
// bucket from its locator: the key without the id, which its KeyCardID key
// maps to.
func AppendLocatedCardKey(dst, locator []byte, id string) []byte {
	return append(append(dst, locator...), id...)
}

// AppendGuessedCardKey appends the key the card with id has in the cards
// bucket if id is its zone, its set's code and its printed number joined
// by hyphens, as the ids of nearly every card of the real catalogue are
// (a code may hold hyphens, a number none), and reports whether id has
// that shape. The key a guess gives is only ever the card's: a key names
// its zone, set, number and id, so a seek that finds it exactly has
// found the card, and one that does not says nothing. Ids stay opaque
// (docs/CONTRACT.md): a card whose id is not so is found by its locator.
func AppendGuessedCardKey(dst []byte, id string) ([]byte, bool) {
	zone, rest, ok := strings.Cut(id, "-")
	at := strings.LastIndexByte(rest, '-')
	if !ok || at <= 0 || at == len(rest)-1 || catalog.ZoneIndex(zone) < 0 {
		return dst, false
	}
	dst = AppendSetPrefix(dst, ZoneByte(zone), rest[:at])
	return append(catalog.AppendNumberKey(dst, rest[at+1:]), id...), true
}
