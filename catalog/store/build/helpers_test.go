package build

import (
	"context"
	"testing"
	"time"

	"github.com/catalogd/catalogd/catalog"
	"github.com/catalogd/catalogd/catalog/store"
)

// card is a valid card of the set (zone, code), named after its id.
func card(id, zone, code, setName, number string) *catalog.Card {
	return &catalog.Card{ID: id, Name: "Card " + id, SetName: setName, SetCode: code, Number: number, Language: "en", Variant: catalog.DefaultVariant, Zone: zone}
}

// createCommitting starts a Writer at path that commits every commitAt
// bytes.
func createCommitting(t *testing.T, path string, commitAt int) *Writer {
	t.Helper()
	small := DefaultLimits()
	small.CommitAt = commitAt
	w, err := CreateWith(path, small)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// finishAndOpen finishes the catalogue w writes at path and opens it.
func finishAndOpen(t *testing.T, w *Writer, path string) *store.DB {
	t.Helper()
	if _, err := w.Finish(context.Background(), store.Info{Generation: "g", ImportedAt: time.Unix(1e9, 0).UTC()}); err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}
