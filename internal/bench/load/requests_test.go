package main

import (
	"path/filepath"
	"slices"
	"testing"

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
