package server

import (
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/catalogd/catalogd/data"
)

type setJSON struct {
	ID         string  `json:"id"`
	Code       string  `json:"code"`
	Name       string  `json:"name"`
	Zone       string  `json:"zone"`
	ReleasedOn *string `json:"releasedOn"`
	CardCount  int64   `json:"cardCount"`
}

type cardJSON struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	SetCode  string `json:"setCode"`
	Number   string `json:"number"`
	Zone     string `json:"zone"`
	Language string `json:"language"`
}

type setsBody struct {
	Data []setJSON `json:"data"`
}

type cardsBody struct {
	Data []cardJSON `json:"data"`
	Meta struct {
		Page     int64 `json:"page"`
		PageSize int64 `json:"pageSize"`
		Total    int64 `json:"total"`
	} `json:"meta"`
}

// fixtureSnapshot reads the sets and cards of the fixture's snapshots with
// encoding/json, independently of the importer.
func fixtureSnapshot(t *testing.T) ([]setJSON, []searchCard) {
	t.Helper()
	odd, err := os.ReadFile("testdata/odd.json")
	if err != nil {
		t.Fatal(err)
	}
	var sets []setJSON
	var cards []searchCard
	for _, raw := range [][]byte{data.Sample(), odd} {
		var snap struct {
			Sets  []setJSON    `json:"sets"`
			Cards []searchCard `json:"cards"`
		}
		if err := json.Unmarshal(raw, &snap); err != nil {
			t.Fatal(err)
		}
		sets = append(sets, snap.Sets...)
		cards = append(cards, snap.Cards...)
	}
	return sets, cards
}

func ids[T any](list []T, id func(T) string) []string {
	out := make([]string, len(list))
	for i, v := range list {
		out[i] = id(v)
	}
	return out
}

func setID(s setJSON) string   { return s.ID }
func cardID(c cardJSON) string { return c.ID }

func TestListSetsOrderAndEnvelope(t *testing.T) {
	f := newFixture(t)
	r := f.get("/catalog/sets")
	r.wantStatus(t, http.StatusOK)
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q, want application/json", ct)
	}
	var envelope map[string]json.RawMessage
	r.json(t, &envelope)
	if len(envelope) != 1 || envelope["data"] == nil {
		t.Fatalf("envelope members %v, want only data", slices.Sorted(mapKeys(envelope)))
	}
	var got setsBody
	r.json(t, &got)

	// docs/CONTRACT.md, Endpoints: releasedOn newest first, undated after dated, then id.
	want, _ := fixtureSnapshot(t)
	slices.SortFunc(want, func(a, b setJSON) int {
		switch {
		case a.ReleasedOn != nil && b.ReleasedOn == nil:
			return -1
		case a.ReleasedOn == nil && b.ReleasedOn != nil:
			return 1
		case a.ReleasedOn != nil && *a.ReleasedOn != *b.ReleasedOn:
			return -strings.Compare(*a.ReleasedOn, *b.ReleasedOn)
		}
		return strings.Compare(a.ID, b.ID)
	})
	if g, w := ids(got.Data, setID), ids(want, setID); !slices.Equal(g, w) {
		t.Fatalf("order of sets:\n got %q\nwant %q", g, w)
	}
	// The fixture holds an undated set, so the rule for them is exercised.
	if last := got.Data[len(got.Data)-1]; last.ReleasedOn != nil {
		t.Fatalf("last set %s has a date; the fixture should end with an undated set", last.ID)
	}

	// cardCount is what the snapshot said, as docs/CONTRACT.md, Records, defines the field.
	for _, s := range got.Data {
		if s.ID == "jp-ADV1" && s.CardCount != 0 {
			t.Errorf("jp-ADV1 cardCount %d, want 0", s.CardCount)
		}
	}
}

func mapKeys[K comparable, V any](m map[K]V) func(func(K) bool) {
	return func(yield func(K) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func TestListSetsIgnoresUnknownParameters(t *testing.T) {
	f := newFixture(t)
	want := f.get("/catalog/sets").body
	for _, q := range []string{"zone=jp", "zone=nowhere", "foo=1&foo=2", "page=0"} {
		r := f.get("/catalog/sets?" + q)
		r.wantStatus(t, http.StatusOK)
		if string(r.body) != string(want) {
			t.Errorf("?%s changed the list of sets", q)
		}
	}
}

func TestListSetCardsResolvesIDThenCodeInZoneOrder(t *testing.T) {
	f := newFixture(t)
	cases := []struct {
		ref      string // as sent, escaped
		wantZone string
		wantSet  string
	}{
		{"jp-SV1a", "jp", "SV1a"},
		{"chn-SV1a", "chn", "SV1a"},
		{"SV1a", "jp", "SV1a"}, // a code in jp and chn resolves in zone order
		{"base1", "intl", "base1"},
		{"intl-base1", "intl", "base1"},
		{"intl-odd%20set%2F%C3%BC", "intl", "odd set/ü"}, // id with space, "/" and non-ASCII
		{"odd%20set%2F%C3%BC", "intl", "odd set/ü"},      // the same as a code, shared with jp
		{"jp-odd", "jp", "odd set/ü"},
		{url.PathEscape("jp-SM1+"), "", ""}, // not in the sample: 404 below
	}
	for _, c := range cases {
		r := f.get("/catalog/sets/" + c.ref + "/cards?pageSize=200")
		if c.wantZone == "" {
			r.wantStatus(t, http.StatusNotFound)
			continue
		}
		r.wantStatus(t, http.StatusOK)
		var got cardsBody
		r.json(t, &got)
		if len(got.Data) == 0 {
			t.Fatalf("%s: no cards", c.ref)
		}
		for _, card := range got.Data {
			if card.Zone != c.wantZone || card.SetCode != c.wantSet {
				t.Fatalf("%s: card %s is in %s/%s, want %s/%s", c.ref, card.ID, card.Zone, card.SetCode, c.wantZone, c.wantSet)
			}
		}
	}
}

func TestListSetCardsOrderByPrintedNumber(t *testing.T) {
	f := newFixture(t)
	r := f.get("/catalog/sets/intl-odd%20set%2F%C3%BC/cards")
	r.wantStatus(t, http.StatusOK)
	var got cardsBody
	r.json(t, &got)
	// 1 < 2 < TG02 < 3 = 03 (then id) < 10 < 025/165 < 112/102 < no digits.
	want := []string{"intl-odd-a", "intl-odd 2", "intl-odd-?", "intl-odd-b", "intl-odd-d", "intl-odd/10", "intl-odd-ピカ", "intl-odd-%2F", "intl-odd-c"}
	if g := ids(got.Data, cardID); !slices.Equal(g, want) {
		t.Fatalf("order:\n got %q\nwant %q", g, want)
	}

	// A real set: the first digit runs never decrease.
	r = f.get("/catalog/sets/intl-swshp/cards?pageSize=200&page=2")
	r.wantStatus(t, http.StatusOK)
	r.json(t, &got)
	prev := int64(-1)
	for _, c := range got.Data {
		n := firstNumber(c.Number)
		if n < prev {
			t.Fatalf("card %s number %q after a card numbered %d", c.ID, c.Number, prev)
		}
		prev = n
	}
}

// firstNumber is the first run of digits in s, or a large value without one.
func firstNumber(s string) int64 {
	start := strings.IndexFunc(s, func(r rune) bool { return r >= '0' && r <= '9' })
	if start < 0 {
		return 1 << 62
	}
	end := start
	for end < len(s) && s[end] >= '0' && s[end] <= '9' {
		end++
	}
	n, _ := strconv.ParseInt(s[start:end], 10, 64)
	return n
}

func TestListSetCardsPagination(t *testing.T) {
	f := newFixture(t)
	all := f.get("/catalog/sets/intl-swshp/cards?pageSize=200")
	all.wantStatus(t, http.StatusOK)
	var first cardsBody
	all.json(t, &first)
	total := first.Meta.Total
	if total != 305 || len(first.Data) != 200 {
		t.Fatalf("total %d with %d cards on page 1, want 305 and 200", total, len(first.Data))
	}

	// Default page size is 50, default page 1.
	var def cardsBody
	f.get("/catalog/sets/intl-swshp/cards").json(t, &def)
	if def.Meta.Page != 1 || def.Meta.PageSize != 50 || len(def.Data) != 50 {
		t.Fatalf("defaults: meta %+v with %d cards", def.Meta, len(def.Data))
	}
	if !slices.Equal(ids(def.Data, cardID), ids(first.Data[:50], cardID)) {
		t.Fatal("the default page is not the first 50 cards")
	}

	// Pages tile the list without gaps or repeats; the last one is short.
	var joined []string
	for page := 1; ; page++ {
		var p cardsBody
		r := f.get("/catalog/sets/intl-swshp/cards?pageSize=37&page=" + strconv.Itoa(page))
		r.wantStatus(t, http.StatusOK)
		r.json(t, &p)
		if p.Meta.Total != total || p.Meta.Page != int64(page) || p.Meta.PageSize != 37 {
			t.Fatalf("page %d meta %+v", page, p.Meta)
		}
		if len(p.Data) == 0 {
			break
		}
		joined = append(joined, ids(p.Data, cardID)...)
	}
	var whole cardsBody
	f.get("/catalog/sets/intl-swshp/cards?pageSize=200&page=2").json(t, &whole)
	if want := append(ids(first.Data, cardID), ids(whole.Data, cardID)...); !slices.Equal(joined, want) {
		t.Fatalf("pages of 37 do not tile the %d cards", len(want))
	}

	// A page past the end: 200, empty data, the true total.
	for _, q := range []string{"page=99", "page=9007199254740991&pageSize=200"} {
		r := f.get("/catalog/sets/intl-swshp/cards?" + q)
		r.wantStatus(t, http.StatusOK)
		var past cardsBody
		r.json(t, &past)
		if len(past.Data) != 0 || past.Meta.Total != total {
			t.Fatalf("%s: %d cards, total %d; want none and %d", q, len(past.Data), past.Meta.Total, total)
		}
		if !strings.Contains(string(r.body), `"data":[]`) {
			t.Fatalf("%s: data is not an empty array: %s", q, r.body)
		}
	}

	// A set without cards.
	r := f.get("/catalog/sets/jp-ADV1/cards")
	r.wantStatus(t, http.StatusOK)
	var empty cardsBody
	r.json(t, &empty)
	if len(empty.Data) != 0 || empty.Meta.Total != 0 {
		t.Fatalf("jp-ADV1: %+v", empty)
	}
}

func TestListSetCardsUnknownSet(t *testing.T) {
	f := newFixture(t)
	for _, ref := range []string{"nope", "JP-SV1A", "sv1a", "intl-odd%20set", "%E2%9C%93"} {
		r := f.get("/catalog/sets/" + ref + "/cards")
		r.wantStatus(t, http.StatusNotFound)
		if ct := r.header.Get("Content-Type"); ct != "application/problem+json" {
			t.Errorf("%s: Content-Type %q", ref, ct)
		}
	}
}

func TestGetCard(t *testing.T) {
	f := newFixture(t)
	cases := []struct{ target, wantID string }{
		{"jp-SV1a-001", "jp-SV1a-001"},
		{"intl-exu-%21", "intl-exu-!"},
		{"intl-exu-!", "intl-exu-!"},
		{"intl-exu-%253F", "intl-exu-%3F"}, // a literal "%" in the id
		{"intl-odd%2F10", "intl-odd/10"},   // "/" encoded
		{"intl-odd/10", "intl-odd/10"},     // "/" as sent by a careless client
		{"intl-odd%202", "intl-odd 2"},
		{"intl-odd-%E3%83%94%E3%82%AB", "intl-odd-ピカ"},
		{"intl-odd-%252F", "intl-odd-%2F"},
		{"intl-odd-%3F", "intl-odd-?"},
	}
	for _, c := range cases {
		r := f.get("/catalog/cards/" + c.target)
		r.wantStatus(t, http.StatusOK)
		var got struct {
			Data map[string]any `json:"data"`
		}
		r.json(t, &got)
		if got.Data["id"] != c.wantID {
			t.Errorf("%s: got card %v, want %s", c.target, got.Data["id"], c.wantID)
		}
	}

	// The stored record comes back member for member as the snapshot gave it.
	r := f.get("/catalog/cards/jp-odd-1")
	want := `{"data":{"id":"jp-odd-1","name":"いち","setName":"変なID","setCode":"odd set/ü","number":"1","language":"ja","variant":"standard","zone":"jp"}}`
	if string(r.body) != want {
		t.Errorf("jp-odd-1:\n got %s\nwant %s", r.body, want)
	}

	for _, target := range []string{"nope", "jp-sv1a-001", "intl-exu-%3F" /* is "?" after decoding */ + "x", "intl-odd"} {
		f.get("/catalog/cards/"+target).wantStatus(t, http.StatusNotFound)
	}
}

// TestEmptySegmentIsNoRoute: an empty path segment, or nothing after the
// path's last "/", is the path of no route, 404, as a path that matches no
// route's shape is, not a bad parameter the client did not send.
func TestEmptySegmentIsNoRoute(t *testing.T) {
	f := newFixture(t)
	for _, target := range []string{"/catalog/cards/", "/catalog/cards/?id=jp-SV1a-001", "/catalog/sets//cards", "/catalog/sets//cards/1", "/catalog/sets/SV1a/cards/", "/catalog/sets/"} {
		for _, token := range []string{"Bearer " + f.token, ""} {
			r := f.do(http.MethodGet, target, "Authorization", token)
			r.wantStatus(t, http.StatusNotFound)
			if !strings.Contains(string(r.body), `"detail":"no such resource: /api/v1/catalog/`) {
				t.Errorf("%s: %s, want the problem of no route", target, r.body)
			}
		}
	}
}

func TestHeadOptionsAndOtherMethods(t *testing.T) {
	f := newFixture(t)
	for _, target := range []string{"/catalog/sets", "/catalog/sets/SV1a/cards", "/catalog/cards/jp-SV1a-001"} {
		get := f.get(target)
		head := f.do(http.MethodHead, target)
		head.wantStatus(t, http.StatusOK)
		if len(head.body) != 0 {
			t.Errorf("HEAD %s: %d bytes of body", target, len(head.body))
		}
		if head.header.Get("Content-Type") != get.header.Get("Content-Type") ||
			head.header.Get("Content-Length") != strconv.Itoa(len(get.body)) {
			t.Errorf("HEAD %s: headers %v differ from GET's", target, head.header)
		}

		opt := f.do(http.MethodOptions, target)
		if opt.status != http.StatusOK && opt.status != http.StatusNoContent {
			t.Errorf("OPTIONS %s: status %d", target, opt.status)
		}
		if allow := opt.header.Get("Allow"); !sameMethods(allow, "GET, HEAD, OPTIONS") {
			t.Errorf("OPTIONS %s: Allow %q", target, allow)
		}
		if len(opt.body) != 0 {
			t.Errorf("OPTIONS %s: body %q", target, opt.body)
		}

		for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, "PURGE"} {
			r := f.do(m, target)
			r.wantStatus(t, http.StatusMethodNotAllowed)
			if allow := r.header.Get("Allow"); !sameMethods(allow, "GET, HEAD, OPTIONS") {
				t.Errorf("%s %s: Allow %q", m, target, allow)
			}
			if ct := r.header.Get("Content-Type"); ct != "application/problem+json" {
				t.Errorf("%s %s: Content-Type %q", m, target, ct)
			}
		}
	}
}

func sameMethods(got, want string) bool {
	split := func(s string) []string {
		parts := strings.Split(s, ",")
		for i := range parts {
			parts[i] = strings.TrimSpace(parts[i])
		}
		slices.Sort(parts)
		return parts
	}
	return slices.Equal(split(got), split(want))
}

// TestAnswersDeclareTheirLength checks that every answer, short or long,
// first-time or cached, GET or HEAD, carries its Content-Length and is not
// chunked: short ones get it from net/http, long ones from writeJSON.
func TestAnswersDeclareTheirLength(t *testing.T) {
	f := newFixture(t)
	var short, long bool
	for _, target := range []string{
		"/catalog/cards/jp-SV1a-001",
		"/catalog/sets/SV1a/cards?pageSize=2",
		"/catalog/sets/SV1a/cards?pageSize=50",
		"/catalog/sets",
		"/catalog/search?q=ar&limit=50",
	} {
		for pass := range 2 { // the second answer comes from the answer cache
			get := f.do(http.MethodGet, target, "Accept-Encoding", "identity")
			get.wantStatus(t, http.StatusOK)
			if got, want := get.header.Get("Content-Length"), strconv.Itoa(len(get.body)); got != want {
				t.Errorf("GET %s (pass %d): Content-Length %q, want %q", target, pass, got, want)
			}
			head := f.do(http.MethodHead, target, "Accept-Encoding", "identity")
			if got, want := head.header.Get("Content-Length"), strconv.Itoa(len(get.body)); got != want {
				t.Errorf("HEAD %s (pass %d): Content-Length %q, want %q", target, pass, got, want)
			}
			short = short || len(get.body) <= AutoLengthMax
			long = long || len(get.body) > AutoLengthMax
		}
	}
	if !short || !long {
		t.Fatalf("the targets must give answers on both sides of %d bytes (short %v, long %v)", AutoLengthMax, short, long)
	}
}

func TestUnknownRoutes(t *testing.T) {
	f := newFixture(t)
	for _, target := range []string{"/catalog", "/catalog/sets/", "/catalog/set", "/catalog/sets/SV1a", "/catalog/sets/SV1a/cards/extra"} {
		r := f.do(http.MethodGet, target)
		r.wantStatus(t, http.StatusNotFound)
		var p problem
		r.json(t, &p)
		if p.Status != 404 || p.Title == "" || p.Type == "" || p.Detail == "" {
			t.Errorf("%s: problem %+v", target, p)
		}
	}
}

// TestQueryParameterRules covers every 400 rule of docs/CONTRACT.md, Parameters, on the
// routes that take integers, and the query-string rule on all of them.
func TestQueryParameterRules(t *testing.T) {
	f := newFixture(t)
	bad := []struct {
		query  string
		params []string // the parameters the errors array must name
	}{
		{"page=0", []string{"page"}},
		{"page=-1", []string{"page"}},
		{"page=%2B1", []string{"page"}}, // +1
		{"page=1.0", []string{"page"}},
		{"page=1e2", []string{"page"}},
		{"page=", []string{"page"}},
		{"page=%20", []string{"page"}},
		{"page=one", []string{"page"}},
		{"page=0x10", []string{"page"}},
		{"page=9007199254740992", []string{"page"}},
		{"page=99999999999999999999999", []string{"page"}},
		{"pageSize=0", []string{"pageSize"}},
		{"pageSize=201", []string{"pageSize"}},
		{"pageSize=%EF%BC%91", []string{"pageSize"}}, // a full-width 1
		{"page=1&page=2", []string{"page"}},
		{"pageSize=5&pageSize=5", []string{"pageSize"}},
		{"page=0&pageSize=0", []string{"page", "pageSize"}},
	}
	for _, c := range bad {
		r := f.get("/catalog/sets/SV1a/cards?" + c.query)
		r.wantStatus(t, http.StatusBadRequest)
		if ct := r.header.Get("Content-Type"); ct != "application/problem+json" {
			t.Errorf("?%s: Content-Type %q", c.query, ct)
		}
		var p problem
		r.json(t, &p)
		if p.Status != 400 || p.Type != "about:blank" || p.Title != "Bad Request" || p.Detail == "" {
			t.Errorf("?%s: problem %+v", c.query, p)
		}
		var named []string
		for _, e := range p.Errors {
			if e.Detail == "" {
				t.Errorf("?%s: error for %s has no detail", c.query, e.Parameter)
			}
			named = append(named, e.Parameter)
		}
		if !slices.Equal(named, c.params) {
			t.Errorf("?%s: errors name %q, want %q", c.query, named, c.params)
		}
		// The detail names every bad parameter too, for a client that logs
		// the detail alone.
		for _, e := range p.Errors {
			if !strings.Contains(p.Detail, e.Parameter+": "+e.Detail) {
				t.Errorf("?%s: detail %q does not name %s: %s", c.query, p.Detail, e.Parameter, e.Detail)
			}
		}
	}
	// A hundred bad ids: the detail names the first three and counts the rest.
	r := f.get(idsQuery(slices.Repeat([]string{""}, 100)...))
	r.wantStatus(t, http.StatusBadRequest)
	var p problem
	r.json(t, &p)
	if len(p.Errors) != 100 || strings.Count(p.Detail, "id: ") != 3 || !strings.HasSuffix(p.Detail, "; and 97 more, in errors") {
		t.Errorf("a hundred bad ids: %d errors, detail %q", len(p.Errors), p.Detail)
	}

	good := []struct {
		query          string
		page, pageSize int64
	}{
		{"page=01", 1, 50},
		{"page=2&pageSize=007", 2, 7},
		{"pageSize=200", 1, 200},
		{"pageSize=1&unknown=x&unknown=y", 1, 1},
	}
	for _, c := range good {
		r := f.get("/catalog/sets/SV1a/cards?" + c.query)
		r.wantStatus(t, http.StatusOK)
		var got cardsBody
		r.json(t, &got)
		if got.Meta.Page != c.page || got.Meta.PageSize != c.pageSize {
			t.Errorf("?%s: meta %+v", c.query, got.Meta)
		}
	}

	// A query string that cannot be decoded is 400 on every endpoint.
	for _, target := range []string{"/catalog/sets", "/catalog/sets/SV1a/cards", "/catalog/cards/jp-SV1a-001"} {
		for _, q := range []string{"a=%zz", "page=%", "x=1;y=2"} {
			r := f.get(target + "?" + q)
			r.wantStatus(t, http.StatusBadRequest)
			var p problem
			r.json(t, &p)
			if len(p.Errors) != 1 {
				t.Errorf("%s?%s: errors %+v", target, q, p.Errors)
			}
		}
	}
}

// TestErrorsOfTheCatalogueNameItsGeneration: a 404, 410 or 503 is the
// catalogue's answer, and names the generation that gave it; a 400 is the
// parameters' alone.
func TestErrorsOfTheCatalogueNameItsGeneration(t *testing.T) {
	f := newFixture(t)
	gen := f.live.Current().Generation()
	newer := time.Now().Add(time.Minute).UTC().Format("20060102T150405Z") + "-00000000"
	for target, status := range map[string]int{
		"/catalog/cards/jp-NOPE-001":                       http.StatusNotFound,
		"/catalog/sets/NOPE/cards":                         http.StatusNotFound,
		"/catalog/sets/SV2a/cards/999":                     http.StatusNotFound,
		"/catalog/changes?since=19990101T000000Z-00000000": http.StatusGone,
		"/catalog/changes?since=" + newer:                  http.StatusServiceUnavailable,
	} {
		r := f.get(target)
		r.wantStatus(t, status)
		if g := r.header.Get(GenerationHeader); g != gen {
			t.Errorf("%s: %d with Catalog-Generation %q, want %q", target, status, g, gen)
		}
	}
	bad := f.get("/catalog/sets/SV1a/cards?page=0")
	bad.wantStatus(t, http.StatusBadRequest)
	if g := bad.header.Get(GenerationHeader); g != "" {
		t.Errorf("a bad parameter: Catalog-Generation %q, want none", g)
	}
}

func TestETagAndNotModified(t *testing.T) {
	f := newFixture(t)
	gen := f.live.Current().Generation()
	for _, target := range []string{"/catalog/sets", "/catalog/sets/SV1a/cards?page=2", "/catalog/cards/intl-odd%2F10", "/catalog/search?q=pikachu",
		"/catalog/cards?id=intl-odd%2F10&id=jp-SV2a-025", "/catalog/sets/SV2a/cards/025%2F165"} {
		r := f.get(target)
		r.wantStatus(t, http.StatusOK)
		tag := r.header.Get("ETag")
		if !strings.HasPrefix(tag, `"`) || !strings.HasSuffix(tag, `"`) || strings.HasPrefix(tag, "W/") {
			t.Fatalf("%s: ETag %q is not a strong validator", target, tag)
		}
		if r.header.Get("Cache-Control") != "private" || r.header.Get(GenerationHeader) != gen {
			t.Errorf("%s: Cache-Control %q, generation %q", target, r.header.Get("Cache-Control"), r.header.Get(GenerationHeader))
		}
		if again := f.get(target); again.header.Get("ETag") != tag {
			t.Errorf("%s: ETag changed between two identical requests", target)
		}
		for _, inm := range []string{tag, `"other", ` + tag, "W/" + tag} {
			nm := f.do(http.MethodGet, target, "If-None-Match", inm)
			if nm.status != http.StatusNotModified || len(nm.body) != 0 || nm.header.Get("ETag") != tag {
				t.Errorf("%s with If-None-Match %s: status %d, %d bytes, ETag %q", target, inm, nm.status, len(nm.body), nm.header.Get("ETag"))
			}
			// A 304 carries the Vary its 200 would (RFC 9110 section 15.4.5),
			// so that a cache picks the representation the tag names. Only
			// a body large enough to be compressed varies.
			vary := ""
			if len(r.body) >= gzipMinSize {
				vary = "Accept-Encoding"
			}
			if nm.header.Get("Vary") != r.header.Get("Vary") || r.header.Get("Vary") != vary {
				t.Errorf("%s with If-None-Match %s: Vary %q, the 200's %q, want %q", target, inm, nm.header.Get("Vary"), r.header.Get("Vary"), vary)
			}
		}
		// "*" names no representation, so the 304 names the one the 200
		// would carry (RFC 9110 section 15.4.5): the compressed one for a
		// client that takes gzip, when the body is large enough.
		if nm := f.do(http.MethodGet, target, "If-None-Match", "*"); nm.status != http.StatusNotModified || nm.header.Get("ETag") != tag {
			t.Errorf("%s with If-None-Match *: status %d, ETag %q, want %q", target, nm.status, nm.header.Get("ETag"), tag)
		}
		if len(r.body) >= gzipMinSize {
			zipped := f.do(http.MethodGet, target, "Accept-Encoding", "gzip")
			nm := f.do(http.MethodGet, target, "Accept-Encoding", "gzip", "If-None-Match", "*")
			if want := zipped.header.Get("ETag"); !strings.HasSuffix(want, gzipETagSuffix+`"`) || nm.status != http.StatusNotModified || nm.header.Get("ETag") != want {
				t.Errorf("%s with If-None-Match * from a client that takes gzip: status %d, ETag %q, want the 200's %q", target, nm.status, nm.header.Get("ETag"), want)
			}
		}
		if r := f.do(http.MethodGet, target, "If-None-Match", `"stale"`); r.status != http.StatusOK {
			t.Errorf("%s with a stale tag: status %d", target, r.status)
		}
		// If-Match compares strongly (RFC 9110 section 13.1.1): the tag
		// or "*" lets the answer through, any other tag is a 412, which
		// names the generation that refused it.
		for _, im := range []string{tag, "*", `"stale", ` + tag} {
			if r := f.do(http.MethodGet, target, "If-Match", im); r.status != http.StatusOK || r.header.Get("ETag") != tag {
				t.Errorf("%s with If-Match %s: status %d, ETag %q", target, im, r.status, r.header.Get("ETag"))
			}
		}
		for _, im := range []string{`"stale"`, "W/" + tag} {
			r := f.do(http.MethodGet, target, "If-Match", im)
			r.wantStatus(t, http.StatusPreconditionFailed)
			if r.header.Get("Content-Type") != "application/problem+json" || r.header.Get("ETag") != "" || r.header.Get(GenerationHeader) != gen ||
				!strings.Contains(string(r.body), "If-Match names no tag of this answer") {
				t.Errorf("%s with If-Match %s: Content-Type %q, ETag %q, generation %q, body %s", target, im,
					r.header.Get("Content-Type"), r.header.Get("ETag"), r.header.Get(GenerationHeader), r.body)
			}
		}
		// A list of tags may come on several lines (RFC 9110 section 5.3).
		// The client's transport asked for gzip, so tag names the
		// compressed representation of a large answer.
		if nm := f.raw(target, "Accept-Encoding", "gzip", "If-None-Match", `"stale"`, "If-None-Match", tag); nm.status != http.StatusNotModified {
			t.Errorf("%s with If-None-Match on two lines, the second naming it: status %d", target, nm.status)
		}
	}
	// Different requests, different tags.
	a := f.get("/catalog/sets/SV1a/cards?page=1").header.Get("ETag")
	b := f.get("/catalog/sets/SV1a/cards?page=2").header.Get("ETag")
	if a == b {
		t.Error("two pages share an ETag")
	}
	// Errors carry no validator.
	if r := f.get("/catalog/cards/nope"); r.header.Get("ETag") != "" {
		t.Errorf("a 404 carries ETag %q", r.header.Get("ETag"))
	}
	// Parameters are checked before If-None-Match: "*" matches any answer,
	// but a bad request has none. The valid page is cached first, so the
	// bad one is checked beside a cache that holds its neighbour.
	f.get("/catalog/sets/SV1a/cards?page=1").wantStatus(t, http.StatusOK)
	for _, target := range []string{"/catalog/sets/SV1a/cards?page=0", "/catalog/search?q=a", "/catalog/search?q=pikachu&limit=0"} {
		if r := f.do(http.MethodGet, target, "If-None-Match", "*"); r.status != http.StatusBadRequest {
			t.Errorf("%s with If-None-Match *: status %d, want 400", target, r.status)
		}
	}
	// "*" matches a representation that exists: a card or set that does
	// not is 404 (RFC 9110 section 13.1.2).
	for _, target := range []string{"/catalog/cards/nope", "/catalog/sets/NOPE/cards", "/catalog/sets/SV2a/cards/999"} {
		if r := f.do(http.MethodGet, target, "If-None-Match", "*"); r.status != http.StatusNotFound {
			t.Errorf("%s with If-None-Match *: status %d, want 404", target, r.status)
		}
	}
}
