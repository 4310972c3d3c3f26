package main

import (
	"path/filepath"
	"testing"

	"github.com/catalogd/catalogd/importer"
	"github.com/catalogd/catalogd/tools/gen"
)

// A catalogue smaller than the sample lends every card once, and the pages
// of sets drawn stay within dbPages.
func TestSampleCatalogue(t *testing.T) {
	db, st := importGenerated(t, 3000)
	dir := filepath.Dir(db)
	smp, cards, sets, err := sampleCatalogue(db, dbCards, dbPages, 7)
	if err != nil {
		t.Fatal(err)
	}
	if cards != st.Cards || sets != st.Sets {
		t.Fatalf("%d cards and %d sets, want %d and %d", cards, sets, st.Cards, st.Sets)
	}
	seen := map[string]bool{}
	for _, c := range smp.cards {
		if c.id == "" || c.name == "" || seen[c.id] {
			t.Fatalf("card %+v: empty or drawn twice", c)
		}
		seen[c.id] = true
	}
	if got, want := len(seen), st.Cards; got != want {
		t.Fatalf("%d cards sampled, want every one of %d", got, want)
	}
	if got, want := len(smp.hot), sampleCards; got != want {
		t.Fatalf("%d hot cards, want %d", got, want)
	}
	pages := int64(0)
	for _, s := range smp.sets {
		if s.cards < 1 {
			t.Fatalf("set %s without cards", s.code)
		}
		pages += (s.cards + setPageSize - 1) / setPageSize
	}
	if len(smp.sets) == 0 || pages > dbPages {
		t.Fatalf("%d sets with %d pages, want some and at most %d", len(smp.sets), pages, dbPages)
	}
	// A larger catalogue lends as many distinct cards as asked.
	part, _, _, err := sampleCatalogue(db, 500, dbPages, 7)
	if err != nil {
		t.Fatal(err)
	}
	seen = map[string]bool{}
	for _, c := range part.cards {
		seen[c.id] = true
	}
	if len(seen) != 500 || len(part.cards) != 500 {
		t.Fatalf("%d cards, %d distinct, want 500 of each", len(part.cards), len(seen))
	}
	if _, _, _, err := sampleCatalogue(filepath.Join(dir, "missing.db"), dbCards, dbPages, 7); err == nil {
		t.Fatal("a missing file gave no error")
	}
}

// importGenerated imports a generated catalogue of cards cards into a
// temporary file.
func importGenerated(t *testing.T, cards int) (string, gen.Stats) {
	t.Helper()
	dir := t.TempDir()
	snap, db := filepath.Join(dir, "snapshot.json"), filepath.Join(dir, "catalog.db")
	st, err := gen.WriteFile(snap, gen.Options{Cards: cards, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := importer.Import(t.Context(), importer.Config{DB: db, Inputs: []string{snap}}); err != nil {
		t.Fatal(err)
	}
	return db, st
}
