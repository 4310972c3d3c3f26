package store

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"

	"github.com/catalogd/catalogd/catalog"
	"github.com/catalogd/catalogd/catalog/store/internal/layout"
	bolt "go.etcd.io/bbolt"
)

// SearchQuery is one search (docs/CONTRACT.md, Search), already validated.
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
	// Fuzzy lets a term be a word or two of a card's texts mistyped
	// (docs/CONTRACT.md, Typos); cards are then ordered by the edits they
	// take first.
	Fuzzy bool
}

// term is one folded query term, with the key of its normalized printed
// number (see catalog.AppendNormalizedNumberKey): two numbers are equal when their keys
// are.
type term struct {
	text   []byte
	number string
	typo   *typo // nil unless the search is fuzzy and the term may be mistyped
}

// Terms folds q and splits it into the terms a search matches.
func Terms(q string) []string {
	return strings.Fields(catalog.Fold(q))
}

// searchTerms folds q into its distinct terms: a term given twice asks
// nothing more.
func searchTerms(q string) []term {
	fields := Terms(q)
	slices.Sort(fields)
	fields = slices.Compact(fields)
	terms := make([]term, len(fields))
	var key [64]byte
	for i, f := range fields {
		terms[i] = term{text: []byte(f), number: string(catalog.AppendNormalizedNumberKey(key[:0], catalog.NormalizeFoldedNumber(f)))}
	}
	return terms
}

// appendEntryCardKey appends the key of the entry's card in the cards bucket.
func appendEntryCardKey(dst []byte, e *layout.IndexEntry) []byte {
	return layout.AppendCardKey(dst, e.Zone, e.SetCode, e.Number, e.ID)
}

// matches reports whether every term is a substring of the search text,
// equals the normalized printed number, or is a substring of the text of
// one of the card's name groups.
func matches(e *layout.IndexEntry, terms []term, groups *groupTexts) bool {
	for i := range terms {
		t := &terms[i]
		if !bytes.Contains(e.Name, t.text) && string(e.Number) != t.number && !groups.anyHolds(e.Groups, t.text) {
			return false
		}
	}
	return true
}

// Search calls fn with the canonical JSON of each matching card, at most
// q.Limit of them, in the order of the normalized printed number, then id;
// a fuzzy search orders them by the edits they take first (see
// rankByEdits). The slice passed to fn is valid only until fn returns.
//
// Each zone is a range of ordinals (see internal/layout/postings.go), walked by lists of
// its own: a zone the query filters out costs nothing, one that holds none
// of a list's cards costs a seek, and the zones' results, each in result
// order, are merged as they come.
func (db *DB) Search(q SearchQuery, fn func(card []byte)) error {
	terms := searchTerms(q.Q)
	if len(terms) == 0 || q.Limit <= 0 {
		return nil
	}
	zone := -1
	if q.Zone != "" {
		if zone = catalog.ZoneIndex(q.Zone); zone < 0 {
			return fmt.Errorf("search: unknown zone %q", q.Zone)
		}
	}
	if q.Fuzzy {
		markTypos(terms)
	}
	err := db.read(func(r *reader) error {
		var sets []layout.StoredSet
		if q.Set != "" {
			var err error
			if sets, err = r.setsMatching(q.Set, zone); err != nil || len(sets) == 0 {
				return err
			}
		}
		p, err := db.plan(r, sets, terms)
		if err != nil {
			return err
		}
		walks := func(typos bool) []*zoneWalk { return db.zoneWalks(r, p, zone, sets, typos, len(terms) == 1) }
		// The cards that match every term as typed, in result order: all
		// of a search's, and the first of a fuzzy one's.
		found := 0
		var key []byte
		err = merge(walks(false), func(e *layout.IndexEntry) bool { return inSets(sets, e) && matches(e, terms, &r.groupTexts) }, func(e *layout.IndexEntry) (bool, error) {
			card, err := r.cardOf(e, &key)
			if err == nil {
				fn(card)
				found++
			}
			return found < q.Limit, err
		})
		if err == nil && p.typos && found < q.Limit {
			// Then those that take edits, fewest first.
			err = rankByEdits(walks(true), r, q.Limit-found, max(1, p.leastEdits), func(e *layout.IndexEntry) bool {
				return inSets(sets, e) && matchesWithin(e, terms, &r.groupTexts) && e.Edits > 0
			}, fn)
		}
		if err == nil {
			err = cmp.Or(r.listCursors.damaged, r.groupTexts.damaged)
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("search %q: %w", q.Q, err)
	}
	return nil
}

// plan plans a search of terms in sets with r's cursors, which it makes
// ready for the walk (see planSearch).
func (db *DB) plan(r *reader, sets []layout.StoredSet, terms []term) (searchPlan, error) {
	r.listCursors.reset()
	r.groupListCursors.reset()
	r.groupTexts.damaged = nil
	p := planSearch(r, sets, terms, db.longestName, db.words)
	if p.damaged == nil {
		p.damaged = cmp.Or(r.groupListCursors.damaged, r.groupTexts.damaged)
	}
	return p, p.damaged
}

// zoneWalks returns a walk of the plan's lists (searchPlan.driver) for
// each zone the search asks for (zone, -1 for all) that holds cards of
// sets, when given.
func (db *DB) zoneWalks(r *reader, p searchPlan, zone int, sets []layout.StoredSet, typos, nearOnly bool) []*zoneWalk {
	moreGrams := 0
	if !typos {
		// Not the walk of the cards that take edits: the lists of dozens
		// of near words would each be built again for a gram more
		// (docs/SEARCH.md, How a query is answered).
		moreGrams = mostMoreGrams(p.terms)
	}
	var ws []*zoneWalk
	for z, zr := range db.zoneOrdinals {
		if (zone < 0 || z == zone) && zr.lo < zr.hi && inZone(sets, z) {
			w := &zoneWalk{driver: p.driver(&r.listCursors, db.denseList, typos, nearOnly, 0), entries: indexBlocks{c: r.entryCursors[z]}, next: zr.lo, hi: zr.hi}
			if moreGrams > 0 {
				plan := p // held by the walk only when it may need it
				w.driverWith = func(more int) ordinals { return plan.driver(&r.listCursors, db.denseList, typos, nearOnly, more) }
				w.mostMore = moreGrams
				w.narrow()
			}
			ws = append(ws, w)
		}
	}
	return ws
}

// cardOf returns the card of an index entry, using key as scratch.
func (r *reader) cardOf(e *layout.IndexEntry, key *[]byte) ([]byte, error) {
	*key = appendEntryCardKey((*key)[:0], e)
	k, card := r.cardCursor.Seek(*key)
	if !bytes.Equal(k, *key) {
		return nil, damagef("search index damaged: card %q of the index is missing; import the catalogue again", e.ID)
	}
	return card, nil
}

// ordinalRange is the ordinals [lo, hi) of one zone's cards.
type ordinalRange struct{ lo, hi uint32 }

// zoneWalk finds the results of one zone in result order: the cards that
// driver, a list every result is on, names within the zone's range, that
// pass the search's check.
//
// The driver intersects two grams of each term: most cards that hold
// both hold the term. Where they do not (a term mistyped, or one whose
// grams are each common), the walk would read card after card that the
// check refuses, as many as the catalogue holds. So after each
// refusalsBeforeMoreGrams of them, while a term has grams left, it takes
// the driver of one more of each term's grams, the rarest it lacks
// (driverWith), from where it stands.
type zoneWalk struct {
	driver     ordinals
	driverWith func(more int) ordinals // nil when no term has more grams
	more       int                     // of the terms' other grams, that the driver takes
	mostMore   int                     // the most other grams it may take: a term's most, up to maxMoreGrams
	refused    int
	entries    indexBlocks
	next       uint32 // the ordinal to look from
	hi         uint32
	entry      layout.IndexEntry // the next result, when ready
	ready      bool
	done       bool
}

// narrow makes the walk's driver take one more gram of each term for
// each refusalsBeforeMoreGrams cards it has refused, while a term has
// more.
func (w *zoneWalk) narrow() {
	more := w.mostMore // every gram from the start, for a test
	if refusalsBeforeMoreGrams > 0 {
		more = min(more, w.refused/refusalsBeforeMoreGrams)
	}
	if more > w.more {
		tookMoreGrams(w.refused > 0)
		w.driver, w.more = w.driverWith(more), more
	}
}

// refusalsBeforeMoreGrams is how many cards a walk reads and refuses
// before it intersects one more gram of each term (a variable, for a
// test to make it 0: every gram from the start). A gram more costs a
// walk of its list and the seeks in it, a refusal the read of an entry.
var refusalsBeforeMoreGrams = 8

// tookMoreGrams, which a test sets, is called when a walk takes more
// grams: from the start, or after refusals.
var tookMoreGrams = func(afterRefusals bool) {}

// advance makes the walk's next result ready, or the walk done.
func (w *zoneWalk) advance(check func(*layout.IndexEntry) bool) error {
	for !w.ready && !w.done {
		ord, _, ok := seekBelow(w.driver, w.next, w.hi, 0)
		if !ok {
			w.done = true
			break
		}
		v, err := w.entries.entry(ord)
		if err != nil {
			return err
		}
		if v == nil {
			return damagef("search index damaged: index entry %d is missing; import the catalogue again", ord)
		}
		if w.entry, err = layout.DecodeIndexEntry(v); err != nil {
			return fmt.Errorf("index entry %d: %w", ord, err)
		}
		w.ready = check(&w.entry)
		w.next = ord + 1 // below hi, so no wrap
		if !w.ready && w.more < w.mostMore {
			w.refused++
			w.narrow()
		}
	}
	return nil
}

// merge calls emit with each result of the walks, in result order, while
// emit asks for more.
func merge(walks []*zoneWalk, check func(*layout.IndexEntry) bool, emit func(*layout.IndexEntry) (more bool, err error)) error {
	for {
		var best *zoneWalk
		for _, w := range walks {
			if err := w.advance(check); err != nil {
				return err
			}
			if w.ready && (best == nil || compareResults(&w.entry, &best.entry) < 0) {
				best = w
			}
		}
		if best == nil {
			return nil
		}
		more, err := emit(&best.entry)
		best.ready = false
		if err != nil || !more {
			return err
		}
	}
}

// compareResults orders entries as results: by number key, then id.
func compareResults(a, b *layout.IndexEntry) int {
	if c := bytes.Compare(a.Number, b.Number); c != 0 {
		return c
	}
	return bytes.Compare(a.ID, b.ID)
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
	block  layout.IndexBlock
}

// entry returns the entry of ordinal ord, valid for the transaction, or
// nil when ord is past the last entry.
func (b *indexBlocks) entry(ord uint32) ([]byte, error) {
	if number := ord / layout.IndexBlockSize; !b.loaded || number != b.number {
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
			return nil, damagef("search index damaged: index block %d is missing; import the catalogue again", number)
		}
		block, err := layout.ReadIndexBlock(v)
		if err != nil {
			return nil, fmt.Errorf("index block %d: %w", number, err)
		}
		b.loaded, b.number, b.block = true, number, block
	}
	i := int(ord % layout.IndexBlockSize)
	if i >= b.block.Len() {
		return nil, nil // past the last entry, in the last block
	}
	v := b.block.Entry(i)
	if v == nil {
		return nil, fmt.Errorf("index block %d: %w", b.number, layout.ErrBadEntry)
	}
	return v, nil
}

// decoded returns the entry of ordinal ord, decoded: one that is missing
// is an error, for a name's record or a list named it.
func (b *indexBlocks) decoded(ord uint32) (layout.IndexEntry, error) {
	v, err := b.entry(ord)
	if err == nil && v == nil {
		err = layout.ErrBadEntry
	}
	if err != nil {
		return layout.IndexEntry{}, err
	}
	return layout.DecodeIndexEntry(v)
}

// inZone reports whether zone z may hold cards of sets: any zone when sets
// is nil, no set filter.
func inZone(sets []layout.StoredSet, z int) bool {
	return sets == nil || slices.ContainsFunc(sets, func(s layout.StoredSet) bool { return int(s.Zone()) == z })
}

// inSets reports whether the entry's card is in one of sets, or sets is
// nil: no set filter.
func inSets(sets []layout.StoredSet, e *layout.IndexEntry) bool {
	if sets == nil {
		return true
	}
	for i := range sets {
		if e.Zone == sets[i].Zone() && bytes.Equal(e.SetCode, sets[i].Code) {
			return true
		}
	}
	return false
}
