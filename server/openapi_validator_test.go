package server

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
)

// TestOpenAPIValidatorAccepts guards the rejections below: each of them
// differs from one of these in one way only.
func TestOpenAPIValidatorAccepts(t *testing.T) {
	minimal := map[string]any{
		"id": "x", "name": "N", "setName": "S", "setCode": "s", "number": "1",
		"language": "ja", "variant": "standard", "zone": "jp",
	}
	nulls := openAPICard(withMember("totalCards", nil), withMember("illustrator", nil), withMember("marketAId", nil),
		withMember("marketAPath", nil), withMember("marketBId", nil), withMember("scanFallbackUrl", nil))
	cases := []openAPICase{
		{name: "card with every field", target: "/catalog/cards/intl-base1-4", status: 200,
			body: openAPIJSON(map[string]any{"data": openAPICard()})},
		{name: "card with the required fields only", target: "/catalog/cards/x", status: 200,
			body: openAPIJSON(map[string]any{"data": minimal})},
		{name: "card with null where the schema allows it", target: "/catalog/cards/x", status: 200,
			body: openAPIJSON(map[string]any{"data": nulls})},
		{name: "id with an encoded slash", target: "/catalog/cards/jp-SV-P%2F001", status: 200,
			body: openAPIJSON(map[string]any{"data": openAPICard()})},
		{name: "sets, one undated", target: "/catalog/sets?zone=jp", status: 200,
			body: openAPIJSON(map[string]any{"data": []any{openAPISet(), openAPISet(withoutMember("releasedOn"), withMember("id", "jp-x"), withMember("cardCount", 0))}})},
		{name: "no sets", target: "/catalog/sets", status: 200, body: `{"data":[]}`},
		{name: "page of cards", target: "/catalog/sets/base1/cards?page=2&pageSize=1", status: 200,
			body: openAPIJSON(map[string]any{"data": []any{openAPICard()}, "meta": map[string]any{"page": 2, "pageSize": 1, "total": 102}})},
		{name: "page past the end", target: "/catalog/sets/base1/cards?page=9", status: 200,
			body: `{"data":[],"meta":{"page":9,"pageSize":50,"total":102}}`},
		{name: "search", target: "/catalog/search?q=pika", status: 200,
			body: openAPIJSON(map[string]any{"data": []any{openAPICard(), minimal}})},
		{name: "gzip", target: "/catalog/search?q=pika", status: 200,
			edit: func(h http.Header) { h.Set("Content-Encoding", "gzip") },
			body: openAPIGzip(`{"data":[]}`)},
		{name: "400", target: "/catalog/search?q=a", status: 400,
			body: `{"type":"about:blank","title":"Bad Request","status":400,"detail":"invalid query parameter q: too short","errors":[{"parameter":"q","detail":"too short"}]}`},
		{name: "401", target: "/catalog/sets", status: 401,
			body: `{"type":"about:blank","title":"Unauthorized","status":401,"detail":"no token"}`},
		{name: "404 card", target: "/catalog/cards/nope", status: 404,
			body: `{"type":"about:blank","title":"Not Found","status":404,"detail":"card \"nope\": not found in the active catalogue"}`},
		{name: "304", target: "/catalog/sets", status: 304},
		{name: "HEAD", method: http.MethodHead, target: "/catalog/sets", status: 200},
		{name: "card id with an unencoded slash", target: "/catalog/cards/intl-odd/10", status: 200,
			body: openAPIJSON(map[string]any{"data": openAPICard()})},
		{name: "404 on a path the document does not have", target: "/catalog/set", status: 404,
			body: `{"type":"about:blank","title":"Not Found","status":404,"detail":"no such resource: /api/v1/catalog/set"}`},
		{name: "404 on a trailing slash", target: "/catalog/sets/", status: 404,
			body: `{"type":"about:blank","title":"Not Found","status":404,"detail":"no such resource: /api/v1/catalog/sets/"}`},
		{name: "405", method: http.MethodPost, target: "/catalog/sets", status: 405,
			edit: func(h http.Header) { h.Set("Allow", "GET, HEAD, OPTIONS") },
			body: `{"type":"about:blank","title":"Method Not Allowed","status":405,"detail":"method POST is not allowed here"}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// In parallel, for the race detector: handler tests share the
			// loaded document.
			t.Parallel()
			if err := c.check(); err != nil {
				t.Errorf("rejected a valid response: %v", err)
			}
		})
	}
}

func TestOpenAPIValidatorRejects(t *testing.T) {
	card := func(edit ...func(map[string]any)) string {
		return openAPIJSON(map[string]any{"data": openAPICard(edit...)})
	}
	sets := func(edit ...func(map[string]any)) string {
		return openAPIJSON(map[string]any{"data": []any{openAPISet(edit...)}})
	}
	const problem401 = `{"type":"about:blank","title":"Unauthorized","status":401,"detail":"no token"}`
	cases := []openAPICase{
		{name: "card with an unknown property", target: "/catalog/cards/x", status: 200, body: card(withMember("price", 12))},
		{name: "card without variant", target: "/catalog/cards/x", status: 200, body: card(withoutMember("variant"))},
		{name: "year below 1996", target: "/catalog/cards/x", status: 200, body: card(withMember("year", 1995))},
		{name: "year past 2^53-1", target: "/catalog/cards/x", status: 200, body: card(withMember("year", 9007199254740992))},
		{name: "year null", target: "/catalog/cards/x", status: 200, body: card(withMember("year", nil))},
		{name: "rarity null", target: "/catalog/cards/x", status: 200, body: card(withMember("rarity", nil))},
		{name: "rarity too long", target: "/catalog/cards/x", status: 200, body: card(withMember("rarity", strings.Repeat("é", 101)))},
		{name: "totalCards 0", target: "/catalog/cards/x", status: 200, body: card(withMember("totalCards", 0))},
		{name: "totalCards a string", target: "/catalog/cards/x", status: 200, body: card(withMember("totalCards", "102"))},
		{name: "illustrator empty", target: "/catalog/cards/x", status: 200, body: card(withMember("illustrator", ""))},
		{name: "imageUrl not a URI", target: "/catalog/cards/x", status: 200, body: card(withMember("imageUrl", "images/4.png"))},
		{name: "scanFallbackUrl with a space", target: "/catalog/cards/x", status: 200, body: card(withMember("scanFallbackUrl", "https://x.example/a b.jpg"))},
		{name: "unknown zone", target: "/catalog/cards/x", status: 200, body: card(withMember("zone", "eu"))},
		{name: "language of one letter", target: "/catalog/cards/x", status: 200, body: card(withMember("language", "e"))},
		{name: "set missing cardCount", target: "/catalog/sets", status: 200, body: sets(withoutMember("cardCount"))},
		{name: "releasedOn not a date", target: "/catalog/sets", status: 200, body: sets(withMember("releasedOn", "22/09/2023"))},
		{name: "releasedOn not a calendar date", target: "/catalog/sets", status: 200, body: sets(withMember("releasedOn", "2023-02-29"))},
		{name: "releasedOn null", target: "/catalog/sets", status: 200, body: sets(withMember("releasedOn", nil))},
		{name: "cardCount negative", target: "/catalog/sets", status: 200, body: sets(withMember("cardCount", -1))},
		{name: "sets with meta", target: "/catalog/sets", status: 200,
			body: `{"data":[],"meta":{"page":1,"pageSize":50,"total":0}}`},
		{name: "page of cards without meta", target: "/catalog/sets/base1/cards", status: 200, body: `{"data":[]}`},
		{name: "page with pageSize 0", target: "/catalog/sets/base1/cards", status: 200,
			body: `{"data":[],"meta":{"page":1,"pageSize":0,"total":0}}`},
		{name: "card not wrapped in data", target: "/catalog/cards/x", status: 200, body: openAPIJSON(openAPICard())},
		{name: "member given twice", target: "/catalog/sets", status: 200, body: `{"data":[],"data":[]}`},
		{name: "text after the body", target: "/catalog/sets", status: 200, body: `{"data":[]} {}`},
		{name: "wrong content type", target: "/catalog/sets", status: 200,
			edit: func(h http.Header) { h.Set("Content-Type", "text/plain") }, body: `{"data":[]}`},
		{name: "no ETag", target: "/catalog/sets", status: 200,
			edit: func(h http.Header) { h.Del("ETag") }, body: `{"data":[]}`},
		{name: "weak ETag", target: "/catalog/sets", status: 200,
			edit: func(h http.Header) { h.Set("ETag", `W/"g1"`) }, body: `{"data":[]}`},
		{name: "Cache-Control public", target: "/catalog/sets", status: 200,
			edit: func(h http.Header) { h.Set("Cache-Control", "public, max-age=60") }, body: `{"data":[]}`},
		{name: "gzip header on a plain body", target: "/catalog/sets", status: 200,
			edit: func(h http.Header) { h.Set("Content-Encoding", "gzip") }, body: `{"data":[]}`},
		{name: "400 without errors", target: "/catalog/search?q=a", status: 400,
			body: `{"type":"about:blank","title":"Bad Request","status":400,"detail":"bad"}`},
		{name: "400 as application/json", target: "/catalog/search?q=a", status: 400,
			edit: func(h http.Header) { h.Set("Content-Type", "application/json") },
			body: `{"type":"about:blank","title":"Bad Request","status":400,"detail":"bad","errors":[{"parameter":"q","detail":"bad"}]}`},
		{name: "401 without WWW-Authenticate", target: "/catalog/sets", status: 401,
			edit: func(h http.Header) { h.Del("WWW-Authenticate") }, body: problem401},
		{name: "401 challenge without resource_metadata", target: "/catalog/sets", status: 401,
			edit: func(h http.Header) { h.Set("WWW-Authenticate", `Bearer realm="catalogd"`) }, body: problem401},
		{name: "problem with an unknown member", target: "/catalog/sets", status: 401,
			body: `{"type":"about:blank","title":"Unauthorized","status":401,"detail":"no token","code":7}`},
		{name: "404 where none is declared", target: "/catalog/search?q=pika", status: 404,
			body: `{"type":"about:blank","title":"Not Found","status":404,"detail":"x"}`},
		{name: "500", target: "/catalog/sets", status: 500,
			body: `{"type":"about:blank","title":"Internal Server Error","status":500,"detail":"x"}`},
		{name: "304 with a body", target: "/catalog/sets", status: 304, body: `{"data":[]}`},
		{name: "304 without ETag", target: "/catalog/sets", status: 304,
			edit: func(h http.Header) { h.Del("ETag") }},
		{name: "304 where none could be", target: "/catalog/sets", method: http.MethodPost, status: 304},
		{name: "HEAD without ETag", method: http.MethodHead, target: "/catalog/sets", status: 200,
			edit: func(h http.Header) { h.Del("ETag") }},
		{name: "undocumented path", target: "/catalog/prices", status: 200, body: `{"data":[]}`},
		{name: "trailing slash", target: "/catalog/sets/", status: 200, body: `{"data":[]}`},
		{name: "empty set code", target: "/catalog/sets//cards", status: 200,
			body: `{"data":[],"meta":{"page":1,"pageSize":50,"total":0}}`},
		{name: "404 on an unknown path as JSON", target: "/catalog/set", status: 404,
			edit: func(h http.Header) { h.Set("Content-Type", "application/json") },
			body: `{"type":"about:blank","title":"Not Found","status":404,"detail":"x"}`},
		{name: "404 on an unknown path with a bad problem", target: "/catalog/set", status: 404,
			body: `{"title":"Not Found","status":404,"detail":"x"}`},
		{name: "405 without Allow", method: http.MethodPost, target: "/catalog/sets", status: 405,
			body: `{"type":"about:blank","title":"Method Not Allowed","status":405,"detail":"x"}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.check()
			if err == nil {
				t.Fatalf("accepted %s", c.body)
			}
			t.Log(err)
		})
	}

	t.Run("path outside the base path", func(t *testing.T) {
		req := httptest.NewRequest(http.MethodGet, "http://127.0.0.1:8080/catalog/sets", nil)
		h := http.Header{"Content-Type": {"application/json"}, "Etag": {`"a"`}, "Cache-Control": {"private"}}
		if err := checkAgainstOpenAPI(req, 200, h, []byte(`{"data":[]}`)); err == nil {
			t.Error("accepted a request outside /api/v1")
		}
	})
}

// TestOpenAPIValidatorReportsTheField makes sure that a rejection names what
// is wrong, so that a failing handler test points at the field.
func TestOpenAPIValidatorReportsTheField(t *testing.T) {
	for field, c := range map[string]openAPICase{
		"cardCount":  {target: "/catalog/sets", status: 200, body: `{"data":[{"id":"a","code":"a","name":"A","zone":"jp"}]}`},
		"year":       {target: "/catalog/cards/x", status: 200, body: openAPIJSON(map[string]any{"data": openAPICard(withMember("year", 1995))})},
		"releasedOn": {target: "/catalog/sets", status: 200, body: openAPIJSON(map[string]any{"data": []any{openAPISet(withMember("releasedOn", "2023-13-01"))}})},
		"price":      {target: "/catalog/cards/x", status: 200, body: openAPIJSON(map[string]any{"data": openAPICard(withMember("price", 1))})},
		"meta":       {target: "/catalog/sets/a/cards", status: 200, body: `{"data":[]}`},
	} {
		err := c.check()
		if err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("%s: error %v does not name it", field, err)
		}
	}
}

// newOpenAPITestServer serves a catalogue of one set and one card, built
// with the catalogue writer in a temporary directory.
// newOpenAPITestServer is the real server over the sample catalogue; the
// document must be readable without a token.
func newOpenAPITestServer(t *testing.T) *httptest.Server {
	t.Helper()
	return newFixture(t).http
}

func TestOpenAPIServed(t *testing.T) {
	onDisk, err := os.ReadFile("openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ts := newOpenAPITestServer(t)
	resp, err := ts.Client().Get(ts.URL + "/api/v1/openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d without a token, want 200; body: %s", resp.StatusCode, openAPIClip(body))
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/yaml") {
		t.Errorf("Content-Type %q, want application/yaml", ct)
	}
	if !bytes.Equal(body, onDisk) {
		t.Errorf("served %d bytes that differ from openapi.yaml (%d bytes)", len(body), len(onDisk))
	}
}
