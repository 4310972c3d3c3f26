package catalog

import (
	"errors"
	"time"
)

// The file layout. Bucket names and key encodings belong to this package
// alone; nothing outside it sees a bbolt transaction.
//
//	meta       "format" -> formatVersion; "info" -> Info as JSON
//	sets       set id -> 8-byte card total, then the set's canonical JSON
//	cards      card id -> the card's canonical JSON
//	setCards   one sub-bucket per set, named zone byte + set code:
//	           NumberKey(number) + card id -> the card's canonical JSON
//	numbers    the search index entries, one per card, in result order:
//	           4-byte big-endian ordinal -> zone byte, then the card id, the
//	           set code and the normalized number, each uvarint-prefixed,
//	           then the folded name
//	postings   "g" + a bigram of folded names, "n" + a normalized number,
//	           "s" + zone byte + set code -> uvarint count, then the
//	           ordinals of its cards as uvarint deltas (see postings.go)
//
// The cards of a set are stored twice, by id and in printed-number order, so
// that a page of a set is one contiguous range of ready-to-send JSON.
var (
	bucketMeta     = []byte("meta")
	bucketSets     = []byte("sets")
	bucketCards    = []byte("cards")
	bucketSetCards = []byte("setCards")
	bucketNumbers  = []byte("numbers")
	bucketPostings = []byte("postings")

	keyFormat = []byte("format")
	keyInfo   = []byte("info")
)

// formatVersion changes whenever the layout does; Open refuses other versions
// so that a newer file never serves wrong answers from an older binary.
const formatVersion = "catalogd/1"

// Errors of the catalogue. Callers compare with errors.Is.
var (
	// ErrNotFound means the set or card is not in the active catalogue.
	ErrNotFound = errors.New("not found")
	// ErrDuplicate means a record repeats an id or a (zone, code) pair.
	ErrDuplicate = errors.New("duplicate")
)

// Info describes one generation of the catalogue.
type Info struct {
	Generation string      `json:"generation"`
	ImportedAt time.Time   `json:"importedAt"`
	Sources    []Source    `json:"sources"`
	Zones      []ZoneCount `json:"zones"`
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

// setCardsBucket names the sub-bucket of the cards of the set (zone, code).
func setCardsBucket(zone, code string) []byte {
	b := make([]byte, 0, 1+len(code))
	return append(append(b, byte(ZoneIndex(zone))), code...)
}
