package server

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/catalogd/catalogd/server/auth"
	"github.com/getkin/kin-openapi/openapi3"
)

// docsGet sends a GET for a file of the reference page, without a token.
func docsGet(t *testing.T, f *fixture, path string, header ...string) *response {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, f.base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	// The transport would otherwise ask for gzip and decompress.
	if req.Header.Get("Accept-Encoding") == "" {
		req.Header.Set("Accept-Encoding", "identity")
	}
	resp, err := f.http.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return &response{status: resp.StatusCode, header: resp.Header, body: body}
}

// TestDocsServed checks every file of the reference page, and the OpenAPI
// document as written: served without a token, under the
// Content-Security-Policy, with a strong ETag that gives 304, and
// compressed for clients that take gzip.
func TestDocsServed(t *testing.T) {
	f := newFixture(t)
	if r := docsGet(t, f, "/openapi.yaml"); !bytes.Equal(r.body, OpenAPI()) {
		t.Errorf("/openapi.yaml is not the document as written")
	}
	files := map[string]string{
		"/openapi.yaml":              "application/yaml",
		"/docs":                      "text/html",
		"/docs/page.js":              "text/javascript",
		"/docs/swagger-ui-bundle.js": "text/javascript",
		"/docs/swagger-ui.css":       "text/css",
		"/docs/openapi.yaml":         "application/yaml",
		"/docs/settings.json":        "application/json",
	}
	for path, contentType := range files {
		t.Run(path, func(t *testing.T) {
			r := docsGet(t, f, path)
			r.wantStatus(t, http.StatusOK)
			if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, contentType) {
				t.Errorf("Content-Type %q, want %s", ct, contentType)
			}
			if got := r.header.Get("Content-Security-Policy"); got != docsPolicy {
				t.Errorf("Content-Security-Policy %q, want %q", got, docsPolicy)
			}
			if got := r.header.Get("X-Content-Type-Options"); got != "nosniff" {
				t.Errorf("X-Content-Type-Options %q", got)
			}
			tag := r.header.Get("ETag")
			if !strings.HasPrefix(tag, `"`) || !strings.HasSuffix(tag, `"`) || len(tag) < 10 {
				t.Fatalf("ETag %q, want a strong tag", tag)
			}
			if n := r.header.Get("Content-Length"); n != fmt.Sprint(len(r.body)) {
				t.Errorf("Content-Length %q for %d bytes", n, len(r.body))
			}
			again := docsGet(t, f, path, "If-None-Match", `"other", `+tag)
			again.wantStatus(t, http.StatusNotModified)
			if len(again.body) != 0 || again.header.Get("ETag") != tag {
				t.Errorf("304: %d bytes, ETag %q, want none and %q", len(again.body), again.header.Get("ETag"), tag)
			}
			if stale := docsGet(t, f, path, "If-None-Match", `"other"`); stale.status != http.StatusOK {
				t.Errorf("If-None-Match of another tag: status %d, want 200", stale.status)
			}

			z := docsGet(t, f, path, "Accept-Encoding", "gzip")
			z.wantStatus(t, http.StatusOK)
			if !compressible(len(r.body)) {
				if z.header.Get("Content-Encoding") != "" || !bytes.Equal(z.body, r.body) {
					t.Errorf("a %d-byte file came compressed", len(r.body))
				}
				return
			}
			if z.header.Get("Content-Encoding") != "gzip" || z.header.Get("Vary") != "Accept-Encoding" {
				t.Fatalf("Content-Encoding %q, Vary %q: want gzip, Accept-Encoding", z.header.Get("Content-Encoding"), z.header.Get("Vary"))
			}
			zr, err := gzip.NewReader(bytes.NewReader(z.body))
			if err != nil {
				t.Fatal(err)
			}
			plain, err := io.ReadAll(zr)
			if err != nil || !bytes.Equal(plain, r.body) {
				t.Fatalf("the gzip body does not decompress to the plain one (%v)", err)
			}
			ztag := z.header.Get("ETag")
			if ztag == tag {
				t.Errorf("the compressed file has the plain one's ETag %q", tag)
			}
			if r := docsGet(t, f, path, "Accept-Encoding", "gzip", "If-None-Match", ztag); r.status != http.StatusNotModified || r.header.Get("ETag") != ztag {
				t.Errorf("If-None-Match of the compressed tag: status %d, ETag %q, want 304", r.status, r.header.Get("ETag"))
			}
			// A cache that holds both may not be told to serve the
			// compressed file to a client that takes no gzip, nor the
			// plain one to a client that does.
			if r := docsGet(t, f, path, "If-None-Match", ztag); r.status != http.StatusOK || r.header.Get("ETag") != tag {
				t.Errorf("If-None-Match of the compressed tag, no gzip: status %d, ETag %q, want 200 of %s", r.status, r.header.Get("ETag"), tag)
			}
			if r := docsGet(t, f, path, "Accept-Encoding", "gzip", "If-None-Match", tag); r.status != http.StatusOK || r.header.Get("ETag") != ztag {
				t.Errorf("If-None-Match of the plain tag, taking gzip: status %d, ETag %q, want 200 of %s", r.status, r.header.Get("ETag"), ztag)
			}
		})
	}
	for _, path := range []string{"/docs/", "/docs/index.html", "/docs/nothing.js"} {
		if r := docsGet(t, f, path); r.status != http.StatusNotFound {
			t.Errorf("GET %s: status %d, want 404", path, r.status)
		}
	}
}

// TestDocsPageNamesItsFiles keeps the page and the routes in step: every
// file the page loads is served, from the page's own origin.
func TestDocsPageNamesItsFiles(t *testing.T) {
	f := newFixture(t)
	page := string(docsGet(t, f, "/docs").body)
	for _, ref := range []string{`href="docs/swagger-ui.css"`, `src="docs/swagger-ui-bundle.js"`, `src="docs/page.js"`} {
		if !strings.Contains(page, ref) {
			t.Errorf("the page does not load %s", ref)
		}
	}
	if strings.Contains(page, "<script>") || strings.Contains(page, "<style") || strings.Contains(page, " style=") || strings.Contains(page, "//") {
		t.Errorf("the page has an inline script or style, or an absolute URL:\n%s", page)
	}
	script := string(docsGet(t, f, "/docs/page.js").body)
	for _, ref := range []string{`"docs/openapi.yaml"`, `"docs/settings.json"`} {
		if !strings.Contains(script, ref) {
			t.Errorf("page.js does not load %s", ref)
		}
	}
}

// TestDocsDocumentNamesTheServer checks the page's copy of the OpenAPI
// document: the running server's base URL and its identity provider's
// token URL, and otherwise the document as written.
func TestDocsDocumentNamesTheServer(t *testing.T) {
	f := newFixture(t)
	body := docsGet(t, f, "/docs/openapi.yaml").body
	doc, err := openapi3.NewLoader().LoadFromData(body)
	if err != nil {
		t.Fatal(err)
	}
	if got := doc.Servers[0].URL; got != f.base {
		t.Errorf("servers[0] %q, want the fixture's base URL %q", got, f.base)
	}
	flow := doc.Components.SecuritySchemes["oauth2"].Value.Flows.ClientCredentials
	if want := f.idp.URL + "/oauth/token"; flow.TokenURL != want {
		t.Errorf("tokenUrl %q, want %q", flow.TokenURL, want)
	}
	want, err := documentFor(OpenAPI(), f.base, f.idp.URL+"/oauth/token")
	if err != nil || !bytes.Equal(body, want) {
		t.Errorf("the page's document is not openapi.yaml with the two URLs replaced (%v)", err)
	}
	if n := bytes.Count(body, []byte("\n")); n != bytes.Count(OpenAPI(), []byte("\n")) {
		t.Errorf("%d lines, openapi.yaml has %d", n, bytes.Count(OpenAPI(), []byte("\n")))
	}

	for _, c := range []struct{ doc, want string }{
		{"servers:\n  - url: http://elsewhere.example/api/v1\n", "appears 0 times"},
		{"servers:\n  - url: " + documentServerURL + "\n  - url: " + documentServerURL + "\n", "appears 2 times"},
		{"servers:\n  - url: " + documentServerURL + "\ntokenUrl: http://other/oauth/token\n", `"tokenUrl: http://127.0.0.1:8080/oauth/token" appears 0 times`},
	} {
		_, err := documentFor([]byte(c.doc), "http://a.example/api/v1", "http://a.example/oauth/token")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("documentFor(%q): error %v, want one saying %q", c.doc, err, c.want)
		}
	}
}

// TestDocsSettings checks that only a dev server hands the page a client
// to fetch a token with, and that the client works.
func TestDocsSettings(t *testing.T) {
	var settings docsSettings
	docsGet(t, newFixture(t), "/docs/settings.json").json(t, &settings)
	if settings.DevToken != nil {
		t.Errorf("a production server gives the page a client: %+v", settings.DevToken)
	}

	var dev *auth.DevIssuer
	f := newFixtureWith(t, func(c *Config) {
		dev = auth.NewDevIssuer(bearerECKeys()[1], "https://dev.example", methodsDevAudience,
			methodsDevClient, methodsDevSecret, time.Hour)
		c.DevIssuer = dev
		c.Audience = methodsDevAudience
	})
	r := docsGet(t, f, "/docs/settings.json")
	if cc := r.header.Get("Cache-Control"); cc != "no-store" {
		t.Errorf("Cache-Control %q of the settings that hold a secret, want no-store", cc)
	}
	r.json(t, &settings)
	origin, _ := url.Parse(f.base)
	want := docsDevToken{TokenURL: "http://" + origin.Host + "/oauth/token", ClientID: methodsDevClient,
		ClientSecret: methodsDevSecret, Audience: methodsDevAudience}
	if settings.DevToken == nil || *settings.DevToken != want {
		t.Fatalf("dev settings %+v, want %+v", settings.DevToken, want)
	}
	// The page's grant, as page.js sends it, to the token URL it names.
	grant, _ := json.Marshal(map[string]string{"grant_type": "client_credentials", "client_id": want.ClientID,
		"client_secret": want.ClientSecret, "audience": want.Audience})
	resp, err := f.http.Client().Post(want.TokenURL, "application/json", bytes.NewReader(grant))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&tok); err != nil || resp.StatusCode != http.StatusOK || tok.AccessToken == "" {
		t.Fatalf("POST %s with the page's settings: %d, %v", want.TokenURL, resp.StatusCode, err)
	}
	doc := docsGet(t, f, "/docs/openapi.yaml").body
	if !bytes.Contains(doc, []byte(`tokenUrl: "`+want.TokenURL+`"`)) {
		t.Errorf("the dev page's document does not name the dev token URL %s", want.TokenURL)
	}
}

// openAPIExample is one example of the document, with what it illustrates.
type openAPIExample struct {
	where  string
	schema *openapi3.Schema
	value  any
}

// openAPIExamples lists every example of the operations of the document:
// of their parameters, their responses' bodies and headers, references
// resolved.
func openAPIExamples(t *testing.T, doc *openapi3.T) []openAPIExample {
	t.Helper()
	var out []openAPIExample
	add := func(where string, schema *openapi3.SchemaRef, example any, examples openapi3.Examples) {
		if schema == nil || schema.Value == nil {
			if example != nil || len(examples) > 0 {
				t.Errorf("%s: examples without a schema", where)
			}
			return
		}
		if example != nil {
			out = append(out, openAPIExample{where + " example", schema.Value, example})
		}
		for name, ex := range examples {
			if ex == nil || ex.Value == nil {
				t.Errorf("%s: example %s does not resolve", where, name)
				continue
			}
			out = append(out, openAPIExample{where + " example " + name, schema.Value, ex.Value.Value})
		}
	}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			at := method + " " + path
			for _, p := range op.Parameters {
				add(at+" parameter "+p.Value.Name, p.Value.Schema, p.Value.Example, p.Value.Examples)
			}
			for status, resp := range op.Responses.Map() {
				for ct, mt := range resp.Value.Content {
					add(at+" "+status+" "+ct, mt.Schema, mt.Example, mt.Examples)
				}
				for name, h := range resp.Value.Headers {
					add(at+" "+status+" header "+name, h.Value.Schema, h.Value.Example, h.Value.Examples)
				}
			}
		}
	}
	slices.SortFunc(out, func(a, b openAPIExample) int { return strings.Compare(a.where, b.where) })
	return out
}

// TestOpenAPIExamplesMatchTheirSchemas validates every example of every
// operation against its own schema, as a response body would be: the
// validation of the document does not look at examples.
func TestOpenAPIExamplesMatchTheirSchemas(t *testing.T) {
	doc, err := loadOpenAPISpec()
	if err != nil {
		t.Fatal(err)
	}
	opts := append(openAPIFilterOptions().SchemaValidationOptions,
		openapi3.EnableJSONSchema2020(), openapi3.MultiErrors(),
		openapi3.SetSchemaErrorMessageCustomizer(openAPISchemaMessage))
	examples := openAPIExamples(t, doc)
	for _, ex := range examples {
		// Through JSON, as a response body would come.
		var v any
		if err := json.Unmarshal([]byte(openAPIJSON(ex.value)), &v); err != nil {
			t.Fatal(err)
		}
		if err := ex.schema.VisitJSON(v, opts...); err != nil {
			t.Errorf("%s: %v", ex.where, err)
		}
	}
	// The validator must see them: a broken example is rejected.
	var spoilt int
	for _, ex := range examples {
		if m, ok := ex.value.(map[string]any); ok && ex.schema.Type.Is("object") {
			bad := map[string]any{"unexpected": true}
			for k, v := range m {
				bad[k] = v
			}
			if ex.schema.VisitJSON(bad, opts...) == nil {
				t.Errorf("%s: accepted with an unknown member", ex.where)
			}
			spoilt++
		}
	}
	if len(examples) < 30 || spoilt < 15 {
		t.Errorf("%d examples, %d of them objects: the walk misses some", len(examples), spoilt)
	}
}

// TestOpenAPIDescribesEverything keeps the reference worth reading: every
// operation, parameter and response is described, every success and error
// response shows an example body, and the examples show cards of the jp and
// chn zones.
func TestOpenAPIDescribesEverything(t *testing.T) {
	doc, err := loadOpenAPISpec()
	if err != nil {
		t.Fatal(err)
	}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			at := method + " " + path
			if op.Summary == "" || op.Description == "" {
				t.Errorf("%s: no summary or description", at)
			}
			for _, p := range op.Parameters {
				if strings.TrimSpace(p.Value.Description) == "" {
					t.Errorf("%s: parameter %s has no description", at, p.Value.Name)
				}
			}
			for status, resp := range op.Responses.Map() {
				r := resp.Value
				if r.Description == nil || strings.TrimSpace(*r.Description) == "" {
					t.Errorf("%s %s: no description", at, status)
				}
				if status == "304" {
					continue
				}
				if len(r.Content) == 0 {
					t.Errorf("%s %s: no body", at, status)
				}
				for ct, mt := range r.Content {
					if mt.Example == nil && len(mt.Examples) == 0 {
						t.Errorf("%s %s %s: no example", at, status, ct)
					}
				}
			}
			for _, status := range []string{"400", "401", "429"} {
				if op.Responses.Value(status) == nil {
					t.Errorf("%s: no %s", at, status)
				}
			}
		}
	}
	zones := map[string]bool{}
	for _, ex := range openAPIExamples(t, doc) {
		for _, card := range exampleRecords(ex.value, "setCode") {
			zones[fmt.Sprint(card["zone"])] = true
		}
	}
	for _, zone := range []string{"intl", "jp", "chn"} {
		if !zones[zone] {
			t.Errorf("no example shows a card of the %s zone", zone)
		}
	}
}

// exampleRecords returns the objects inside v that have the member key:
// cards have setCode, sets have cardCount.
func exampleRecords(v any, key string) []map[string]any {
	var out []map[string]any
	switch v := v.(type) {
	case map[string]any:
		if _, ok := v[key]; ok {
			out = append(out, v)
		}
		for _, m := range v {
			out = append(out, exampleRecords(m, key)...)
		}
	case []any:
		for _, m := range v {
			out = append(out, exampleRecords(m, key)...)
		}
	}
	return out
}

// TestOpenAPIExamplesAreRealRecords checks that each card and set an
// example shows is the one the server answers from the built-in sample,
// member for member, and that each path parameter's examples resolve.
func TestOpenAPIExamplesAreRealRecords(t *testing.T) {
	doc, err := loadOpenAPISpec()
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t)
	asJSON := func(v any) string {
		var x any
		json.Unmarshal([]byte(openAPIJSON(v)), &x)
		return openAPIJSON(x)
	}
	var sets struct {
		Data []map[string]any `json:"data"`
	}
	f.get("/catalog/sets").json(t, &sets)
	realSets := map[string]string{}
	for _, s := range sets.Data {
		realSets[fmt.Sprint(s["id"])] = asJSON(s)
	}
	cards, setsSeen := 0, 0
	var values []any
	for _, ex := range openAPIExamples(t, doc) {
		values = append(values, ex.value)
	}
	for _, s := range doc.Components.Schemas {
		values = append(values, s.Value.Examples...)
	}
	for _, v := range values {
		for _, card := range exampleRecords(v, "setCode") {
			id := fmt.Sprint(card["id"])
			var got struct {
				Data map[string]any `json:"data"`
			}
			r := f.get("/catalog/cards/" + url.PathEscape(id))
			r.wantStatus(t, http.StatusOK)
			r.json(t, &got)
			if want := asJSON(got.Data); asJSON(card) != want {
				t.Errorf("card %s of an example:\n%s\nthe catalogue has:\n%s", id, asJSON(card), want)
			}
			cards++
		}
		for _, set := range exampleRecords(v, "cardCount") {
			id := fmt.Sprint(set["id"])
			if want := realSets[id]; asJSON(set) != want {
				t.Errorf("set %s of an example:\n%s\nthe catalogue has:\n%s", id, asJSON(set), want)
			}
			setsSeen++
		}
	}
	if cards < 5 || setsSeen < 3 {
		t.Errorf("%d cards and %d sets in the examples: the walk misses some", cards, setsSeen)
	}
	for path, item := range doc.Paths.Map() {
		op := item.Get
		for _, p := range op.Parameters {
			if p.Value.In != "path" {
				continue
			}
			for name, ex := range p.Value.Examples {
				target := strings.Replace(path, "{"+p.Value.Name+"}", url.PathEscape(fmt.Sprint(ex.Value.Value)), 1)
				// The other path parameters take their example of the same
				// name, so that together they name a record.
				for _, other := range op.Parameters {
					if other.Value.In == "path" && other.Value.Name != p.Value.Name {
						oex, ok := other.Value.Examples[name]
						if !ok {
							t.Errorf("%s parameter %s has an example %s, and %s none of that name", path, p.Value.Name, name, other.Value.Name)
							continue
						}
						target = strings.Replace(target, "{"+other.Value.Name+"}", url.PathEscape(fmt.Sprint(oex.Value.Value)), 1)
					}
				}
				if r := f.get(target); r.status != http.StatusOK {
					t.Errorf("%s parameter %s example %s: GET %s answered %d", path, p.Value.Name, name, target, r.status)
				}
			}
		}
	}
}

// TestDocsCompressedOnce sends the first requests for the bundle that take
// gzip at once: they get the same bytes under the same tag, however they
// race to compress it.
func TestDocsCompressedOnce(t *testing.T) {
	f := newFixture(t)
	const n = 6
	answers := make([]*response, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			req, _ := http.NewRequest(http.MethodGet, f.base+"/docs/swagger-ui-bundle.js", nil)
			req.Header.Set("Accept-Encoding", "gzip")
			resp, err := f.http.Client().Do(req)
			if err != nil {
				errs[i] = err
				return
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			answers[i], errs[i] = &response{status: resp.StatusCode, header: resp.Header, body: body}, err
		})
	}
	wg.Wait()
	for i, a := range answers {
		if errs[i] != nil {
			t.Fatalf("answer %d: %v", i, errs[i])
		}
		a.wantStatus(t, http.StatusOK)
		if a.header.Get("Content-Encoding") != "gzip" || !bytes.Equal(a.body, answers[0].body) ||
			a.header.Get("ETag") != answers[0].header.Get("ETag") {
			t.Errorf("answer %d: %s, ETag %s, %d bytes; answer 0: ETag %s, %d bytes", i,
				a.header.Get("Content-Encoding"), a.header.Get("ETag"), len(a.body), answers[0].header.Get("ETag"), len(answers[0].body))
		}
	}
}
