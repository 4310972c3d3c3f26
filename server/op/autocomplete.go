package op

import (
	"strconv"

	"github.com/catalogd/catalogd/catalog"
	"github.com/catalogd/catalogd/catalog/store"
)

// Limits of autocompleteNames (docs/CONTRACT.md, As you type): q as in
// search but from one character, so that a box suggests from the first
// key pressed.
const (
	MinPrefixLen             = 1
	DefaultAutocompleteLimit = 10
)

// AutocompleteRequest asks for the names that complete what was typed.
type AutocompleteRequest = store.AutocompleteQuery

// ParseAutocomplete reads q, zone and limit.
func ParseAutocomplete(p Params) (AutocompleteRequest, error) {
	r := reader{p: p}
	var req AutocompleteRequest
	req.Q = r.text("q", MinPrefixLen, MaxQueryLen, true)
	req.Zone = r.zone("zone")
	req.Limit = int(r.integer("limit", DefaultAutocompleteLimit, 1, store.MaxAutocompleteLimit))
	return req, r.err()
}

// autocompleteNames appends {"data": [{"name", "cards"}…]}, best first.
func autocompleteNames(b []byte, db *store.DB, req AutocompleteRequest) (Answer, error) {
	names, err := db.Autocomplete(req)
	if err != nil {
		return Answer{}, fromCatalog(err)
	}
	b = append(b, `{"data":[`...)
	for i, n := range names {
		if i > 0 {
			b = append(b, ',')
		}
		b = catalog.AppendJSONString(append(b, `{"name":`...), n.Name)
		b = strconv.AppendUint(append(b, `,"cards":`...), n.Cards, 10)
		b = append(b, '}')
	}
	return Answer{Body: append(b, `]}`...), N: len(names)}, nil
}
