package server

import (
	"net/http"

	"github.com/catalogd/catalogd/catalog"
)

// Limits of listChanges (docs/CONTRACT.md, Changes).
const (
	defaultChangesLimit = 500
	maxChangesLimit     = 1000
)

// changesQuery reads the parameters of listChanges.
func changesQuery(r *http.Request) (catalog.ChangesQuery, error) {
	q, err := parseQuery(r.URL.RawQuery)
	if err != nil {
		return catalog.ChangesQuery{}, err
	}
	since, ok := q.get("since")
	if !ok && len(q.errs) == 0 || ok && since == "" {
		q.fail("since", "is required: the generation the copy holds, from the Catalog-Generation of its export or the meta.to of its last sync")
	}
	cq := catalog.ChangesQuery{
		Since: since,
		Zone:  q.zone("zone"),
		Limit: int(q.int("limit", defaultChangesLimit, 1, maxChangesLimit)),
	}
	if after, ok := q.get("after"); ok {
		cq.After = after
		switch {
		case after == "":
			q.fail("after", "must not be empty: pass the meta.next of the previous page as it is")
		case cq.CheckCursor() != nil:
			q.fail("after", "is not a cursor of this list: pass the meta.next of the previous page as it is")
		}
	}
	return cq, q.err()
}

// appendChanges appends {"data": [Change], "meta": {"from", "to", "next"}}.
func appendChanges(b []byte, db *catalog.DB, q catalog.ChangesQuery) ([]byte, error) {
	b = append(b, `{"data":[`...)
	n := 0
	next, err := db.Changes(q, func(c catalog.Change) error {
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
		return b, err
	}
	b = append(b, `],"meta":{"from":`...)
	b = catalog.AppendJSONString(b, q.Since)
	b = append(b, `,"to":`...)
	b = catalog.AppendJSONString(b, db.Generation())
	b = append(b, `,"next":`...)
	if next == "" {
		b = append(b, "null"...)
	} else {
		b = catalog.AppendJSONString(b, next)
	}
	return append(b, `}}`...), nil
}
