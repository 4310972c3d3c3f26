package catalog

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
)

// Cards calls found with the canonical JSON of each card of ids that the
// catalogue has, and missing with each id it has not, in the order of ids:
// one lookup per id (AppendCard's two seeks), all in one read transaction.
// The lookups are made in key order, the ids' and then the cards', so that
// neighbours share the pages of the B+tree the seeks descend: a batch of
// ids drawn from the whole catalogue reads fewer pages than as many
// lookups one by one. The slice passed to found is valid only until found
// returns.
func (db *DB) Cards(ids []string, found func(card []byte), missing func(id string)) error {
	type lookup struct {
		at       int    // in ids
		key      []byte // the card's key, locator and id; nil when missing
		from, to int    // the card's JSON in cards
	}
	order := make([]lookup, len(ids))
	for i := range order {
		order[i].at = i
	}
	var cards []byte
	err := db.read(func(r *reader) error {
		c := r.cardCursor
		slices.SortFunc(order, func(a, b lookup) int { return strings.Compare(ids[a.at], ids[b.at]) })
		var buf [128]byte
		for i := range order {
			id := ids[order[i].at]
			key := appendCardIDKey(buf[:0], id)
			if k, loc := c.Seek(key); bytes.Equal(k, key) {
				order[i].key = appendLocatedCardKey(nil, loc, id)
			}
		}
		slices.SortFunc(order, func(a, b lookup) int { return bytes.Compare(a.key, b.key) })
		for i := range order {
			key := order[i].key
			if key == nil {
				continue
			}
			k, v := c.Seek(key)
			if !bytes.Equal(k, key) {
				return fmt.Errorf("card %q of the id index is missing", ids[order[i].at])
			}
			order[i].from = len(cards)
			cards = append(cards, v...)
			order[i].to = len(cards)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("get %d cards: %w", len(ids), err)
	}
	slices.SortFunc(order, func(a, b lookup) int { return a.at - b.at })
	for _, l := range order {
		if l.key == nil {
			missing(ids[l.at])
		} else {
			found(cards[l.from:l.to])
		}
	}
	return nil
}

// SetCardsByNumber calls fn with the canonical JSON of each card of the
// set that ref resolves to (as Set does) whose printed number equals
// number by its normalized form (NormalizeNumber: "25", "025" and "25/73"
// are one number), ordered by card id. The cards of a set are keyed by
// their NumberKey, which delimits itself, so they lie in one range that a
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
		prefix := AppendNumberKey(append(buf[:0], s.prefix...), number)
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
