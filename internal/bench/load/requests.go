package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"mime"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/catalogd/catalogd/internal/gen"
)

// How many distinct requests each route cycles through.
const (
	sampleCards   = 1000 // getCard: card ids
	sampleSets    = 200  // listSetCards: set codes, one page of each
	sampleQueries = 100  // search: cards whose name gives a query
	setPageSize   = 50
)

// The routes.
const (
	routeGetCard      = "getCard"
	routeListSetCards = "listSetCards"
	routeSearch       = "search"
	routeListSets     = "listSets"
)

// routeNames are the routes in the order they are measured.
var routeNames = []string{routeGetCard, routeListSetCards, routeSearch, routeListSets}

// routeTargets are what catalogd must reach against the ceiling on each
// route: in every closed-loop run, at least minRatio of its throughput;
// with p99Conns connections, a p99 below maxP99 when there is one.
var routeTargets = map[string]struct {
	minRatio float64
	maxP99   time.Duration
}{
	routeGetCard:      {minRatio: 0.85, maxP99: 5 * time.Millisecond},
	routeListSetCards: {minRatio: 0.7},
	routeSearch:       {minRatio: 0.5},
	routeListSets:     {minRatio: 0.7},
}

// p99Conns is the closed-loop run whose p99 is bounded.
const p99Conns = 16

// route is one of the four catalogue routes with the requests the load
// cycles through and catalogd's answer to each.
type route struct {
	name    string
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

// sample is what the requests are made of, chosen from the snapshot.
type sample struct {
	cardIDs []string
	sets    []sampleSet // shuffled; only sets with cards
	queries []string
}

// sampleSet is a set code and the number of cards of the set it names.
type sampleSet struct {
	code  string
	cards int64
}

// snapshotCard and snapshotSet are the fields of the snapshot's records the
// choice needs.
type snapshotCard struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

type snapshotSet struct {
	Code      string `json:"code"`
	Zone      string `json:"zone"`
	CardCount int64  `json:"cardCount"`
}

// sampleSnapshot chooses card ids, set codes and search queries uniformly
// from the snapshot internal/gen wrote: one record per line, sets first.
// Only the chosen cards' lines are decoded.
func sampleSnapshot(path string, st gen.Stats, seed uint64) (sample, error) {
	rng := rand.New(rand.NewPCG(seed, 0x10ad))
	byCard := map[int][]func(snapshotCard){}
	var smp sample
	for _, i := range pick(rng, st.Cards, sampleCards) {
		slot := len(smp.cardIDs)
		smp.cardIDs = append(smp.cardIDs, "")
		byCard[i] = append(byCard[i], func(c snapshotCard) { smp.cardIDs[slot] = c.ID })
	}
	for _, i := range pick(rng, st.Cards, sampleQueries) {
		slot := len(smp.queries)
		smp.queries = append(smp.queries, "")
		byCard[i] = append(byCard[i], func(c snapshotCard) { smp.queries[slot] = typicalQuery(c.Name) })
	}

	f, err := os.Open(path)
	if err != nil {
		return sample{}, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 1<<24)
	var sets []snapshotSet
	section, card := "", 0
	for sc.Scan() {
		line := sc.Bytes()
		switch {
		case bytes.Equal(line, []byte(`{"sets":[`)):
			section = "sets"
			continue
		case bytes.HasPrefix(line, []byte(`],"cards":[`)):
			section = "cards"
			continue
		case len(line) == 0 || line[0] != '{':
			continue
		}
		line = bytes.TrimSuffix(line, []byte(","))
		switch section {
		case "sets":
			var s snapshotSet
			if err := json.Unmarshal(line, &s); err != nil {
				return sample{}, fmt.Errorf("%s: set %d: %w", path, len(sets), err)
			}
			sets = append(sets, s)
		case "cards":
			if fns := byCard[card]; fns != nil {
				var c snapshotCard
				if err := json.Unmarshal(line, &c); err != nil {
					return sample{}, fmt.Errorf("%s: card %d: %w", path, card, err)
				}
				for _, fn := range fns {
					fn(c)
				}
			}
			card++
		}
	}
	if err := sc.Err(); err != nil {
		return sample{}, err
	}
	if card != st.Cards || len(sets) != st.Sets {
		return sample{}, fmt.Errorf("%s: read %d sets and %d cards, the generator wrote %d and %d", path, len(sets), card, st.Sets, st.Cards)
	}

	// A code names the set of the first zone that has it (docs/CONTRACT.md,
	// Endpoints): keep the codes whose set has cards.
	zoneRank := map[string]int{"intl": 0, "jp": 1, "chn": 2}
	resolved := map[string]snapshotSet{}
	var codes []string
	for _, s := range sets {
		prev, seen := resolved[s.Code]
		if !seen {
			codes = append(codes, s.Code)
		}
		if !seen || zoneRank[s.Zone] < zoneRank[prev.Zone] {
			resolved[s.Code] = s
		}
	}
	for _, c := range codes {
		if n := resolved[c].CardCount; n > 0 {
			smp.sets = append(smp.sets, sampleSet{code: c, cards: n})
		}
	}
	rng.Shuffle(len(smp.sets), func(i, j int) { smp.sets[i], smp.sets[j] = smp.sets[j], smp.sets[i] })
	return smp, nil
}

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

// typicalQuery is what a partner types to find a card: the longest word of
// its name, in lower case ("Charizard ex" gives "charizard"; a Japanese or
// Chinese name, which has no spaces, is kept whole). It is "" for a name
// too short to search for.
func typicalQuery(name string) string {
	best := ""
	for w := range strings.FieldsSeq(name) {
		if utf8.RuneCountInString(w) > utf8.RuneCountInString(best) {
			best = w
		}
	}
	if utf8.RuneCountInString(best) < 2 {
		// Search needs 2 characters ("N" is a card): the whole name, if long
		// enough, else nothing.
		best = strings.Join(strings.Fields(name), " ")
		if utf8.RuneCountInString(best) < 2 {
			return ""
		}
	}
	return strings.ToLower(best)
}

// fetchTargets builds the requests of the routes named in only (all four
// when it is empty), in their usual order, and fetches each answer once
// from catalogd at origin, compressed where catalogd compresses it when
// acceptGzip is set. Other routes are not asked: their pages would count
// in catalogd's memory.
func fetchTargets(ctx context.Context, origin, token string, smp sample, seed uint64, acceptGzip bool, only []string) ([]route, error) {
	rng := rand.New(rand.NewPCG(seed, 0x9a9e))
	client := &http.Client{
		Transport: &http.Transport{DisableCompression: true},
		Timeout:   30 * time.Second,
	}
	// uris are each route's request targets, in the order they are sent.
	uris := map[string][]string{}
	for _, id := range smp.cardIDs {
		uris[routeGetCard] = append(uris[routeGetCard], apiPath+"/catalog/cards/"+url.PathEscape(id))
	}
	for _, set := range smp.sets {
		if len(uris[routeListSetCards]) == sampleSets {
			break
		}
		// internal/gen writes a set's cardCount as the number of its cards
		// (its tests hold it to that): a page from the first to the last.
		n := 1 + rng.Int64N((set.cards+setPageSize-1)/setPageSize)
		uris[routeListSetCards] = append(uris[routeListSetCards], apiPath+"/catalog/sets/"+url.PathEscape(set.code)+"/cards?page="+strconv.FormatInt(n, 10)+"&pageSize="+strconv.Itoa(setPageSize))
	}
	seen := map[string]bool{}
	for _, q := range smp.queries {
		if q != "" && !seen[q] {
			seen[q] = true
			uris[routeSearch] = append(uris[routeSearch], apiPath+"/catalog/search?q="+url.QueryEscape(q))
		}
	}
	uris[routeListSets] = []string{apiPath + "/catalog/sets"}

	var routes []route
	for _, name := range routeNames {
		if len(only) > 0 && !slices.Contains(only, name) {
			continue
		}
		if len(uris[name]) == 0 {
			return nil, fmt.Errorf("%s: the catalogue gave no request to make", name)
		}
		r := route{name: name}
		for _, uri := range uris[name] {
			t, err := fetchAnswer(ctx, client, origin, uri, token, acceptGzip)
			if err != nil {
				return nil, err
			}
			r.targets = append(r.targets, t)
		}
		routes = append(routes, r)
	}
	return routes, nil
}
