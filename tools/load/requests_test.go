package main

import (
	"math"
	"net/url"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSampleGenerated(t *testing.T) {
	db, _ := importGenerated(t, 5000)
	a, _, _, err := sampleCatalogue(db, math.MaxInt, math.MaxInt, 7)
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
	b, _, _, err := sampleCatalogue(db, math.MaxInt, math.MaxInt, 7)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(a.cardIDs, b.cardIDs) || !slices.Equal(a.sets, b.sets) || !slices.Equal(a.queries, b.queries) {
		t.Fatal("the same seed chose different requests")
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

// TestLongTailURIs checks that long-tail traffic asks for every card once,
// every page of every set once, and distinct searchable queries, in an order
// the seed fixes.
func TestLongTailURIs(t *testing.T) {
	db, st := importGenerated(t, 5000)
	smp, _, _, err := sampleCatalogue(db, math.MaxInt, math.MaxInt, 7)
	if err != nil {
		t.Fatal(err)
	}
	uris := longTailURIs(smp, 7)
	pages := 0
	for _, s := range smp.sets {
		pages += int((s.cards + setPageSize - 1) / setPageSize)
	}
	for route, want := range map[string]int{routeGetCard: st.Cards, routeListSetCards: pages} {
		if got := len(uris[route]); got != want {
			t.Errorf("%s: %d requests, want %d", route, got, want)
		}
	}
	if n := len(uris[routeSearch]); n < 5000 {
		t.Errorf("%d queries from 5,000 cards, want at least 5,000", n)
	}
	for route, list := range uris {
		seen := map[string]bool{}
		for _, u := range list {
			if seen[u] {
				t.Fatalf("%s: %s asked twice", route, u)
			}
			seen[u] = true
		}
	}
	for _, u := range uris[routeSearch] {
		q, err := url.ParseQuery(strings.TrimPrefix(u, apiPath+"/catalog/search?"))
		if n := utf8.RuneCountInString(q.Get("q")); err != nil || n < 2 || n > 200 {
			t.Fatalf("%s: not a query of 2 to 200 characters (%v)", u, err)
		}
	}
	again := longTailURIs(smp, 7)
	if !slices.Equal(again[routeSearch], uris[routeSearch]) || !slices.Equal(again[routeGetCard], uris[routeGetCard]) || !slices.Equal(again[routeListSetCards], uris[routeListSetCards]) {
		t.Fatal("the same seed gave different long-tail requests")
	}
	if _, ok := uris[routeListSets]; ok {
		t.Fatal("long-tail traffic lists the sets")
	}
}
