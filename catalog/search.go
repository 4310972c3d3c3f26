package catalog

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"

	bolt "go.etcd.io/bbolt"
)

// SearchQuery is one search (DESIGN section 5), already validated.
type SearchQuery struct {
	// Q is the query text; it is folded and split into terms here.
	Q string
	// Zone limits the search to one zone; "" searches all.
	Zone string
	// Set limits the search to the sets a set id or code names (see
	// setsMatching); "" searches all sets.
	Set string
	// Limit is the most cards returned.
	Limit int
}

// term is one folded query term, with the key of its normalized printed
// number (see appendNormalizedKey): two numbers are equal when their keys
// are.
type term struct {
	text   []byte
	number string
}

// Terms folds q and splits it into the terms a search matches.
func Terms(q string) []string {
	return strings.Fields(Fold(q))
}

func searchTerms(q string) []term {
	fields := Terms(q)
	terms := make([]term, len(fields))
	var key [64]byte
	for i, f := range fields {
		terms[i] = term{text: []byte(f), number: string(appendNormalizedKey(key[:0], normalizeFolded(f)))}
	}
	return terms
}

// indexEntry is a decoded entry of the numbers bucket.
type indexEntry struct {
	zone    byte
	id      []byte
	setCode []byte
	number  []byte // the key of the normalized printed number
	name    []byte
}

var errBadEntry = errors.New("malformed search index entry")

func decodeIndexEntry(v []byte) (indexEntry, error) {
	var e indexEntry
	if len(v) < 1 {
		return e, errBadEntry
	}
	e.zone = v[0]
	var ok1, ok2, ok3 bool
	e.id, v, ok1 = lengthPrefixed(v[1:])
	e.setCode, v, ok2 = lengthPrefixed(v)
	e.number, v, ok3 = lengthPrefixed(v)
	if !ok1 || !ok2 || !ok3 {
		return e, errBadEntry
	}
	e.name = v
	return e, nil
}

// lengthPrefixed splits a uvarint-prefixed field from the rest of v.
func lengthPrefixed(v []byte) (field, rest []byte, ok bool) {
	n, w := binary.Uvarint(v)
	if w <= 0 || uint64(len(v)-w) < n {
		return nil, nil, false
	}
	return v[w : w+int(n)], v[w+int(n):], true
}

// appendCardKey appends the key of the entry's card in the cards bucket.
func (e *indexEntry) appendCardKey(dst []byte) []byte {
	return appendCardKey(dst, e.zone, e.setCode, e.number, e.id)
}

// matches reports whether every term is a substring of the folded name or
// equals the normalized printed number.
func (e *indexEntry) matches(terms []term) bool {
	for i := range terms {
		t := &terms[i]
		if !bytes.Contains(e.name, t.text) && string(e.number) != t.number {
			return false
		}
	}
	return true
}

// Search calls fn with the canonical JSON of each matching card, at most
// q.Limit of them, in the order of the normalized printed number, then id.
// The slice passed to fn is valid only until fn returns.
func (db *DB) Search(q SearchQuery, fn func(card []byte)) error {
	terms := searchTerms(q.Q)
	if len(terms) == 0 || q.Limit <= 0 {
		return nil
	}
	zone := -1
	if q.Zone != "" {
		if zone = ZoneIndex(q.Zone); zone < 0 {
			return fmt.Errorf("search: unknown zone %q", q.Zone)
		}
	}
	var sets []*storedSet
	if q.Set != "" {
		if sets = db.setsMatching(q.Set, q.Zone); len(sets) == 0 {
			return nil
		}
	}
	err := db.read(func(r *reader) error {
		s := searcher{
			entries:    r.entryCursor,
			postings:   r.postingCursor,
			cardCursor: r.cardCursor,
			zone:       zone,
			sets:       sets,
			terms:      terms,
		}
		return s.run(q.Limit, fn)
	})
	if err != nil {
		return fmt.Errorf("search %q: %w", q.Q, err)
	}
	return nil
}

type searcher struct {
	entries, postings *bolt.Cursor
	cardCursor        *bolt.Cursor
	zone              int
	sets              []*storedSet
	terms             []term
	key               []byte
}

// run finds the results through the narrowest posting list, or by scanning
// the entries in order when no list narrows the search.
func (s *searcher) run(limit int, fn func([]byte)) error {
	driver, planned := s.plan()
	if !planned {
		driver = everyOrdinal{}
	}
	found := 0
	entries := indexBlocks{c: s.entries}
	for ord, more := driver.seek(0); more && found < limit; ord, more = driver.seek(ord + 1) {
		v, err := entries.entry(ord)
		if err != nil {
			return err
		}
		if v == nil {
			if !planned {
				return nil // the end of the scan
			}
			return fmt.Errorf("index entry %d is missing", ord)
		}
		e, err := decodeIndexEntry(v)
		if err != nil {
			return fmt.Errorf("index entry %d: %w", ord, err)
		}
		if (s.zone < 0 || int(e.zone) == s.zone) && s.inSets(&e) && e.matches(s.terms) {
			s.key = e.appendCardKey(s.key[:0])
			k, card := s.cardCursor.Seek(s.key)
			if !bytes.Equal(k, s.key) {
				return fmt.Errorf("card %q of the index is missing", e.id)
			}
			fn(card)
			found++
		}
		if ord == ^uint32(0) {
			break
		}
	}
	return nil
}

// everyOrdinal is the list of every entry, which a scan walks.
type everyOrdinal struct{}

func (everyOrdinal) seek(min uint32) (uint32, bool) { return min, true }

// indexBlock is a value of the numbers bucket: the count of its entries,
// the end of each entry as a 4-byte big-endian offset into the entries,
// then the entries.
type indexBlock struct {
	ends    []byte
	entries []byte
}

func readIndexBlock(v []byte) (indexBlock, error) {
	if len(v) < 1 || len(v) < 1+4*int(v[0]) {
		return indexBlock{}, errBadEntry
	}
	n := int(v[0])
	return indexBlock{ends: v[1 : 1+4*n], entries: v[1+4*n:]}, nil
}

func (b indexBlock) len() int { return len(b.ends) / 4 }

// entry returns entry i, which must be below len(), or nil when the
// offsets are out of order or out of bounds.
func (b indexBlock) entry(i int) []byte {
	start := uint32(0)
	if i > 0 {
		start = binary.BigEndian.Uint32(b.ends[4*(i-1):])
	}
	end := binary.BigEndian.Uint32(b.ends[4*i:])
	if start > end || end > uint32(len(b.entries)) {
		return nil
	}
	return b.entries[start:end]
}

// appendIndexBlock appends the value of a block of the given entries, which
// ends holds the end offsets of, in data.
func appendIndexBlock(dst []byte, ends []uint32, data []byte) []byte {
	dst = append(dst, byte(len(ends)))
	for _, end := range ends {
		dst = binary.BigEndian.AppendUint32(dst, end)
	}
	return append(dst, data...)
}

// maxBlockSteps is the farthest indexBlocks steps forward rather than
// seeks.
const maxBlockSteps = 8

// indexBlocks reads entries of the numbers bucket by ordinal, in increasing
// order, keeping the block it read last.
type indexBlocks struct {
	c      *bolt.Cursor
	loaded bool
	number uint32 // of the block loaded
	block  indexBlock
}

// entry returns the entry of ordinal ord, valid for the transaction, or
// nil when ord is past the last entry.
func (b *indexBlocks) entry(ord uint32) ([]byte, error) {
	if number := ord / indexBlockSize; !b.loaded || number != b.number {
		var key [4]byte
		binary.BigEndian.PutUint32(key[:], number)
		var k, v []byte
		if b.loaded && number > b.number && number-b.number <= maxBlockSteps {
			// Block numbers have no gaps: a near block is a few steps
			// along the leaf the cursor is on, cheaper than a descent.
			for range number - b.number {
				k, v = b.c.Next()
			}
		} else {
			k, v = b.c.Seek(key[:])
		}
		if k == nil {
			return nil, nil // past the last block
		}
		if !bytes.Equal(k, key[:]) {
			return nil, fmt.Errorf("index block %d is missing", number)
		}
		block, err := readIndexBlock(v)
		if err != nil {
			return nil, fmt.Errorf("index block %d: %w", number, err)
		}
		b.loaded, b.number, b.block = true, number, block
	}
	i := int(ord % indexBlockSize)
	if i >= b.block.len() {
		return nil, nil // past the last entry, in the last block
	}
	v := b.block.entry(i)
	if v == nil {
		return nil, fmt.Errorf("index block %d: %w", b.number, errBadEntry)
	}
	return v, nil
}

func (s *searcher) inSets(e *indexEntry) bool {
	if s.sets == nil {
		return true
	}
	for _, set := range s.sets {
		if e.zone == set.prefix[0] && string(e.setCode) == set.Code {
			return true
		}
	}
	return false
}

// plan picks the shortest list that every result is on: the cards of the
// filtered sets, or for one term the cards whose names hold its two rarest
// bigrams, together with the cards whose number is the term. A term of one
// character has no bigram and cannot narrow the search.
func (s *searcher) plan() (ordinals, bool) {
	var best ordinals
	bestCount := ^uint64(0)
	consider := func(l ordinals, count uint64) {
		if count < bestCount {
			best, bestCount = l, count
		}
	}
	if s.sets != nil {
		var lists union
		var count uint64
		for _, set := range s.sets {
			l := s.listAt(appendSetPostingKey(s.key[:0], set.prefix[0], set.Code))
			lists = append(lists, l)
			count += uint64(l.count)
		}
		consider(lists, count)
	}
	for i := range s.terms {
		t := &s.terms[i]
		var grams []*storedList
		eachBigram(t.text, func(gram []byte) {
			grams = append(grams, s.list(postingGram, string(gram)))
		})
		if len(grams) == 0 {
			continue // one character: no bigram to narrow by
		}
		number := s.list(postingNumber, t.number)
		slices.SortFunc(grams, func(a, b *storedList) int { return cmp.Compare(a.count, b.count) })
		if len(grams) > 2 {
			grams = grams[:2]
		}
		byName := make(intersection, len(grams))
		for j, g := range grams {
			byName[j] = g
		}
		consider(union{byName, number}, uint64(grams[0].count)+uint64(number.count))
	}
	return best, best != nil
}

// list returns the posting list kind+key, empty when there is none.
func (s *searcher) list(kind byte, key string) *storedList {
	return s.listAt(append(append(s.key[:0], kind), key...))
}

// listAt returns the posting list stored under key, which may be s.key's
// own buffer.
func (s *searcher) listAt(key []byte) *storedList {
	s.key = key
	k, v := s.postings.Seek(s.key)
	if !bytes.Equal(k, s.key) {
		return &storedList{done: true}
	}
	return newStoredList(v)
}

// setsMatching returns the sets a search filter names: the set with id ref,
// else every set with code ref, limited to zone unless zone is "". No match
// is an empty result, not an error.
func (db *DB) setsMatching(ref, zone string) []*storedSet {
	if s, ok := db.setsByID[ref]; ok {
		if zone == "" || s.Zone == zone {
			return []*storedSet{s}
		}
		return nil
	}
	var out []*storedSet
	for _, s := range db.setsByCode[ref] {
		if zone == "" || s.Zone == zone {
			out = append(out, s)
		}
	}
	return out
}
