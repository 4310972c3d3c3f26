package op

import (
	"errors"
	"strings"
	"unicode/utf8"

	"github.com/catalogd/catalogd/catalog"
	"github.com/catalogd/catalogd/catalog/store"
)

// Limits of listChanges (docs/CONTRACT.md, Changes).
const (
	DefaultChangesLimit = 500
	MaxChangesLimit     = 1000
)

// ChangesRequest asks for one page of what changed since a generation.
type ChangesRequest = store.ChangesQuery

// ParseChanges reads since, zone, after and limit.
func ParseChanges(p Params) (ChangesRequest, error) {
	r := reader{p: p}
	since, ok := r.one("since")
	if !ok && !r.given("since") || ok && since == "" {
		r.fail("since", "is required: the generation the copy holds, from the Catalog-Generation of its export or the meta.nextSince of the last page it applied")
	}
	switch base, held, two := strings.Cut(since, store.HeldSeparator); {
	case ok && !utf8.ValidString(since):
		r.fail("since", "must be valid UTF-8")
	case two && (base == "" || held == "" || strings.Contains(held, store.HeldSeparator)):
		r.fail("since", "must be one generation, or two joined by "+store.HeldSeparator+" as meta.nextSince gives them: pass it as it is")
	}
	req := ChangesRequest{
		Since: since,
		Zone:  r.zone("zone"),
		Limit: int(r.integer("limit", DefaultChangesLimit, 1, MaxChangesLimit)),
	}
	if after, ok := r.one("after"); ok {
		req.After = after
		switch err := req.CheckCursor(); {
		case after == "":
			r.fail("after", "must not be empty: pass the meta.next of the previous page as it is")
		case errors.Is(err, store.ErrOtherListCursor):
			r.fail("after", "is the cursor of another list (another since or zone): give it with the since and zone of the page whose meta.next it is, or start again from since without after")
		case err != nil:
			r.fail("after", "is not a cursor of this list: pass the meta.next of the previous page as it is, or start again from since without after")
		}
	}
	return req, r.err()
}

// listChanges appends {"data": [Change], "meta": {"from", "to", "next",
// "nextSince"}}.
func listChanges(b []byte, db *store.DB, req ChangesRequest) (Answer, error) {
	b = append(b, `{"data":[`...)
	n := 0
	next, nextSince, err := db.Changes(req, func(c store.Change) error {
		if n > 0 {
			b = append(b, ',')
		}
		n++
		b = append(b, `{"kind":"`...)
		b = append(b, c.Kind...)
		b = append(b, `","id":`...)
		b = catalog.AppendJSONString(b, c.ID)
		if c.Record == nil {
			b = append(b, `,"op":"remove"}`...)
			return nil
		}
		b = append(b, `,"op":"upsert","record":`...)
		b = append(b, c.Record...)
		b = append(b, '}')
		return nil
	})
	if err != nil {
		return Answer{}, fromCatalog(err)
	}
	b = append(b, `],"meta":{"from":`...)
	b = catalog.AppendJSONString(b, req.Since)
	b = append(b, `,"to":`...)
	b = catalog.AppendJSONString(b, db.Generation())
	b = append(b, `,"next":`...)
	if next == "" {
		b = append(b, "null"...)
	} else {
		b = catalog.AppendJSONString(b, next)
	}
	b = append(b, `,"nextSince":`...)
	b = catalog.AppendJSONString(b, nextSince)
	return Answer{Body: append(b, `}}`...), N: n}, nil
}

// ExportRequest asks for the whole catalogue, or one zone of it, as a
// snapshot. The export streams from the file (server's exportCatalog), so
// it has no Answer here.
type ExportRequest struct{ Zone string }

// ParseExport reads zone.
func ParseExport(p Params) (ExportRequest, error) {
	r := reader{p: p}
	req := ExportRequest{Zone: r.zone("zone")}
	return req, r.err()
}
