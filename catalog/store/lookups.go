package store

import (
	"bytes"
	"fmt"

	"github.com/catalogd/catalogd/catalog"
)

// Cards calls found with the canonical JSON of each card of ids that the
// catalogue has, and missing with each id it has not, in the order of ids:
// one lookup per id (AppendCard's one seek or two), all in one read
// transaction.
// (Looking them up in key order instead, for neighbours to share the pages
// the seeks descend, took longer on a million cards: what it saves is
// little against random ids, and the cards must then be copied to be given
// in the order asked. docs/BENCHMARKS.md, Lookups.) The slice passed to
// found is valid only until found returns.
func (db *DB) Cards(ids []string, found func(card []byte), missing func(id string)) error {
	err := db.read(func(r *reader) error {
		for _, id := range ids {
			card, ok, err := r.card(id)
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
	})
	if err != nil {
		return fmt.Errorf("get %d cards: %w", len(ids), err)
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
