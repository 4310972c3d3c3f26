package main

import (
	"path/filepath"
	"slices"
	"testing"
	"unicode/utf8"

	"github.com/catalogd/catalogd/internal/gen"
)

func TestSampleSnapshot(t *testing.T) {
	path := filepath.Join(t.TempDir(), "snapshot.json")
	st, err := gen.WriteFile(path, gen.Options{Cards: 5000, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	a, err := sampleSnapshot(path, st, 7)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(a.cardIDs), sampleCards; got != want {
		t.Fatalf("%d card ids, want %d", got, want)
	}
	if got, want := len(a.queries), sampleQueries; got != want {
		t.Fatalf("%d queries, want %d", got, want)
	}
	if len(a.sets) == 0 {
		t.Fatal("no set codes")
	}
	for _, id := range a.cardIDs {
		if id == "" {
			t.Fatal("a chosen card was not found in the snapshot")
		}
	}
	// A query is left empty only for a name too short to search for, which
	// few generated names are.
	empty := 0
	for _, q := range a.queries {
		if q == "" {
			empty++
		} else if utf8.RuneCountInString(q) < 2 {
			t.Errorf("query %q is too short to search for", q)
		}
	}
	if empty > len(a.queries)/10 {
		t.Fatalf("%d of %d queries empty: the chosen cards were not found, or their names not read", empty, len(a.queries))
	}
	b, err := sampleSnapshot(path, st, 7)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(a.cardIDs, b.cardIDs) || !slices.Equal(a.sets, b.sets) || !slices.Equal(a.queries, b.queries) {
		t.Fatal("the same seed chose different requests")
	}
}

func TestTypicalQuery(t *testing.T) {
	for name, want := range map[string]string{
		"Charizard ex":         "charizard",
		"Professor's Research": "professor's",
		"ピカチュウ":                "ピカチュウ",
		"N":                    "",
		"N A":                  "n a",
		"Mr. Mime":             "mime",
	} {
		if got := typicalQuery(name); got != want {
			t.Fatalf("typicalQuery(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestRouteTargets(t *testing.T) {
	if len(routeTargets) != len(routeNames) {
		t.Fatalf("targets for %d routes, %d routes", len(routeTargets), len(routeNames))
	}
	for _, name := range routeNames {
		if routeTargets[name].minRatio <= 0 {
			t.Fatalf("route %s has no throughput target", name)
		}
	}
}
