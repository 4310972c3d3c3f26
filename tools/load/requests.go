package main

import (
	"context"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/catalogd/catalogd/tools/internal/query"
)

// How many distinct requests each route cycles through in hot-spot
// traffic, and how many distinct queries long-tail search sends.
const (
	sampleCards     = 1000 // getCard, getCards, getSetCardsByNumber: cards
	sampleSets      = 200  // listSetCards: set codes, one page of each
	sampleQueries   = 100  // search, fuzzySearch: cards whose name gives a query
	longTailQueries = 20_000
	setPageSize     = 50
	// batchIDs is the ids of a getCards request: a deck list or a page of
	// a binder, a quarter of what one request may ask.
	batchIDs = 25
)

// The kinds of traffic. Hot-spot traffic cycles through few requests, which
// all fit in catalogd's answer cache. Long-tail traffic is a partner's
// mirror job and search box: every card once, every page of every set, and
// longTailQueries distinct queries. The list of sets is one request
// whatever the traffic, so it runs in hot-spot traffic only.
const (
	hotSpot  = "hot-spot"
	longTail = "long-tail"
)

var trafficNames = []string{hotSpot, longTail}

// The routes.
const (
	routeGetCard      = "getCard"
	routeGetCards     = "getCards"
	routeByNumber     = "getSetCardsByNumber"
	routeListSetCards = "listSetCards"
	routeSearch       = "search"
	routeFuzzy        = "fuzzySearch" // search with fuzzy=true, of mistyped queries
	routeAutocomplete = "autocomplete"
	routeListSets     = "listSets"
)

// routeNames are the routes in the order they are measured.
var routeNames = []string{routeGetCard, routeGetCards, routeByNumber, routeListSetCards, routeSearch, routeFuzzy, routeAutocomplete, routeListSets}

// routeTargets are what catalogd must reach against the ceiling on each
// route: in every closed-loop run, at least minRatio of its throughput;
// with p99Conns connections, a p99 below maxP99 when there is one.
var routeTargets = map[string]struct {
	minRatio float64
	maxP99   time.Duration
}{
	routeGetCard:      {minRatio: 0.85, maxP99: 5 * time.Millisecond},
	routeGetCards:     {minRatio: 0.5},
	routeByNumber:     {minRatio: 0.7},
	routeListSetCards: {minRatio: 0.7},
	routeSearch:       {minRatio: 0.5},
	routeFuzzy:        {minRatio: 0.5},
	routeAutocomplete: {minRatio: 0.5},
	routeListSets:     {minRatio: 0.7},
}

// longTailMinRatio is what catalogd must reach against the ceiling on
// every route in long-tail traffic, where no cache holds most answers.
const longTailMinRatio = 0.9

// goal is what a route must reach in traffic: the route's own target,
// with longTailMinRatio as the ratio in long-tail traffic.
func goal(traffic, route string) (minRatio float64, maxP99 time.Duration) {
	t := routeTargets[route]
	if traffic == longTail {
		return longTailMinRatio, t.maxP99
	}
	return t.minRatio, t.maxP99
}

// p99Conns is the closed-loop run whose p99 is bounded.
const p99Conns = 16

// route is one of the catalogue routes in one kind of traffic, with
// the requests the load cycles through and catalogd's answer to each.
type route struct {
	name    string
	traffic string
	targets []request
}

// request is one request target (path and query, as sent) and its answer,
// as sent.
type request struct {
	uri    string
	body   []byte
	header http.Header // the answer's fields the ceiling sends again
}

// perResponse are the header fields net/http writes for every response
// itself, the ceiling's as well as catalogd's: the ceiling does not replay
// them.
var perResponse = []string{"Date", "Content-Length"}

// fetchAnswer returns the answer the load's requests for uri get, as sent.
// The ceiling replays it, so it must be one it can send the same way: a
// 200 of JSON with its length declared (as net/http does for short bodies,
// and catalogd for long ones), not chunked.
func fetchAnswer(ctx context.Context, client *http.Client, origin, uri, token string, acceptGzip bool) (request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, origin+uri, nil)
	if err != nil {
		return request{}, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if acceptGzip {
		req.Header.Set("Accept-Encoding", "gzip")
	}
	resp, err := client.Do(req)
	if err != nil {
		return request{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return request{}, fmt.Errorf("GET %s: %w", uri, err)
	}
	if resp.StatusCode != http.StatusOK {
		return request{}, fmt.Errorf("GET %s: status %d: %s", uri, resp.StatusCode, body)
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "application/json" {
		return request{}, fmt.Errorf("GET %s: Content-Type %q", uri, resp.Header.Get("Content-Type"))
	}
	if resp.TransferEncoding != nil || resp.ContentLength != int64(len(body)) {
		return request{}, fmt.Errorf("GET %s: Content-Length %d, Transfer-Encoding %q for a body of %d bytes; the ceiling declares the length of every answer", uri, resp.ContentLength, resp.TransferEncoding, len(body))
	}
	switch encoding := resp.Header.Get("Content-Encoding"); {
	case encoding == "gzip" && acceptGzip, encoding == "":
		return request{uri, body, replayable(resp.Header)}, nil
	default:
		return request{}, fmt.Errorf("GET %s: unexpected Content-Encoding %q", uri, encoding)
	}
}

// replayable returns the fields of h that the ceiling sends again.
func replayable(h http.Header) http.Header {
	h = h.Clone()
	for _, k := range perResponse {
		delete(h, k)
	}
	return h
}

func (r *route) meanBody() int64 {
	var n int64
	for _, t := range r.targets {
		n += int64(len(t.body))
	}
	return n / int64(len(r.targets))
}

func (r *route) driveTargets() []driveTarget {
	out := make([]driveTarget, len(r.targets))
	for i, t := range r.targets {
		out[i] = driveTarget{URI: t.uri, Len: int64(len(t.body))}
	}
	return out
}

// sample is what the requests are made of, chosen from the catalogue.
type sample struct {
	hot     []card      // the cards of hot-spot traffic
	sets    []sampleSet // shuffled; only sets with cards
	queries []string
	cards   []card // every card, or a uniform sample of them
}

// sampleSet is a set code and the number of cards of the set it names.
type sampleSet struct {
	code  string
	cards int64
}

// card is what the requests need of a card: its id, name, printed
// number, and the id of its set.
type card struct{ id, name, number, set string }

// pick returns k distinct numbers below n (all of them if k >= n) in the
// order they were drawn.
func pick(rng *rand.Rand, n, k int) []int {
	if k >= n {
		return rng.Perm(n)
	}
	seen := make(map[int]bool, k)
	out := make([]int, 0, k)
	for len(out) < k {
		i := rng.IntN(n)
		if !seen[i] {
			seen[i] = true
			out = append(out, i)
		}
	}
	return out
}

// hotSpotURIs are the request targets of hot-spot traffic, by route, in
// the order they are sent.
func hotSpotURIs(smp sample, seed uint64) map[string][]string {
	rng := rand.New(rand.NewPCG(seed, 0x9a9e))
	uris := map[string][]string{}
	for _, c := range smp.hot {
		uris[routeGetCard] = append(uris[routeGetCard], cardURI(c.id))
	}
	uris[routeGetCards] = batchURIs(smp.hot)
	uris[routeByNumber] = numberURIs(smp.hot)
	for _, set := range smp.sets {
		if len(uris[routeListSetCards]) == sampleSets {
			break
		}
		// set.cards is the set's true number of cards, as a page reports
		// it: a page from the first to the last.
		n := 1 + rng.Int64N((set.cards+setPageSize-1)/setPageSize)
		uris[routeListSetCards] = append(uris[routeListSetCards], pageURI(set.code, n))
	}
	seen := map[string]bool{}
	var queries []string
	for _, q := range smp.queries {
		if q != "" && !seen[q] {
			seen[q] = true
			queries = append(queries, q)
			uris[routeSearch] = append(uris[routeSearch], searchURI(q))
			uris[routeAutocomplete] = append(uris[routeAutocomplete], autocompleteURI(typed(q, rng)))
		}
	}
	uris[routeFuzzy] = fuzzyURIs(queries, seed)
	uris[routeListSets] = []string{apiPath + "/catalog/sets"}
	return uris
}

// longTailURIs are the request targets of long-tail traffic, by route:
// every card, alone and in batches of batchIDs, every set and number of a
// card, every page of every set, and up to longTailQueries distinct
// queries, exact and mistyped, each route's in a seeded random order.
func longTailURIs(smp sample, seed uint64) map[string][]string {
	rng := rand.New(rand.NewPCG(seed, 0x7a11))
	uris := map[string][]string{}
	for _, c := range smp.cards {
		uris[routeGetCard] = append(uris[routeGetCard], cardURI(c.id))
	}
	uris[routeGetCards] = batchURIs(smp.cards)
	uris[routeByNumber] = numberURIs(smp.cards)
	for _, set := range smp.sets {
		for n := int64(1); n <= (set.cards+setPageSize-1)/setPageSize; n++ {
			uris[routeListSetCards] = append(uris[routeListSetCards], pageURI(set.code, n))
		}
	}
	named := make([]query.Card, len(smp.cards))
	for i, c := range smp.cards {
		named[i] = query.Card{Name: c.name, Number: c.number}
	}
	typedOnce := map[string]bool{}
	queries := query.Distinct(named, longTailQueries, rng)
	for _, q := range queries {
		uris[routeSearch] = append(uris[routeSearch], searchURI(q))
		// What was typed on the way to distinct queries may be the same.
		if t := typed(q, rng); !typedOnce[t] {
			typedOnce[t] = true
			uris[routeAutocomplete] = append(uris[routeAutocomplete], autocompleteURI(t))
		}
	}
	uris[routeFuzzy] = fuzzyURIs(queries, seed)
	// Each route's order is drawn from a stream of its own, so that a
	// route added to the harness leaves the others' orders as they were.
	for name, u := range uris {
		h := fnv.New64a()
		h.Write([]byte(name))
		rand.New(rand.NewPCG(seed, h.Sum64())).Shuffle(len(u), func(i, j int) { u[i], u[j] = u[j], u[i] })
	}
	return uris
}

func cardURI(id string) string { return apiPath + "/catalog/cards/" + url.PathEscape(id) }

// batchURIs asks for the cards in getCards requests of batchIDs ids each
// (the last may have fewer), in order.
func batchURIs(cards []card) []string {
	var uris []string
	for batch := range slices.Chunk(cards, batchIDs) {
		q := url.Values{}
		for _, c := range batch {
			q.Add("id", c.id)
		}
		uris = append(uris, apiPath+"/catalog/cards?"+q.Encode())
	}
	return uris
}

// numberURIs asks for each set and printed number of the cards once.
func numberURIs(cards []card) []string {
	var uris []string
	seen := map[[2]string]bool{}
	for _, c := range cards {
		if k := [2]string{c.set, c.number}; c.number != "" && !seen[k] {
			seen[k] = true
			uris = append(uris, apiPath+"/catalog/sets/"+url.PathEscape(c.set)+"/cards/"+url.PathEscape(c.number))
		}
	}
	return uris
}

// fuzzyURIs searches with fuzzy=true for each query mistyped
// (query.Mistyped), each once.
func fuzzyURIs(queries []string, seed uint64) []string {
	rng := rand.New(rand.NewPCG(seed, 0xf022))
	var uris []string
	seen := map[string]bool{}
	for _, q := range queries {
		if m := query.Mistyped(q, rng); !seen[m] {
			seen[m] = true
			uris = append(uris, searchURI(m)+"&fuzzy=true")
		}
	}
	return uris
}

func pageURI(code string, page int64) string {
	return apiPath + "/catalog/sets/" + url.PathEscape(code) + "/cards?page=" + strconv.FormatInt(page, 10) + "&pageSize=" + strconv.Itoa(setPageSize)
}

func searchURI(q string) string { return apiPath + "/catalog/search?q=" + url.QueryEscape(q) }

func autocompleteURI(q string) string {
	return apiPath + "/catalog/autocomplete?q=" + url.QueryEscape(q)
}

// typed returns what a search box sends on the way to q: its terms but
// the last, and the first one to all characters of the last.
func typed(q string, rng *rand.Rand) string {
	terms := strings.Fields(q)
	last := []rune(terms[len(terms)-1])
	terms[len(terms)-1] = string(last[:1+rng.IntN(len(last))])
	return strings.Join(terms, " ")
}

// fetchTargets builds the requests of each kind of traffic in traffics for
// the routes named in only (all of them when it is empty), in their usual
// order, and fetches each answer once from catalogd at origin, compressed
// where catalogd compresses it when acceptGzip is set. Other routes are not
// asked: their pages would count in catalogd's memory.
func fetchTargets(ctx context.Context, origin, token string, smp sample, seed uint64, acceptGzip bool, traffics, only []string) ([]route, error) {
	client := &http.Client{
		Transport: &http.Transport{DisableCompression: true},
		Timeout:   30 * time.Second,
	}
	var routes []route
	for _, traffic := range traffics {
		uris := hotSpotURIs(smp, seed)
		if traffic == longTail {
			uris = longTailURIs(smp, seed)
		}
		for _, name := range routeNames {
			if len(only) > 0 && !slices.Contains(only, name) || traffic == longTail && name == routeListSets {
				continue
			}
			if len(uris[name]) == 0 {
				return nil, fmt.Errorf("%s %s: the catalogue gave no request to make", traffic, name)
			}
			start := time.Now()
			r := route{name: name, traffic: traffic}
			for _, uri := range uris[name] {
				t, err := fetchAnswer(ctx, client, origin, uri, token, acceptGzip)
				if err != nil {
					return nil, err
				}
				r.targets = append(r.targets, t)
			}
			logf("%s %s: %d answers fetched in %s", traffic, name, len(r.targets), since(start))
			routes = append(routes, r)
		}
	}
	return routes, nil
}
