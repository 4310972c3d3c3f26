package server

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// cardsAnswer is the body of getCards.
type cardsAnswer struct {
	Data     []map[string]any `json:"data"`
	NotFound []string         `json:"notFound"`
}

func (a *cardsAnswer) ids() []string {
	var ids []string
	for _, c := range a.Data {
		ids = append(ids, c["id"].(string))
	}
	return ids
}

// idsQuery is the query of getCards asking for ids, in order.
func idsQuery(ids ...string) string {
	var b strings.Builder
	for i, id := range ids {
		if i > 0 {
			b.WriteByte('&')
		}
		b.WriteString("id=" + url.QueryEscape(id))
	}
	return "/catalog/cards?" + b.String()
}

func TestGetCards(t *testing.T) {
	f := newFixture(t)
	cases := []struct {
		name         string
		ask          []string
		found, wantN []string
	}{
		{"OrderKept", []string{"jp-SV2a-025", "intl-base1-4", "chn-SV8-033"}, []string{"jp-SV2a-025", "intl-base1-4", "chn-SV8-033"}, nil},
		{"DuplicatesOnce", []string{"intl-base1-4", "jp-SV2a-025", "intl-base1-4", "nope", "nope"}, []string{"intl-base1-4", "jp-SV2a-025"}, []string{"nope"}},
		{"NotFoundInOrder", []string{"zz", "intl-base1-4", "aa", "mm"}, []string{"intl-base1-4"}, []string{"zz", "aa", "mm"}},
		{"NoneFound", []string{"nope"}, nil, []string{"nope"}},
		{"OddIDs", []string{"intl-odd/10", "intl-odd 2", "intl-odd-ピカ", "intl-odd-%2F", "intl-odd-?"}, []string{"intl-odd/10", "intl-odd 2", "intl-odd-ピカ", "intl-odd-%2F", "intl-odd-?"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := f.get(idsQuery(c.ask...))
			r.wantStatus(t, http.StatusOK)
			var a cardsAnswer
			r.json(t, &a)
			if got := a.ids(); !slices.Equal(got, c.found) {
				t.Errorf("data ids %q, want %q", got, c.found)
			}
			if !slices.Equal(a.NotFound, c.wantN) || a.NotFound == nil {
				t.Errorf("notFound %q, want %q (an array, empty or not)", a.NotFound, c.wantN)
			}
			// Each card is the one getCard answers, byte for byte.
			var raw struct {
				Data []json.RawMessage `json:"data"`
			}
			r.json(t, &raw)
			for i, card := range raw.Data {
				one := f.get("/catalog/cards/" + url.PathEscape(c.found[i]))
				if want := one.body[len(`{"data":`) : len(one.body)-1]; !bytes.Equal(card, want) {
					t.Errorf("card %d: %s, getCard answers %s", i, card, want)
				}
			}
		})
	}

	// Ids encoded every way a client may: "/" as it is or as %2F, a space
	// as + or %20.
	for _, q := range []string{"id=intl-odd/10&id=intl-odd+2", "id=intl-odd%2F10&id=intl-odd%202"} {
		var a cardsAnswer
		f.get("/catalog/cards?"+q).json(t, &a)
		if got := a.ids(); !slices.Equal(got, []string{"intl-odd/10", "intl-odd 2"}) {
			t.Errorf("?%s: data ids %q", q, got)
		}
	}

	// A hundred ids, the most: every card of SV2a's first pages, in reverse.
	var page struct {
		Data []struct{ ID string } `json:"data"`
	}
	f.get("/catalog/sets/SV2a/cards?pageSize=100").json(t, &page)
	var hundred []string
	for i := len(page.Data) - 1; i >= 0; i-- {
		hundred = append(hundred, page.Data[i].ID)
	}
	if len(hundred) != 100 {
		t.Fatalf("SV2a has %d cards on its first page, want 100", len(hundred))
	}
	var a cardsAnswer
	f.get(idsQuery(hundred...)).json(t, &a)
	if got := a.ids(); !slices.Equal(got, hundred) {
		t.Errorf("100 ids: %d cards, not in the order asked", len(got))
	}

	bad := []struct {
		name, query, detail string
	}{
		{"None", "", "is required"},
		{"OtherParameterOnly", "?zone=jp", "is required"},
		{"Empty", "?id=", "value 1 of 1 is empty"},
		{"OneOfThemEmpty", "?id=intl-base1-4&id=&id=x", "value 2 of 3 is empty"},
		{"TooMany", "?" + strings.Repeat("id=x&", 100) + "id=y", "holds 101 card ids"},
		{"NotUTF8", "?id=%FF", "valid UTF-8"},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			r := f.get("/catalog/cards" + c.query)
			r.wantStatus(t, http.StatusBadRequest)
			var p problem
			r.json(t, &p)
			if len(p.Errors) != 1 || p.Errors[0].Parameter != "id" || !strings.Contains(p.Errors[0].Detail, c.detail) {
				t.Errorf("errors %+v, want one naming id with %q", p.Errors, c.detail)
			}
		})
	}
}

// setCardIDs returns the ids of the cards getSetCardsByNumber answers for
// the raw path segments code and number, and the status.
func setCardIDs(t *testing.T, f *fixture, code, number string) ([]string, *response) {
	t.Helper()
	r := f.get("/catalog/sets/" + code + "/cards/" + number)
	if r.status != http.StatusOK {
		return nil, r
	}
	var a cardsAnswer
	r.json(t, &a)
	return a.ids(), r
}

func TestGetSetCardsByNumber(t *testing.T) {
	f := newFixture(t)
	odd := url.PathEscape("odd set/ü")
	cases := []struct {
		name, code string
		forms      []string // path segments as a client sends them
		want       []string
	}{
		// A "/" sent as it is belongs to the number, at its end too (025/:
		// what a scanner read before the total).
		{"Plain", "SV2a", []string{"25", "025", "025%2F165", "025/165", "25%2F73", "0025", "%20025%20", "%EF%BC%90%EF%BC%92%EF%BC%95", "025/", "025%2F", "025//165"}, []string{"jp-SV2a-025"}},
		{"OtherZoneByID", "chn-SV8", []string{"33", "033", "033%2F106"}, []string{"chn-SV8-033"}},
		{"ByCode", "base1", []string{"4", "004", "4%2F102"}, []string{"intl-base1-4"}},
		// Two cards of one number, 3 and 03: both, ordered by id.
		{"Variants", odd, []string{"3", "03", "003%2F9"}, []string{"intl-odd-b", "intl-odd-d"}},
		{"Letters", odd, []string{"TG02", "TG2", "tg002", "%EF%BC%B4%EF%BC%A7%EF%BC%92"}, []string{"intl-odd-?"}},
		{"NoDigits", odd, []string{"SV-P", "sv-p"}, []string{"intl-odd-c"}},
		{"SetIDWithSlashAndSpace", url.PathEscape("intl-odd set/ü"), []string{"10", "010%2F9"}, []string{"intl-odd/10"}},
		{"CodeOfTwoZonesByID", "jp-odd", []string{"1", "01"}, []string{"jp-odd-1"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, form := range c.forms {
				got, r := setCardIDs(t, f, c.code, form)
				if r.status != http.StatusOK || !slices.Equal(got, c.want) {
					t.Errorf("%s/%s: status %d, ids %q, want %q; body %s", c.code, form, r.status, got, c.want, r.body)
				}
			}
		})
	}

	// The two 404s say which thing is not there.
	var set, number problem
	r := f.get("/catalog/sets/NOPE/cards/25")
	r.wantStatus(t, http.StatusNotFound)
	r.json(t, &set)
	r = f.get("/catalog/sets/SV2a/cards/999")
	r.wantStatus(t, http.StatusNotFound)
	r.json(t, &number)
	if !strings.Contains(set.Detail, `set "NOPE"`) || strings.Contains(set.Detail, "999") {
		t.Errorf("unknown set: detail %q", set.Detail)
	}
	if !strings.Contains(number.Detail, `"999"`) || !strings.Contains(number.Detail, `"SV2a"`) || number.Detail == set.Detail {
		t.Errorf("unknown number: detail %q", number.Detail)
	}

	// An empty segment elsewhere is in no route.
	for _, target := range []string{"/catalog/sets/SV2a/cards/", "/catalog/sets/SV2a/cards//", "/catalog/sets//cards/025/", "/catalog/sets/SV2a//cards/025"} {
		f.get(target).wantStatus(t, http.StatusNotFound)
	}
	for _, target := range []string{"/catalog/sets/SV2a/cards/%20", "/catalog/sets/SV2a/cards/" + strings.Repeat("1", 65), "/catalog/sets/SV2a/cards/%FF"} {
		r := f.get(target)
		r.wantStatus(t, http.StatusBadRequest)
		var p problem
		r.json(t, &p)
		if len(p.Errors) != 1 || p.Errors[0].Parameter != "number" {
			t.Errorf("%s: errors %+v, want one naming number", target, p.Errors)
		}
	}
}

// TestLookupsCacheAndCompress: both lookups answer If-None-Match with 304
// and compress a large answer, like every other read.
func TestLookupsCacheAndCompress(t *testing.T) {
	f := newFixture(t)
	var page struct {
		Data []struct{ ID string } `json:"data"`
	}
	f.get("/catalog/sets/SV2a/cards?pageSize=40").json(t, &page)
	var ids []string
	for _, c := range page.Data {
		ids = append(ids, c.ID)
	}
	for _, target := range []string{idsQuery(ids...), "/catalog/sets/SV2a/cards/025%2F165"} {
		plain := f.raw(target)
		plain.wantStatus(t, http.StatusOK)
		tag := plain.header.Get("ETag")
		if nm := f.raw(target, "If-None-Match", tag); nm.status != http.StatusNotModified || len(nm.body) != 0 {
			t.Errorf("%s with its ETag: status %d, %d bytes", target, nm.status, len(nm.body))
		}
		if len(plain.body) < gzipMinSize {
			continue
		}
		z := f.raw(target, "Accept-Encoding", "gzip")
		if z.header.Get("Content-Encoding") != "gzip" {
			t.Fatalf("%s: %d bytes sent with Content-Encoding %q", target, len(plain.body), z.header.Get("Content-Encoding"))
		}
		zr, err := gzip.NewReader(bytes.NewReader(z.body))
		if err != nil {
			t.Fatal(err)
		}
		if b, err := io.ReadAll(zr); err != nil || !bytes.Equal(b, plain.body) {
			t.Errorf("%s: compressed body does not decompress to the plain one (%v)", target, err)
		}
	}
}

// TestRateLimitCountsABatch: a getCards request takes 1 from the budget,
// and 1 more for each 5 ids.
func TestRateLimitCountsABatch(t *testing.T) {
	f := rateLimitedFixture(t, RateLimit{PerSecond: 0.001, Burst: 40})
	remaining := func(r *response) int {
		t.Helper()
		n, err := strconv.Atoi(r.header.Get("RateLimit-Remaining"))
		if err != nil {
			t.Fatalf("RateLimit-Remaining %q", r.header.Get("RateLimit-Remaining"))
		}
		return n
	}
	ids := make([]string, 100)
	for i := range ids {
		ids[i] = "id-" + strconv.Itoa(i)
	}
	r := f.get(idsQuery(ids[:4]...))
	if got := remaining(r); got != 39 {
		t.Errorf("4 ids: %d left of 40, want 39", got)
	}
	// Encoded names count: the server decodes them to id.
	r = f.get("/catalog/cards?i%64=a&" + strings.TrimPrefix(idsQuery(ids[:9]...), "/catalog/cards?"))
	if got := remaining(r); got != 36 {
		t.Errorf("10 ids, one named i%%64: %d left, want 36", got)
	}
	r = f.get(idsQuery(ids...))
	r.wantStatus(t, http.StatusOK)
	if got := remaining(r); got != 15 {
		t.Errorf("100 ids: %d left, want 15", got)
	}
	f.get(idsQuery(ids...)).wantStatus(t, http.StatusTooManyRequests)
	f.get("/catalog/cards/intl-base1-4").wantStatus(t, http.StatusOK)
}

// TestRateLimitCountsABatchOverMCP: a call of the MCP tool get_cards costs
// what getCards of as many ids does, however the JSON-RPC message is
// written; any other call, or a call the tool refuses, 1.
func TestRateLimitCountsABatchOverMCP(t *testing.T) {
	f := rateLimitedFixture(t, RateLimit{PerSecond: 0.001, Burst: 100})
	ids := make([]string, 100)
	for i := range ids {
		ids[i] = "id-" + strconv.Itoa(i)
	}
	call := func(tool string, args any) string {
		b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": map[string]any{"name": tool, "arguments": args}})
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	hundred := call("get_cards", map[string]any{"id": ids})
	for _, c := range []struct {
		name, body string
		left       int
	}{
		{"100 ids", hundred, 79},
		{"4 ids", call("get_cards", map[string]any{"id": ids[:4]}), 78},
		{"5 ids", call("get_cards", map[string]any{"id": ids[:5]}), 76},
		{"a search", call("search_cards", map[string]any{"q": "pikachu"}), 75},
		{"ids not an array", call("get_cards", map[string]any{"id": "id-1"}), 74},
		// Written so that a reader of the body other than the SDK's
		// might price it apart: the tool prices what it answers.
		{"another Name", strings.Replace(hundred, `"name":"get_cards"`, `"name":"get_cards","Name":"x"`, 1), 53},
		{"a value after the message", hundred + " {}", 32},
	} {
		r := f.mcpCall(t, []byte(c.body), mcpProtocol)
		r.wantStatus(t, http.StatusOK)
		if got, err := strconv.Atoi(r.header.Get("RateLimit-Remaining")); err != nil || got != c.left {
			t.Errorf("%s: RateLimit-Remaining %q, want %d", c.name, r.header.Get("RateLimit-Remaining"), c.left)
		}
		if strings.Contains(string(r.body), "over its limit") {
			t.Errorf("%s: refused: %s", c.name, r.body)
		}
	}
	// A batch of two, which the SDK takes from a client of the protocol of
	// 2025-03-26: the first call takes 21, and the second, short of its
	// 21, is refused with a tool error that says when to retry.
	r := f.mcpCall(t, []byte("["+hundred+","+strings.Replace(hundred, `"id":1`, `"id":2`, 1)+"]"), "")
	if n := strings.Count(string(r.body), "over its limit"); r.status != http.StatusOK || n != 1 || !strings.Contains(string(r.body), "retry after") {
		t.Errorf("a batch of two calls of 100 ids with 31 left: %d, %d refused, want 1: %.300s", r.status, n, r.body)
	}
	if got := r.header.Get("RateLimit-Remaining"); got != "0" {
		t.Errorf("after the batch: RateLimit-Remaining %q, want 0", got)
	}
}

// TestEncodedSlashBesideRawBytes sends a set code with an encoded "/" and
// a printed number in raw UTF-8, as some clients send what they should
// encode: the "/" stays inside the code. (Go's client encodes the raw
// bytes itself, so the request is written by hand.)
func TestEncodedSlashBesideRawBytes(t *testing.T) {
	f := newFixture(t)
	u, err := url.Parse(f.base)
	if err != nil {
		t.Fatal(err)
	}
	for _, number := range []string{"１０", "10|"} {
		conn, err := net.Dial("tcp", u.Host)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		fmt.Fprintf(conn, "GET %s/catalog/sets/odd%%20set%%2F%%C3%%BC/cards/%s?zone=intl HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nConnection: close\r\n\r\n", u.Path, number, f.token)
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if number == "１０" && (resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"id":"intl-odd/10"`)) {
			t.Errorf("number %q: %d %s, want card intl-odd/10", number, resp.StatusCode, body)
		}
		if number == "10|" && !strings.Contains(string(body), `in set \"odd set/ü\"`) {
			t.Errorf("number %q: %d %s, want the set found and the number not", number, resp.StatusCode, body)
		}
	}
}
