package store

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/catalogd/catalogd/catalog"
	"github.com/catalogd/catalogd/catalog/store/internal/layout"
)

// Cards calls found with the canonical JSON of each card of ids that the
// catalogue has, and missing with each id it has not, in the order of ids,
// all in one read transaction. The ids are looked up a batch at a time by
// the keys they name (layout.AppendGuessedCardKey), a level of the cards'
// tree at a time for the batch (treepages.go), and an id whose key finds
// no card then by its locator, as AppendCard does. The slice passed to
// found is valid only until found returns.
// (Looking them up in key order instead, for neighbours to share the pages
// the seeks descend, took longer on a million cards: what it saves is
// little against random ids, and the cards must then be copied to be given
// in the order asked. docs/BENCHMARKS.md, Lookups.)
func (db *DB) Cards(ids []string, found func(card []byte), missing func(id string)) error {
	err := db.read(func(r *reader) error {
		for rest := ids; len(rest) > 0; {
			n := min(len(rest), cardBatchSize)
			if err := r.cards(rest[:n], found, missing); err != nil {
				return err
			}
			rest = rest[n:]
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("get %d cards: %w", len(ids), err)
	}
	return nil
}

// cardBatchSize is the most ids descended together: a batch's pages of
// one level, a few hundred KiB, stay in the processor's caches until its
// searches read them.
const cardBatchSize = 128

// cardBatch is the scratch of reader.cards, kept from call to call.
type cardBatch struct {
	keyBytes []byte
	ends     []int // of each id's key in keyBytes, -1 for an id with none
	keys     [][]byte
	cards    [][]byte
	at       []uint64
}

// cards looks up at most cardBatchSize ids, as Cards says.
func (r *reader) cards(ids []string, found func(card []byte), missing func(id string)) error {
	b := &r.batch
	b.keyBytes, b.ends, b.keys = b.keyBytes[:0], b.ends[:0], b.keys[:0]
	for _, id := range ids {
		start := len(b.keyBytes)
		var ok bool
		if b.keyBytes, ok = layout.AppendGuessedCardKey(b.keyBytes, id); !ok {
			b.keyBytes = b.keyBytes[:start]
			b.ends = append(b.ends, -1)
			continue
		}
		b.ends = append(b.ends, len(b.keyBytes))
	}
	start := 0
	for _, end := range b.ends {
		if end < 0 {
			b.keys = append(b.keys, nil)
			continue
		}
		b.keys, start = append(b.keys, b.keyBytes[start:end:end]), end
	}
	b.cards, b.at = slices.Grow(b.cards[:0], len(ids))[:len(ids)], slices.Grow(b.at[:0], len(ids))[:len(ids)]
	// Where the tree is inline, or a page is not as bbolt writes it, each
	// id takes its own seeks, and bbolt says what is damaged.
	batched := r.cardsRoot != 0 && r.pages.findAll(r.cardsRoot, b.keys, b.cards, b.at)
	for i, id := range ids {
		var card []byte
		var ok bool
		var err error
		switch {
		case batched && b.cards[i] != nil:
			card, ok = b.cards[i], true
		case batched:
			card, ok, err = r.locatedCard(id)
		default:
			card, ok, err = r.card(id)
		}
		switch {
		case err != nil:
			return err
		case ok:
			found(card)
		default:
			missing(id)
		}
	}
	return nil
}

// SetCardsByNumber calls fn with the canonical JSON of each card of the
// set that ref resolves to (as Set does) whose printed number equals
// number by its normalized form (catalog.NormalizeNumber: "25", "025" and "25/73"
// are one number), ordered by card id. The cards of a set are keyed by
// their catalog.NumberKey, which delimits itself, so they lie in one range that a
// single seek finds. The slice passed to fn is valid only until fn
// returns. It returns ErrNotFound, saying which, when ref resolves to no
// set or no card of the set has the number.
func (db *DB) SetCardsByNumber(ref, number string, fn func(card []byte)) error {
	setFound, n := false, 0
	err := db.read(func(r *reader) error {
		s, ok, err := r.resolveSet(ref)
		if err != nil || !ok {
			return err
		}
		setFound = true
		var buf [128]byte
		prefix := catalog.AppendNumberKey(append(buf[:0], s.Prefix...), number)
		c := r.cardCursor
		for k, v := c.Seek(prefix); bytes.HasPrefix(k, prefix); k, v = c.Next() {
			fn(v)
			n++
		}
		return nil
	})
	switch {
	case err != nil:
		return fmt.Errorf("cards numbered %q of set %q: %w", number, ref, err)
	case !setFound:
		return fmt.Errorf("set %q: %w", ref, ErrNotFound)
	case n == 0:
		return fmt.Errorf("card numbered %q in set %q: %w", number, ref, ErrNotFound)
	}
	return nil
}
