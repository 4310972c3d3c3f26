package op

import (
	"unicode/utf8"

	"github.com/catalogd/catalogd/catalog"
	"github.com/catalogd/catalogd/catalog/store"
)

// MaxIDs is the most ids one getCards asks for (docs/CONTRACT.md, Lookups).
const MaxIDs = 100

// GetCardRequest asks for one card by its id.
type GetCardRequest struct{ ID string }

// ParseGetCard reads cardId.
func ParseGetCard(p Params) (GetCardRequest, error) {
	r := reader{p: p}
	req := GetCardRequest{ID: r.required("cardId")}
	return req, r.err()
}

// getCard appends {"data": card}.
func getCard(b []byte, db *store.DB, req GetCardRequest) (Answer, error) {
	b, err := db.AppendCard(append(b, `{"data":`...), req.ID)
	if err != nil {
		return Answer{}, fromCatalog(err)
	}
	return Answer{Body: append(b, '}'), N: 1}, nil
}

// GetCardsRequest asks for many cards by id: IDs holds each id once, in
// the order first asked.
type GetCardsRequest struct{ IDs []string }

// ParseGetCards reads id, the one parameter given once per value: 1 to
// MaxIDs of them, none empty. An id asked twice is answered once.
func ParseGetCards(p Params) (GetCardsRequest, error) {
	r := reader{p: p}
	ids := r.list("id")
	switch {
	case ids == nil:
		r.fail("id", "is required: give 1 to %d card ids", MaxIDs)
	case len(ids) == 0:
		r.fail("id", "must hold 1 to %d card ids, got none", MaxIDs)
	case len(ids) > MaxIDs:
		r.fail("id", "holds %d card ids; give 1 to %d per request, and ask for more in more requests", len(ids), MaxIDs)
	}
	var req GetCardsRequest
	if len(r.errs) > 0 {
		return req, r.err()
	}
	seen := make(map[string]bool, len(ids))
	req.IDs = make([]string, 0, len(ids))
	for i, id := range ids {
		switch {
		case id == "":
			r.fail("id", "value %d of %d is empty; every id must name a card", i+1, len(ids))
		case !utf8.ValidString(id):
			r.fail("id", "value %d of %d must be valid UTF-8", i+1, len(ids))
		case !seen[id]:
			seen[id] = true
			req.IDs = append(req.IDs, id)
		}
	}
	return req, r.err()
}

// getCards appends {"data": [cards], "notFound": [ids]}: the cards found in
// the order asked, then the ids no card has, in that order too. It reads
// the file once for every id, in one transaction, and never answers
// NotFound.
func getCards(b []byte, db *store.DB, req GetCardsRequest) (Answer, error) {
	var missing []string
	cards := cardsOpen(b)
	if err := db.Cards(req.IDs, cards.add, func(id string) { missing = append(missing, id) }); err != nil {
		return Answer{}, fromCatalog(err)
	}
	b = append(cards.b, `],"notFound":[`...)
	for i, id := range missing {
		if i > 0 {
			b = append(b, ',')
		}
		b = catalog.AppendJSONString(b, id)
	}
	return Answer{Body: append(b, `]}`...), N: cards.n, Missing: len(missing)}, nil
}

// GetSetCardsByNumberRequest asks for the cards of a set that bear one
// printed number, in any of its written forms.
type GetSetCardsByNumberRequest struct {
	Code   string // a set id or code (store.DB.Set)
	Number string // as written by the client: 25, 025, 025/073 are one number
}

// ParseGetSetCardsByNumber reads code and number.
func ParseGetSetCardsByNumber(p Params) (GetSetCardsByNumberRequest, error) {
	r := reader{p: p}
	req := GetSetCardsByNumberRequest{
		Code:   r.required("code"),
		Number: r.text("number", 1, catalog.MaxNumberLength, true),
	}
	return req, r.err()
}

// getSetCardsByNumber appends {"data": [cards]}, ordered by id.
func getSetCardsByNumber(b []byte, db *store.DB, req GetSetCardsByNumberRequest) (Answer, error) {
	cards := cardsOpen(b)
	if err := db.SetCardsByNumber(req.Code, req.Number, cards.add); err != nil {
		return Answer{}, fromCatalog(err)
	}
	return Answer{Body: append(cards.b, `]}`...), N: cards.n}, nil
}
