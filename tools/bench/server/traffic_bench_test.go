package serverbench

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/catalogd/catalogd/importer"
	"github.com/catalogd/catalogd/server"
	"github.com/catalogd/catalogd/tools/gen"
)

var trafficCards = flag.Int("traffic-cards", 100_000, "cards in the generated catalogue of BenchmarkTraffic")

// BenchmarkTraffic prices each catalogue route through the whole Server,
// as BenchmarkHandlers does, on the two shapes of traffic of the load
// harness and a mix of the two, with the answer cache on and off, over a
// generated catalogue of -traffic-cards cards:
//
//	go test -C tools ./bench/server -run '^$' -bench Traffic -benchtime 20000x -args -traffic-cards=100000
//
// "hot-spot" cycles through 1,000 card ids, 200 pages of 50 and 100
// queries; "long-tail" through every card, every page of 50 of every set,
// and up to 20,000 distinct queries made of the cards' names; "mixed"
// sends the two in turn, a long tail beside hot spots. A client that
// accepts gzip, as most do, is priced with "gzip".
func BenchmarkTraffic(b *testing.B) {
	dir := b.TempDir()
	snapshot := filepath.Join(dir, "snapshot.json")
	if _, err := gen.WriteFile(snapshot, gen.Options{Cards: *trafficCards, Seed: 1}); err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(dir, "catalog.db")
	if _, err := importer.Import(context.Background(), importer.Config{DB: path, Inputs: []string{snapshot}}); err != nil {
		b.Fatal(err)
	}
	logs := &accessLog{}
	var shapes map[string]map[string][]string
	for _, cache := range []struct {
		name  string
		bytes int64
	}{{"cache", 0}, {"nocache", -1}} {
		f := newFixture(b, path, func(c *server.Config) { c.AccessLog, c.AnswerCache = logs, cache.bytes })
		if shapes == nil {
			shapes = trafficShapes(b, f)
		}
		for _, shape := range []string{"hot-spot", "long-tail", "mixed"} {
			for _, route := range []string{"getCard", "listSetCards", "search"} {
				for _, enc := range []string{"plain", "gzip"} {
					targets := shapes[shape][route]
					b.Run(fmt.Sprintf("%s/%s/%s/%s", cache.name, shape, route, enc), func(b *testing.B) {
						benchmarkTargets(b, f, targets, enc == "gzip")
					})
				}
			}
		}
	}
}

// benchmarkTargets sends the targets in turn, each of them once before
// the timing starts, as a server that has run a while has seen them.
func benchmarkTargets(b *testing.B, f *fixture, targets []string, gzip bool) {
	reqs := make([]*http.Request, len(targets))
	for i, target := range targets {
		reqs[i] = httptest.NewRequest(http.MethodGet, f.base+target, nil)
		reqs[i].Header.Set("Authorization", "Bearer "+f.token)
		if gzip {
			reqs[i].Header.Set("Accept-Encoding", "gzip")
		}
	}
	w := &discardWriter{header: http.Header{}}
	send := func(r *http.Request) {
		clear(w.header)
		w.status, w.bytes = 0, 0
		f.srv.ServeHTTP(w, r)
		if w.status != http.StatusOK {
			b.Fatalf("%s: status %d", r.URL, w.status)
		}
	}
	for _, r := range reqs {
		send(r)
	}
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		send(reqs[i%len(reqs)])
		i++
	}
}

// trafficShapes returns the targets of each shape of traffic, by route,
// read from the catalogue through the API.
func trafficShapes(b *testing.B, f *fixture) map[string]map[string][]string {
	var sets struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	get := func(target string, v any) { f.getJSON(b, target, v) }
	get("/catalog/sets", &sets)
	var cards, pages []string
	names := map[string]bool{}
	for _, s := range sets.Data {
		for page := 1; ; page++ {
			var p struct {
				Data []struct {
					ID   string `json:"id"`
					Name string `json:"name"`
				} `json:"data"`
			}
			get(fmt.Sprintf("/catalog/sets/%s/cards?page=%d&pageSize=200", url.PathEscape(s.ID), page), &p)
			for _, c := range p.Data {
				cards = append(cards, "/catalog/cards/"+url.PathEscape(c.ID))
				names[c.Name] = true
			}
			for i := 0; i < len(p.Data); i += 50 {
				pages = append(pages, fmt.Sprintf("/catalog/sets/%s/cards?page=%d", url.PathEscape(s.ID), (page-1)*4+i/50+1))
			}
			if len(p.Data) < 200 {
				break
			}
		}
	}
	// Queries as a search box sends them: a name's longest word, the
	// first letters of a word as it is typed, the whole name.
	seen := map[string]bool{}
	var queries []string
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for n := range names {
			if !yield(n) {
				return
			}
		}
	}) {
		words := strings.Fields(name)
		longest := slices.MaxFunc(words, func(a, b string) int { return len([]rune(a)) - len([]rune(b)) })
		for _, q := range []string{longest, string([]rune(longest)[:min(3, len([]rune(longest)))]), name} {
			if len([]rune(q)) >= 2 && !seen[q] {
				seen[q] = true
				queries = append(queries, "/catalog/search?q="+url.QueryEscape(q))
			}
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, list := range [][]string{cards, pages, queries} {
		rng.Shuffle(len(list), func(i, j int) { list[i], list[j] = list[j], list[i] })
	}
	if len(queries) > 20_000 {
		queries = queries[:20_000]
	}
	head := func(list []string, n int) []string { return list[:min(n, len(list))] }
	b.Logf("long tail: %d cards, %d pages, %d queries", len(cards), len(pages), len(queries))
	shapes := map[string]map[string][]string{
		"hot-spot":  {"getCard": head(cards, 1000), "listSetCards": head(pages, 200), "search": head(queries, 100)},
		"long-tail": {"getCard": cards, "listSetCards": pages, "search": queries},
		"mixed":     {},
	}
	// Mixed: a long tail (a mirror job, a search box) beside the hot spots
	// of other clients, one request of each in turn.
	for route, tail := range shapes["long-tail"] {
		hot := shapes["hot-spot"][route]
		if len(hot) == 0 {
			b.Fatalf("no %s targets in a catalogue of %d cards", route, *trafficCards)
		}
		for i, target := range tail {
			shapes["mixed"][route] = append(shapes["mixed"][route], target, hot[i%len(hot)])
		}
	}
	return shapes
}
