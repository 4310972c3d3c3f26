package server

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/catalogd/catalogd/catalog"
	"github.com/catalogd/catalogd/catalog/store"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpProtocols are the protocol versions the tests speak: the SDK's default
// (stateless server/discover) and the last one with the initialize
// handshake, which most deployed clients still use.
var mcpProtocols = []string{"", "2025-11-25"}

// mcpTransport is the client side of the HTTP connection: it adds the
// bearer token, and can send each request to the next of several servers in
// turn or present another Host. It records where each request went.
type mcpTransport struct {
	token string
	hosts []string // when set, request i goes to hosts[i%len(hosts)]
	host  string   // when set, the Host header sent

	mu         sync.Mutex
	sent       []string // the host each request went to
	sessionIDs int      // responses that carried Mcp-Session-Id
}

func (tr *mcpTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+tr.token)
	tr.mu.Lock()
	if len(tr.hosts) > 0 {
		req.URL.Host = tr.hosts[len(tr.sent)%len(tr.hosts)]
		req.Host = ""
	}
	tr.sent = append(tr.sent, req.URL.Host)
	tr.mu.Unlock()
	if tr.host != "" {
		req.Host = tr.host
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err == nil && resp.Header.Get("Mcp-Session-Id") != "" {
		tr.mu.Lock()
		tr.sessionIDs++
		tr.mu.Unlock()
	}
	return resp, err
}

// mcpConnect connects the SDK's client to endpoint over HTTP through tr.
func mcpConnect(t *testing.T, endpoint string, tr *mcpTransport, protocol string) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "catalogd-test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint:   endpoint,
		HTTPClient: &http.Client{Transport: tr, Timeout: 10 * time.Second},
		MaxRetries: -1,
	}, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
	if err != nil {
		t.Fatalf("connect to %s (protocol %q): %v", endpoint, protocol, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func (f *fixture) mcp(t *testing.T, protocol string) *mcp.ClientSession {
	t.Helper()
	return mcpConnect(t, f.base+"/mcp", &mcpTransport{token: f.token}, protocol)
}

// callTool calls a tool and fails on a protocol error: every answer of these
// tools, a bad argument included, is a tool result.
func callTool(t *testing.T, cs *mcp.ClientSession, tool string, args any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s %v: protocol error %v; want a tool result", tool, args, err)
	}
	return res
}

// toolTexts returns the text contents of a result.
func toolTexts(t *testing.T, res *mcp.CallToolResult) []string {
	t.Helper()
	var out []string
	for _, c := range res.Content {
		tc, ok := c.(*mcp.TextContent)
		if !ok {
			t.Fatalf("content %T, want only text", c)
		}
		out = append(out, tc.Text)
	}
	return out
}

// wantStructured fails unless res succeeded with structured content equal,
// as JSON, to the REST body want, repeated as the last text content.
func wantStructured(t *testing.T, name string, res *mcp.CallToolResult, want []byte) {
	t.Helper()
	text := toolTexts(t, res)
	if res.IsError {
		t.Fatalf("%s: tool error %q", name, text)
	}
	got, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if !sameJSON(t, got, want) {
		t.Fatalf("%s: structured content\n got %s\nwant %s", name, got, want)
	}
	if len(text) != 2 || text[0] == "" || !sameJSON(t, []byte(text[1]), want) {
		t.Fatalf("%s: text content %q, want a summary and the JSON", name, text)
	}
}

func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	var va, vb any
	if err := json.Unmarshal(a, &va); err != nil {
		t.Fatalf("not JSON: %v: %s", err, a)
	}
	if err := json.Unmarshal(b, &vb); err != nil {
		t.Fatalf("not JSON: %v: %s", err, b)
	}
	return reflect.DeepEqual(va, vb)
}

// mcpTools lists the tools, by name.
func mcpTools(t *testing.T, cs *mcp.ClientSession) map[string]*mcp.Tool {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	tools := map[string]*mcp.Tool{}
	for _, tool := range res.Tools {
		tools[tool.Name] = tool
	}
	return tools
}

// schemaMap reads a schema as plain JSON values.
func schemaMap(t *testing.T, schema any) map[string]any {
	t.Helper()
	b, err := json.Marshal(schema)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestMCPToolsList(t *testing.T) {
	f := newFixture(t)
	tools := mcpTools(t, f.mcp(t, ""))
	want := map[string][]string{ // each tool's arguments, required ones first
		"list_sets":               {"zone"},
		"list_set_cards":          {"code", "page", "pageSize"},
		"get_card":                {"cardId"},
		"get_cards":               {"id"},
		"search_cards":            {"q", "zone", "set", "limit", "fuzzy"},
		"get_set_cards_by_number": {"code", "number"},
		"autocomplete_names":      {"q", "zone", "limit"},
	}
	required := map[string][]string{"list_set_cards": {"code"}, "get_card": {"cardId"}, "search_cards": {"q"}, "autocomplete_names": {"q"},
		"get_cards": {"id"}, "get_set_cards_by_number": {"code", "number"}}
	if got := slices.Sorted(mapKeys(tools)); !slices.Equal(got, slices.Sorted(mapKeys(want))) {
		t.Fatalf("tools %q, want %q", got, slices.Sorted(mapKeys(want)))
	}
	for name, args := range want {
		tool := tools[name]
		if tool.Description == "" {
			t.Errorf("%s: no description", name)
		}
		a := tool.Annotations
		if a == nil || !a.ReadOnlyHint || !a.IdempotentHint || a.OpenWorldHint == nil || *a.OpenWorldHint {
			t.Errorf("%s: annotations %+v, want read-only, idempotent, closed world", name, a)
		}
		in := schemaMap(t, tool.InputSchema)
		if in["type"] != "object" {
			t.Errorf("%s: input schema type %v", name, in["type"])
		}
		var gotRequired []string
		if r, ok := in["required"].([]any); ok {
			for _, v := range r {
				gotRequired = append(gotRequired, v.(string))
			}
		}
		if !slices.Equal(gotRequired, required[name]) {
			t.Errorf("%s: required %q, want %q", name, gotRequired, required[name])
		}
		props, _ := in["properties"].(map[string]any)
		if got := slices.Sorted(mapKeys(props)); !slices.Equal(got, slices.Sorted(slices.Values(args))) {
			t.Errorf("%s: arguments %q, want %q", name, got, args)
		}
		for arg, p := range props {
			p := p.(map[string]any)
			if p["description"] == nil || p["description"] == "" {
				t.Errorf("%s: argument %s has no description", name, arg)
			}
			if arg == "zone" && !reflect.DeepEqual(p["enum"], []any{"intl", "jp", "chn"}) {
				t.Errorf("%s: zone enum %v", name, p["enum"])
			}
		}
		if tool.OutputSchema == nil {
			t.Errorf("%s: no output schema", name)
		}
	}
}

// TestMCPSchemasMatchOpenAPI holds the tools' schemas to the OpenAPI
// document: each output schema is the REST response schema, with the same
// definitions of Set, Card, Page and Zone; each argument has the type and
// limits of the REST parameter of the same name.
func TestMCPSchemasMatchOpenAPI(t *testing.T) {
	doc, err := loadOpenAPISpec()
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t)
	tools := mcpTools(t, f.mcp(t, ""))
	operations := map[string]string{
		"list_sets":               "/catalog/sets",
		"list_set_cards":          "/catalog/sets/{code}/cards",
		"get_card":                "/catalog/cards/{cardId}",
		"get_cards":               "/catalog/cards",
		"search_cards":            "/catalog/search",
		"get_set_cards_by_number": "/catalog/sets/{code}/cards/{number}",
		"autocomplete_names":      "/catalog/autocomplete",
	}
	if len(operations) != len(tools) {
		t.Errorf("%d tools, %d of them compared with openapi.yaml", len(tools), len(operations))
	}
	for name, path := range operations {
		op := doc.Paths.Find(path).Get
		out := schemaMap(t, tools[name].OutputSchema)
		defs, _ := out["$defs"].(map[string]any)
		delete(out, "$defs")
		rest := openAPIAsJSONSchema(t, op.Responses.Status(http.StatusOK).Value.Content["application/json"].Schema.Value)
		for _, d := range jsonDiff("", normalizeSchema(out), rest) {
			t.Errorf("%s: output schema differs from openapi.yaml at %s", name, d)
		}
		if len(defs) == 0 {
			t.Errorf("%s: output schema has no $defs", name)
		}
		for def, schema := range defs {
			want := openAPIAsJSONSchema(t, doc.Components.Schemas[def].Value)
			for _, d := range jsonDiff("", normalizeSchema(schema), want) {
				t.Errorf("%s: $defs/%s differs from openapi.yaml at %s", name, def, d)
			}
		}

		props := schemaMap(t, tools[name].InputSchema)["properties"].(map[string]any)
		for _, p := range op.Parameters {
			param := p.Value
			arg, ok := props[param.Name].(map[string]any)
			if !ok {
				t.Errorf("%s: no argument for the REST parameter %s", name, param.Name)
				continue
			}
			rest := openAPIAsJSONSchema(t, param.Schema.Value)
			for _, key := range []string{"type", "enum", "minimum", "maximum", "default", "maxLength", "minItems", "maxItems"} {
				if w, ok := rest[key]; ok && !reflect.DeepEqual(arg[key], w) {
					t.Errorf("%s: argument %s: %s %v, want %v as in openapi.yaml", name, param.Name, key, arg[key], w)
				}
			}
		}
	}
}

// openAPIAsJSONSchema renders an OpenAPI 3.1 schema as the JSON Schema the
// tools advertise: references into $defs, no examples, descriptions with
// their line breaks folded.
func openAPIAsJSONSchema(t *testing.T, schema any) map[string]any {
	t.Helper()
	b, err := json.Marshal(schema)
	if err != nil {
		t.Fatal(err)
	}
	b = bytes.ReplaceAll(b, []byte(`"#/components/schemas/`), []byte(`"#/$defs/`))
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return normalizeSchema(m).(map[string]any)
}

// jsonDiff lists where two JSON values differ, by path.
func jsonDiff(path string, got, want any) []string {
	g, gok := got.(map[string]any)
	w, wok := want.(map[string]any)
	if !gok || !wok {
		if !reflect.DeepEqual(got, want) {
			return []string{fmt.Sprintf("%s: got %v, want %v", cmp.Or(path, "/"), got, want)}
		}
		return nil
	}
	keys := maps.Clone(g)
	maps.Copy(keys, w)
	var out []string
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		out = append(out, jsonDiff(path+"/"+k, g[k], w[k])...)
	}
	return out
}

func normalizeSchema(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range v {
			switch k {
			case "examples":
			case "description":
				out[k] = strings.Join(strings.Fields(e.(string)), " ")
			case "type":
				// A type array of one is that type.
				if a, ok := e.([]any); ok && len(a) == 1 {
					e = a[0]
				}
				out[k] = e
			default:
				out[k] = normalizeSchema(e)
			}
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = normalizeSchema(e)
		}
		return out
	}
	return v
}

// TestMCPToolsAnswerLikeREST asks each tool what a REST request asks and
// wants the REST body as structured content, valid against the tool's
// output schema.
func TestMCPToolsAnswerLikeREST(t *testing.T) {
	f := newFixture(t)
	cases := []struct {
		tool string
		args map[string]any
		rest string
	}{
		{"list_sets", nil, "/catalog/sets"},
		{"list_set_cards", map[string]any{"code": "base1"}, "/catalog/sets/base1/cards"},
		{"list_set_cards", map[string]any{"code": "SV1a", "page": 2, "pageSize": 7}, "/catalog/sets/SV1a/cards?page=2&pageSize=7"},
		{"list_set_cards", map[string]any{"code": "chn-SV1a", "pageSize": 200}, "/catalog/sets/chn-SV1a/cards?pageSize=200"},
		{"list_set_cards", map[string]any{"code": "odd set/ü"}, "/catalog/sets/" + url.PathEscape("odd set/ü") + "/cards"},
		{"list_set_cards", map[string]any{"code": "base1", "page": 99}, "/catalog/sets/base1/cards?page=99"},
		{"list_set_cards", map[string]any{"code": "jp-ADV1"}, "/catalog/sets/jp-ADV1/cards"},
		{"get_card", map[string]any{"cardId": "intl-base1-4"}, "/catalog/cards/intl-base1-4"},
		{"get_card", map[string]any{"cardId": "intl-odd/10"}, "/catalog/cards/" + url.PathEscape("intl-odd/10")},
		{"get_card", map[string]any{"cardId": "intl-odd-%2F"}, "/catalog/cards/" + url.PathEscape("intl-odd-%2F")},
		{"get_card", map[string]any{"cardId": "intl-odd-ピカ"}, "/catalog/cards/" + url.PathEscape("intl-odd-ピカ")},
		{"get_cards", map[string]any{"id": []string{"jp-SV2a-025", "nope", "intl-odd/10", "jp-SV2a-025", "intl-odd-ピカ"}},
			"/catalog/cards?id=jp-SV2a-025&id=nope&id=" + url.QueryEscape("intl-odd/10") + "&id=jp-SV2a-025&id=" + url.QueryEscape("intl-odd-ピカ")},
		{"get_cards", map[string]any{"id": []string{"nope"}}, "/catalog/cards?id=nope"},
		{"get_set_cards_by_number", map[string]any{"code": "SV2a", "number": "025/165"}, "/catalog/sets/SV2a/cards/25"},
		{"get_set_cards_by_number", map[string]any{"code": "odd set/ü", "number": "03"}, "/catalog/sets/" + url.PathEscape("odd set/ü") + "/cards/3"},
		{"get_set_cards_by_number", map[string]any{"code": "chn-SV8", "number": "33"}, "/catalog/sets/chn-SV8/cards/033%2F106"},
		{"search_cards", map[string]any{"q": "pikachu"}, "/catalog/search?q=pikachu"},
		{"search_cards", map[string]any{"q": "  ぴかちゅう ", "zone": "jp", "limit": 3}, "/catalog/search?" + url.Values{"q": {"  ぴかちゅう "}, "zone": {"jp"}, "limit": {"3"}}.Encode()},
		{"search_cards", map[string]any{"q": "charizard 4", "set": "base1", "limit": 100}, "/catalog/search?q=charizard+4&set=base1&limit=100"},
		{"search_cards", map[string]any{"q": "zz no such card"}, "/catalog/search?q=zz+no+such+card"},
		{"search_cards", map[string]any{"q": "charzard", "fuzzy": true}, "/catalog/search?q=charzard&fuzzy=true"},
		{"search_cards", map[string]any{"q": "charzard", "fuzzy": false}, "/catalog/search?q=charzard"},
		{"autocomplete_names", map[string]any{"q": "pika"}, "/catalog/autocomplete?q=pika"},
		{"autocomplete_names", map[string]any{"q": "charizard", "zone": "jp", "limit": 3}, "/catalog/autocomplete?q=charizard&zone=jp&limit=3"},
		{"autocomplete_names", map[string]any{"q": "p", "limit": 20}, "/catalog/autocomplete?q=p&limit=20"},
		{"autocomplete_names", map[string]any{"q": "zzqx"}, "/catalog/autocomplete?q=zzqx"},
		// null is an argument left out, declared or not.
		{"search_cards", map[string]any{"q": "one", "zone": nil, "page": nil}, "/catalog/search?q=one"},
	}
	for _, protocol := range mcpProtocols {
		cs := f.mcp(t, protocol)
		tools := mcpTools(t, cs)
		for _, c := range cases {
			name := c.tool + " " + c.rest
			r := f.get(c.rest)
			r.wantStatus(t, http.StatusOK)
			res := callTool(t, cs, c.tool, c.args)
			wantStructured(t, name, res, r.body)

			b, _ := json.Marshal(tools[c.tool].OutputSchema)
			var schema jsonschema.Schema
			if err := json.Unmarshal(b, &schema); err != nil {
				t.Fatal(err)
			}
			resolved, err := schema.Resolve(nil)
			if err != nil {
				t.Fatalf("%s: output schema: %v", c.tool, err)
			}
			var v any
			json.Unmarshal(r.body, &v)
			if err := resolved.Validate(v); err != nil {
				t.Errorf("%s: structured content does not match the output schema: %v", name, err)
			}
		}
	}
}

func TestMCPListSetsByZone(t *testing.T) {
	f := newFixture(t)
	cs := f.mcp(t, "")
	var all setsBody
	f.get("/catalog/sets").json(t, &all)
	for _, zone := range catalog.Zones() {
		var want []setJSON
		for _, s := range all.Data {
			if s.Zone == zone {
				want = append(want, s)
			}
		}
		if len(want) == 0 {
			t.Fatalf("the fixture has no set in zone %s", zone)
		}
		res := callTool(t, cs, "list_sets", map[string]any{"zone": zone})
		if res.IsError {
			t.Fatalf("zone %s: %q", zone, toolTexts(t, res))
		}
		b, _ := json.Marshal(res.StructuredContent)
		var got setsBody
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatal(err)
		}
		// Exactly that zone's sets, in the order of the full list.
		if g, w := ids(got.Data, setID), ids(want, setID); !slices.Equal(g, w) {
			t.Errorf("zone %s: sets %q, want %q", zone, g, w)
		}
		if !reflect.DeepEqual(got.Data, want) {
			t.Errorf("zone %s: sets differ from the REST list:\n got %+v\nwant %+v", zone, got.Data, want)
		}
	}
}

// TestMCPGetCardsSummary: the summary of get_cards counts the ids as the
// answer does, each once.
func TestMCPGetCardsSummary(t *testing.T) {
	f := newFixture(t)
	cs := f.mcp(t, "")
	res := callTool(t, cs, "get_cards", map[string]any{"id": []string{"jp-SV2a-025", "nope", "jp-SV2a-025", "nope"}})
	text := toolTexts(t, res)
	want := "1 card of the 2 distinct ids asked for found, in the order asked; 1 id in notFound"
	if res.IsError || len(text) != 2 || !strings.HasPrefix(text[0], want) {
		t.Errorf("summary %q, want it to begin %q", text, want)
	}
}

// TestMCPBadArguments: bad arguments and unknown records are tool errors
// that name the argument, never protocol errors, and a REST request with
// the same values gets a 400 (or 404) with the same details.
func TestMCPBadArguments(t *testing.T) {
	f := newFixture(t)
	cases := []struct {
		name   string
		tool   string
		args   any
		params []string // the arguments the message must name
		rest   string   // the same question over REST, "" when JSON alone can ask it
		status int
	}{
		{"PageSizeZero", "list_set_cards", map[string]any{"code": "base1", "pageSize": 0}, []string{"pageSize"}, "/catalog/sets/base1/cards?pageSize=0", 400},
		{"PageSizeTooLarge", "list_set_cards", map[string]any{"code": "base1", "pageSize": 201}, []string{"pageSize"}, "/catalog/sets/base1/cards?pageSize=201", 400},
		{"PageSizeString", "list_set_cards", map[string]any{"code": "base1", "pageSize": "x"}, []string{"pageSize"}, "", 0},
		{"PageSizeDigitsString", "list_set_cards", map[string]any{"code": "base1", "pageSize": "5"}, []string{"pageSize"}, "", 0},
		{"PageZero", "list_set_cards", map[string]any{"code": "base1", "page": 0}, []string{"page"}, "/catalog/sets/base1/cards?page=0", 400},
		{"PageNegative", "list_set_cards", map[string]any{"code": "base1", "page": -1}, []string{"page"}, "/catalog/sets/base1/cards?page=-1", 400},
		{"PageFraction", "list_set_cards", map[string]any{"code": "base1", "page": 1.5}, []string{"page"}, "/catalog/sets/base1/cards?page=1.5", 400},
		{"PageBoolean", "list_set_cards", map[string]any{"code": "base1", "page": true}, []string{"page"}, "", 0},
		{"CodeMissing", "list_set_cards", map[string]any{}, []string{"code"}, "", 0},
		{"CodeNumber", "list_set_cards", map[string]any{"code": 5}, []string{"code"}, "", 0},
		{"Both", "list_set_cards", map[string]any{"code": "base1", "page": 0, "pageSize": 0}, []string{"page", "pageSize"}, "/catalog/sets/base1/cards?page=0&pageSize=0", 400},
		{"UnknownSet", "list_set_cards", map[string]any{"code": "nope"}, []string{"nope"}, "/catalog/sets/nope/cards", 404},
		{"UnknownCard", "get_card", map[string]any{"cardId": "nope"}, []string{"nope"}, "/catalog/cards/nope", 404},
		{"CardIDMissing", "get_card", nil, []string{"cardId"}, "", 0},
		{"CardIDEmpty", "get_card", map[string]any{"cardId": ""}, []string{"cardId"}, "", 0},
		{"QMissing", "search_cards", map[string]any{"zone": "jp"}, []string{"q"}, "/catalog/search?zone=jp", 400},
		{"QOneCharacter", "search_cards", map[string]any{"q": "a"}, []string{"q"}, "/catalog/search?q=a", 400},
		{"QOneCharacterTrimmed", "search_cards", map[string]any{"q": " a "}, []string{"q"}, "/catalog/search?q=+a+", 400},
		{"QTooLong", "search_cards", map[string]any{"q": strings.Repeat("ピ", 201)}, []string{"q"}, "/catalog/search?q=" + url.QueryEscape(strings.Repeat("ピ", 201)), 400},
		{"QNumber", "search_cards", map[string]any{"q": 42}, []string{"q"}, "", 0},
		{"ZoneMars", "search_cards", map[string]any{"q": "pikachu", "zone": "mars"}, []string{"zone"}, "/catalog/search?q=pikachu&zone=mars", 400},
		{"ZoneEmpty", "search_cards", map[string]any{"q": "pikachu", "zone": ""}, []string{"zone"}, "/catalog/search?q=pikachu&zone=", 400},
		{"LimitTooLarge", "search_cards", map[string]any{"q": "pikachu", "limit": 101}, []string{"limit"}, "/catalog/search?q=pikachu&limit=101", 400},
		{"LimitZero", "search_cards", map[string]any{"q": "pikachu", "limit": 0}, []string{"limit"}, "/catalog/search?q=pikachu&limit=0", 400},
		{"FuzzyString", "search_cards", map[string]any{"q": "charzard", "fuzzy": "true"}, []string{"fuzzy", "must be true or false, got the string"}, "", 0},
		{"FuzzyNumber", "search_cards", map[string]any{"q": "charzard", "fuzzy": 1}, []string{"fuzzy", "must be true or false"}, "", 0},
		{"SetEmpty", "search_cards", map[string]any{"q": "pikachu", "set": ""}, []string{"set"}, "/catalog/search?q=pikachu&set=", 400},
		{"SetTooLong", "search_cards", map[string]any{"q": "pikachu", "set": strings.Repeat("x", 51)}, []string{"set"}, "/catalog/search?q=pikachu&set=" + strings.Repeat("x", 51), 400},
		{"Three", "search_cards", map[string]any{"q": "a", "zone": "mars", "limit": 0}, []string{"q", "zone", "limit"}, "/catalog/search?q=a&zone=mars&limit=0", 400},
		{"PrefixBlank", "autocomplete_names", map[string]any{"q": "  "}, []string{"q"}, "/catalog/autocomplete?q=%20%20", 400},
		{"PrefixLimitTooLarge", "autocomplete_names", map[string]any{"q": "p", "limit": 21}, []string{"limit"}, "/catalog/autocomplete?q=p&limit=21", 400},
		{"IDsMissing", "get_cards", map[string]any{}, []string{"id", "is required"}, "/catalog/cards", 400},
		{"IDsEmptyArray", "get_cards", map[string]any{"id": []string{}}, []string{"id", "got none"}, "", 0},
		{"IDEmpty", "get_cards", map[string]any{"id": []string{"intl-base1-4", ""}}, []string{"id", "value 2 of 2 is empty"}, "/catalog/cards?id=intl-base1-4&id=", 400},
		{"IDsEmpty", "get_cards", map[string]any{"id": []string{"intl-base1-4", "", "x", ""}}, []string{"id: value 2 of 4 is empty", "id: value 4 of 4 is empty"}, "/catalog/cards?id=intl-base1-4&id=&id=x&id=", 400},
		{"IDsTooMany", "get_cards", map[string]any{"id": make([]string, 101)}, []string{"id", "holds 101 card ids"}, "/catalog/cards?" + strings.Repeat("id=x&", 100) + "id=y", 400},
		{"IDsString", "get_cards", map[string]any{"id": "intl-base1-4"}, []string{"id", "must be an array of strings"}, "", 0},
		{"IDsOfNumbers", "get_cards", map[string]any{"id": []any{"a", 2}}, []string{"id", "must be an array of strings, got the number 2 as value 2 of 2"}, "", 0},
		{"NumberMissing", "get_set_cards_by_number", map[string]any{"code": "SV2a"}, []string{"number", "is required"}, "", 0},
		{"NumberBlank", "get_set_cards_by_number", map[string]any{"code": "SV2a", "number": " "}, []string{"number"}, "/catalog/sets/SV2a/cards/%20", 400},
		{"NumberTooLong", "get_set_cards_by_number", map[string]any{"code": "SV2a", "number": strings.Repeat("1", 65)}, []string{"number"}, "/catalog/sets/SV2a/cards/" + strings.Repeat("1", 65), 400},
		{"NumberUnknownSet", "get_set_cards_by_number", map[string]any{"code": "nope", "number": "1"}, []string{"nope", "list_sets"}, "/catalog/sets/nope/cards/1", 404},
		{"NumberUnknown", "get_set_cards_by_number", map[string]any{"code": "SV2a", "number": "999"}, []string{"999", "SV2a"}, "/catalog/sets/SV2a/cards/999", 404},
		{"UnknownArgument", "search_cards", map[string]any{"q": "pikachu", "setCode": "SV2a", "page": nil}, []string{"setCode: is not an argument of this tool, which takes q, zone, set, limit, fuzzy"}, "", 0},
		{"UnknownArguments", "list_set_cards", map[string]any{"code": "base1", "page_size": 200, "pageSize": 0}, []string{"page_size: is not an argument", "pageSize"}, "", 0},
		{"ListSetsZoneMars", "list_sets", map[string]any{"zone": "mars"}, []string{"zone"}, "", 0},
		{"ListSetsZoneArray", "list_sets", map[string]any{"zone": []string{"jp"}}, []string{"zone"}, "", 0},
		{"ArgumentsNotAnObject", "list_sets", []int{1}, []string{"arguments"}, "", 0},
		{"CardIDTwice", "get_card", json.RawMessage(`{"cardId":"nope","cardId":"jp-SV1a-001"}`), []string{"cardId", "given 2 times"}, "", 0},
		{"ZoneTwiceLastNull", "search_cards", json.RawMessage(`{"q":"pikachu","zone":"jp","zone":null}`), []string{"zone", "given 2 times"}, "", 0},
		{"QNotUTF8", "search_cards", json.RawMessage("{\"q\":\"pika\xff\"}"), []string{"q: must be valid UTF-8"}, "/catalog/search?q=pika%FF", 400},
		{"IDLoneSurrogate", "get_cards", json.RawMessage(`{"id":["intl-base1-4","\ud800x"]}`), []string{"id: value 2 of 2 must be valid UTF-8"}, "/catalog/cards?id=intl-base1-4&id=%ED%A0%80x", 400},
	}
	cs := f.mcp(t, "")
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := callTool(t, cs, c.tool, c.args)
			text := toolTexts(t, res)
			if !res.IsError || len(text) != 1 {
				t.Fatalf("IsError %v, content %q; want a tool error with one message", res.IsError, text)
			}
			if res.StructuredContent != nil {
				t.Errorf("structured content %v on an error", res.StructuredContent)
			}
			msg := text[0]
			for _, p := range c.params {
				if !strings.Contains(msg, p) {
					t.Errorf("message %q does not name %s", msg, p)
				}
			}
			// An argument of the wrong type is not also reported missing:
			// the operation never saw it.
			if !strings.HasSuffix(c.name, "Missing") && strings.Contains(msg, "is required") {
				t.Errorf("message %q calls a given argument missing", msg)
			}
			if c.rest == "" {
				return
			}
			r := f.get(c.rest)
			r.wantStatus(t, c.status)
			var p problem
			r.json(t, &p)
			if c.status == http.StatusNotFound && !strings.Contains(msg, p.Detail) {
				t.Errorf("message %q, want it to hold the REST detail %q", msg, p.Detail)
			}
			for _, e := range p.Errors {
				if !strings.Contains(msg, e.Parameter+": "+e.Detail) {
					t.Errorf("message %q, want it to hold the REST error %q", msg, e.Parameter+": "+e.Detail)
				}
			}
		})
	}

	// An unknown tool is the one protocol error: the call itself is wrong.
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "drop_table"}); err == nil {
		t.Errorf("an unknown tool: no protocol error")
	}
}

// mcpCall posts one JSON-RPC message, or a batch of them, to the MCP
// endpoint with the fixture's token, saying the protocol version given
// (none when it is "").
func (f *fixture) mcpCall(t *testing.T, body []byte, protocol string) *response {
	t.Helper()
	return f.mcpSend(t, http.MethodPost, string(body), protocol, "Bearer "+f.token, "")
}

// mcpPost sends tools/list to the MCP endpoint over plain HTTP.
func (f *fixture) mcpPost(t *testing.T, method, authorization, host string) *response {
	t.Helper()
	return f.mcpSend(t, method, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`, mcpProtocol, authorization, host)
}

// mcpProtocol is the protocol version the raw requests of these tests say.
const mcpProtocol = "2025-11-25"

func (f *fixture) mcpSend(t *testing.T, method, body, protocol, authorization, host string) *response {
	t.Helper()
	req, err := http.NewRequest(method, f.base+"/mcp", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if protocol != "" {
		req.Header.Set("MCP-Protocol-Version", protocol)
	}
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	if host != "" {
		req.Host = host
	}
	resp, err := f.http.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return &response{status: resp.StatusCode, header: resp.Header, body: b}
}

// TestMCPUnauthorized: the MCP endpoint answers a request without a valid
// token exactly as REST does.
func TestMCPUnauthorized(t *testing.T) {
	f := newFixture(t)
	for _, authorization := range []string{"", "Bearer not-a-jwt", "Basic cGFydG5lcjpzZWNyZXQ="} {
		got := f.mcpPost(t, http.MethodPost, authorization, "")
		got.wantStatus(t, http.StatusUnauthorized)
		want := f.do(http.MethodGet, "/catalog/sets", "Authorization", authorization)
		if g, w := got.header.Get("WWW-Authenticate"), want.header.Get("WWW-Authenticate"); g == "" || g != w {
			t.Errorf("Authorization %q: WWW-Authenticate\n got %q\nwant %q (REST)", authorization, g, w)
		}
		if ct := got.header.Get("Content-Type"); ct != "application/problem+json" {
			t.Errorf("Authorization %q: Content-Type %q", authorization, ct)
		}
	}

	ok := f.mcpPost(t, http.MethodPost, "Bearer "+f.token, "")
	ok.wantStatus(t, http.StatusOK)
	if ct := ok.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("Content-Type %q, want a JSON response, not an event stream", ct)
	}
	if id := ok.header.Get("Mcp-Session-Id"); id != "" {
		t.Errorf("Mcp-Session-Id %q from a stateless server", id)
	}
	// No stream to open and no session to end.
	for _, method := range []string{http.MethodGet, http.MethodDelete} {
		r := f.mcpPost(t, method, "Bearer "+f.token, "")
		r.wantStatus(t, http.StatusMethodNotAllowed)
		if allow := r.header.Get("Allow"); !strings.Contains(allow, http.MethodPost) {
			t.Errorf("%s: Allow %q", method, allow)
		}
	}
}

// TestMCPBehindSameHostProxy: a reverse proxy on the same host reaches the
// loopback listener with the public Host, which the SDK would refuse by
// default.
func TestMCPBehindSameHostProxy(t *testing.T) {
	f := newFixture(t)
	const host = "catalog.example.com"
	for _, protocol := range mcpProtocols {
		cs := mcpConnect(t, f.base+"/mcp", &mcpTransport{token: f.token, host: host}, protocol)
		res := callTool(t, cs, "list_sets", map[string]any{"zone": "jp"})
		jp, err := f.live.Current().SetsJSON("jp")
		if err != nil {
			t.Fatal(err)
		}
		wantStructured(t, "list_sets through a proxy", res, []byte(`{"data":`+string(jp)+`}`))
	}

	// The same request to the SDK's handler with its defaults is refused,
	// so the request above did look like a rebinding attack.
	def := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return f.srv.mcp }, &mcp.StreamableHTTPOptions{Stateless: true}))
	defer def.Close()
	g := *f
	g.http, g.base = def, def.URL
	if r := g.mcpPost(t, http.MethodPost, "", host); r.status != http.StatusForbidden {
		t.Errorf("the SDK's default handler answered %d to Host %s, want 403", r.status, host)
	}
	if r := g.mcpPost(t, http.MethodPost, "", ""); r.status != http.StatusOK {
		t.Errorf("the SDK's default handler answered %d to a loopback Host, want 200", r.status)
	}
}

// TestMCPStatelessAcrossInstances: two replicas over the same catalogue
// file answer one client whose requests alternate between them.
func TestMCPStatelessAcrossInstances(t *testing.T) {
	f := newFixture(t)
	var hosts []string
	var logs syncBuffer
	for range 2 {
		db, err := store.Open(sampleCatalogue(t))
		if err != nil {
			t.Fatal(err)
		}
		live := store.NewLive(db)
		t.Cleanup(func() { live.Close() })
		// Replicas share the public base URL and the identity provider.
		srv, err := New(Config{Catalog: live, BaseURL: f.base, Auth: f.idp.verifier,
			Logger: slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))})
		if err != nil {
			t.Fatal(err)
		}
		ts := httptest.NewServer(srv)
		t.Cleanup(ts.Close)
		hosts = append(hosts, strings.TrimPrefix(ts.URL, "http://"))
	}

	for _, protocol := range mcpProtocols {
		tr := &mcpTransport{token: f.token, hosts: hosts}
		cs := mcpConnect(t, f.base+"/mcp", tr, protocol)
		tools := mcpTools(t, cs)
		if len(tools) != len(catalogTools()) {
			t.Fatalf("protocol %q: %d tools", protocol, len(tools))
		}
		for i := range 3 {
			wantStructured(t, "list_sets", callTool(t, cs, "list_sets", nil), f.get("/catalog/sets").body)
			wantStructured(t, "list_set_cards", callTool(t, cs, "list_set_cards", map[string]any{"code": "SV1a", "page": i + 1, "pageSize": 10}),
				f.get("/catalog/sets/SV1a/cards?pageSize=10&page="+strconv.Itoa(i+1)).body)
		}
		res := callTool(t, cs, "get_card", map[string]any{"cardId": "nope"})
		if !res.IsError {
			t.Errorf("protocol %q: get_card nope succeeded", protocol)
		}

		tr.mu.Lock()
		sent, sessions := slices.Clone(tr.sent), tr.sessionIDs
		tr.mu.Unlock()
		if len(sent) < 8 {
			t.Fatalf("protocol %q: %d requests, want at least 8", protocol, len(sent))
		}
		for i, h := range sent {
			if h != hosts[i%2] {
				t.Fatalf("protocol %q: request %d went to %s, want %s", protocol, i, h, hosts[i%2])
			}
		}
		if sessions != 0 {
			t.Errorf("protocol %q: %d responses carried Mcp-Session-Id", protocol, sessions)
		}
	}
	// A session per request must not mean a warning per request.
	if s := logs.String(); s != "" {
		t.Errorf("the servers logged:\n%s", s)
	}
}

// syncBuffer is a bytes.Buffer that two servers can log to at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// TestMCPToolPanic: a panic in a tool is a logged tool error, not the end
// of the process.
func TestMCPToolPanic(t *testing.T) {
	f := newFixture(t)
	var logs syncBuffer
	f.srv.log = slog.New(slog.NewJSONHandler(&logs, nil))
	h := f.srv.toolHandler(catalogTool{
		tool:   &mcp.Tool{Name: "boom", InputSchema: objectSchema(nil)},
		answer: func(toolArgs, *store.DB) ([]byte, string, error) { panic("boom") },
	})
	res, err := h(context.Background(), &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "boom"}})
	if err != nil || res == nil || !res.IsError {
		t.Fatalf("result %+v, error %v; want a tool error", res, err)
	}
	if text := toolTexts(t, res); strings.Contains(text[0], "boom") {
		t.Errorf("message %q tells the client the cause", text[0])
	}
	if !strings.Contains(logs.String(), "panic: boom") {
		t.Errorf("the panic was not logged: %q", logs.String())
	}
}
