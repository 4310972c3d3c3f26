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
	if got, want := len(a.hot), sampleCards; got != want {
		t.Fatalf("%d hot cards, want %d", got, want)
	}
	if got, want := len(a.queries), sampleQueries; got != want {
		t.Fatalf("%d queries, want %d", got, want)
	}
	if len(a.sets) == 0 {
		t.Fatal("no set codes")
	}
	for _, c := range a.hot {
		if c.id == "" || c.set == "" || c.number == "" {
			t.Fatalf("a chosen card was not read whole: %+v", c)
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
	if !slices.Equal(a.hot, b.hot) || !slices.Equal(a.sets, b.sets) || !slices.Equal(a.queries, b.queries) {
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
	batched := map[string]bool{}
	for _, u := range uris[routeGetCards] {
		q, err := url.ParseQuery(strings.TrimPrefix(u, apiPath+"/catalog/cards?"))
		if ids := q["id"]; err != nil || len(ids) == 0 || len(ids) > batchIDs {
			t.Fatalf("%s: not a batch of 1 to %d ids (%v)", u, batchIDs, err)
		}
		for _, id := range q["id"] {
			if batched[id] {
				t.Fatalf("%s: card %q asked twice", u, id)
			}
			batched[id] = true
		}
	}
	pairs := map[[2]string]bool{}
	for _, c := range smp.cards {
		if c.number != "" {
			pairs[[2]string{c.set, c.number}] = true
		}
	}
	if len(batched) != st.Cards || len(uris[routeByNumber]) != len(pairs) {
		t.Errorf("%d cards in batches and %d numbers asked, want %d and %d", len(batched), len(uris[routeByNumber]), st.Cards, len(pairs))
	}
	searched := map[string]bool{}
	for _, u := range uris[routeSearch] {
		searched[u+"&fuzzy=true"] = true
	}
	mistyped := 0
	for _, u := range uris[routeFuzzy] {
		if !strings.HasSuffix(u, "&fuzzy=true") {
			t.Fatalf("%s: not a fuzzy search", u)
		}
		if !searched[u] {
			mistyped++
		}
	}
	// Queries whose longest term is under 5 characters (fragments of a
	// word, most names with a number) stay as typed: 55 % of them here.
	if mistyped < len(uris[routeFuzzy])/3 {
		t.Errorf("%d of %d fuzzy queries mistyped", mistyped, len(uris[routeFuzzy]))
	}
	if n := len(uris[routeFuzzy]); n < len(uris[routeSearch])*9/10 {
		t.Errorf("%d mistyped queries of %d", n, len(uris[routeSearch]))
	}
	// A route's order is its own: without the pages of sets, the
	// searches come in the same order.
	setless := smp
	setless.sets = nil
	if alone := longTailURIs(setless, 7); !slices.Equal(alone[routeSearch], uris[routeSearch]) || !slices.Equal(alone[routeAutocomplete], uris[routeAutocomplete]) {
		t.Error("the searches' order changed with the sets")
	}
	again := longTailURIs(smp, 7)
	for _, route := range routeNames {
		if !slices.Equal(again[route], uris[route]) {
			t.Fatalf("%s: the same seed gave different long-tail requests", route)
		}
	}
	if _, ok := uris[routeListSets]; ok {
		t.Fatal("long-tail traffic lists the sets")
	}
}
