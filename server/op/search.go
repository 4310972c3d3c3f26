package op

import (
	"unicode/utf8"

	"github.com/catalogd/catalogd/catalog/store"
)

// Limits of searchCards (docs/CONTRACT.md, Search).
const (
	MinQueryLen  = 2
	MaxQueryLen  = 200
	MaxSetLen    = 50
	DefaultLimit = 25
	MaxLimit     = 100
)

// SearchRequest asks for the cards whose folded name holds every term of
// Q, or whose printed number equals it.
type SearchRequest = store.SearchQuery

// ParseSearch reads q, zone, set, limit and fuzzy.
func ParseSearch(p Params) (SearchRequest, error) {
	r := reader{p: p}
	var req SearchRequest
	req.Q = r.text("q", MinQueryLen, MaxQueryLen, true)
	req.Zone = r.zone("zone")
	if set, ok := r.one("set"); ok {
		switch {
		case !utf8.ValidString(set):
			r.fail("set", "must be valid UTF-8")
		case set == "":
			r.fail("set", "must not be empty; leave it out to search every set")
		case utf8.RuneCountInString(set) > MaxSetLen:
			r.fail("set", "must be at most %d characters long, got %d", MaxSetLen, utf8.RuneCountInString(set))
		default:
			req.Set = set
		}
	}
	req.Limit = int(r.integer("limit", DefaultLimit, 1, MaxLimit))
	req.Fuzzy = r.boolean("fuzzy")
	return req, r.err()
}

// searchCards appends {"data": [cards]}, in printed-number order; a fuzzy
// search's by the edits they take first.
func searchCards(b []byte, db *store.DB, req SearchRequest) (Answer, error) {
	cards := cardsOpen(b)
	if err := db.Search(req, cards.add); err != nil {
		return Answer{}, fromCatalog(err)
	}
	return Answer{Body: append(cards.b, `]}`...), N: cards.n}, nil
}
