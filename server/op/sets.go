package op

import (
	"strconv"

	"github.com/catalogd/catalogd/catalog"
	"github.com/catalogd/catalogd/catalog/store"
)

// Limits of listSetCards (docs/CONTRACT.md, Endpoints).
const (
	DefaultPageSize = 50
	MaxPageSize     = 200
	MaxPage         = catalog.MaxInteger
)

// ListSetsRequest asks for the sets of one zone, or of every zone ("").
type ListSetsRequest struct{ Zone string }

// ParseListSets reads the zone filter of MCP's list_sets.
func ParseListSets(p Params) (ListSetsRequest, error) {
	r := reader{p: p}
	req := ListSetsRequest{Zone: r.zone("zone")}
	return req, r.err()
}

// The envelope of the list of sets, around store.DB.SetList.
var setsOpen, setsClose = []byte(`{"data":`), []byte(`}`)

// SetsParts is the body of listSets in pieces: the envelope around the
// pieces of the list, which are the catalogue file's own bytes, so that a
// list that grows with the catalogue is written from where it lies.
func SetsParts(db *store.DB, req ListSetsRequest) ([][]byte, error) {
	pieces, err := db.SetList(req.Zone)
	if err != nil {
		return nil, err
	}
	parts := make([][]byte, 0, len(pieces)+2)
	return append(append(append(parts, setsOpen), pieces...), setsClose), nil
}

// listSets appends {"data": [sets]}.
func listSets(b []byte, db *store.DB, req ListSetsRequest) (Answer, error) {
	parts, err := SetsParts(db, req)
	if err != nil {
		return Answer{}, fromCatalog(err)
	}
	for _, p := range parts {
		b = append(b, p...)
	}
	var n int64
	for _, z := range db.Info().Zones {
		if req.Zone == "" || z.Zone == req.Zone {
			n += z.Sets
		}
	}
	return Answer{Body: b, N: int(n)}, nil
}

// ListSetCardsRequest asks for one page of the cards of a set.
type ListSetCardsRequest struct {
	Code           string // a set id or code (store.DB.Set)
	Page, PageSize int64
}

// ParseListSetCards reads code, page and pageSize.
func ParseListSetCards(p Params) (ListSetCardsRequest, error) {
	r := reader{p: p}
	req := ListSetCardsRequest{
		Code:     r.required("code"),
		Page:     r.integer("page", 1, 1, MaxPage),
		PageSize: r.integer("pageSize", DefaultPageSize, 1, MaxPageSize),
	}
	return req, r.err()
}

// listSetCards appends {"data": [cards], "meta": page}.
func listSetCards(b []byte, db *store.DB, req ListSetCardsRequest) (Answer, error) {
	cards := cardsOpen(b)
	total, err := db.SetCards(req.Code, req.Page, req.PageSize, cards.add)
	if err != nil {
		return Answer{}, fromCatalog(err)
	}
	b = append(cards.b, `],"meta":{"page":`...)
	b = strconv.AppendInt(b, req.Page, 10)
	b = append(b, `,"pageSize":`...)
	b = strconv.AppendInt(b, req.PageSize, 10)
	b = append(b, `,"total":`...)
	b = strconv.AppendInt(b, total, 10)
	return Answer{Body: append(b, `}}`...), N: cards.n, Total: total}, nil
}
