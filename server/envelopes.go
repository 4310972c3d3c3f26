package server

import (
	"strconv"

	"github.com/catalogd/catalogd/catalog"
)

// The response bodies of the catalogue, shared by REST and MCP so that both
// answer the same question with the same bytes. Each appends to b.

// The envelope of the list of sets, around catalog.DB.SetList.
var setsOpen, setsClose = []byte(`{"data":`), []byte(`}`)

// appendSets appends {"data": [sets]}, of one zone or, for "", all.
func appendSets(b []byte, db *catalog.DB, zone string) ([]byte, error) {
	pieces, err := db.SetList(zone)
	if err != nil {
		return b, err
	}
	b = append(b, setsOpen...)
	for _, p := range pieces {
		b = append(b, p...)
	}
	return append(b, setsClose...), nil
}

// setsAnswer is the body of listSets in pieces: the envelope around the
// pieces of the list, which are the catalogue file's own bytes.
func setsAnswer(db *catalog.DB) ([][]byte, int, error) {
	pieces, err := db.SetList("")
	if err != nil {
		return nil, 0, err
	}
	parts := make([][]byte, 0, len(pieces)+2)
	parts = append(append(append(parts, setsOpen), pieces...), setsClose)
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	return parts, n, nil
}

// appendSetCards appends {"data": [cards], "meta": page} for one page of the
// set code names, and returns its total and the cards on the page.
func appendSetCards(b []byte, db *catalog.DB, code string, page, pageSize int64) ([]byte, int64, int, error) {
	b = append(b, `{"data":[`...)
	n := 0
	total, err := db.SetCards(code, page, pageSize, func(card []byte) {
		if n > 0 {
			b = append(b, ',')
		}
		b = append(b, card...)
		n++
	})
	if err != nil {
		return b, 0, 0, err
	}
	b = append(b, `],"meta":{"page":`...)
	b = strconv.AppendInt(b, page, 10)
	b = append(b, `,"pageSize":`...)
	b = strconv.AppendInt(b, pageSize, 10)
	b = append(b, `,"total":`...)
	b = strconv.AppendInt(b, total, 10)
	return append(b, `}}`...), total, n, nil
}

// appendCard appends {"data": card}.
func appendCard(b []byte, db *catalog.DB, id string) ([]byte, error) {
	b, err := db.AppendCard(append(b, `{"data":`...), id)
	if err != nil {
		return b, err
	}
	return append(b, '}'), nil
}

// appendSearch appends {"data": [cards]} of a search and returns how many
// cards it holds.
func appendSearch(b []byte, db *catalog.DB, sq catalog.SearchQuery) ([]byte, int, error) {
	b = append(b, `{"data":[`...)
	n := 0
	err := db.Search(sq, func(card []byte) {
		if n > 0 {
			b = append(b, ',')
		}
		b = append(b, card...)
		n++
	})
	if err != nil {
		return b, 0, err
	}
	return append(b, `]}`...), n, nil
}
