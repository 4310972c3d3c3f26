package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/catalogd/catalogd/catalog"
)

// The tests of this file hold the API's side of a record to its one
// definition, catalog.SetMembers, CardMembers and PageMembers: the MCP
// schemas, the schemas of openapi.yaml, and the answers themselves. Each
// failure names the place that is out of step and the member.

var apiShapes = []struct {
	schema, table string
	members       []catalog.Member
}{
	{"Set", "SetMembers", catalog.SetMembers[:]},
	{"Card", "CardMembers", catalog.CardMembers[:]},
	{"Page", "PageMembers", catalog.PageMembers[:]},
}

// TestCatalogSchemasFollowMembers: the MCP schemas of Set, Card and Page
// have the members of their tables as properties, in order, each with the
// rules of its member, and require those an answer always has.
func TestCatalogSchemasFollowMembers(t *testing.T) {
	schemas := catalogSchemas()
	for _, shape := range apiShapes {
		where := "server/mcp.go: catalogSchemas' " + shape.schema
		s := schemas[shape.schema]
		if s == nil {
			t.Errorf("%s is missing", where)
			continue
		}
		assertSchemaFollows(t, where, shapeJSON(t, s), shape.members, shape.table)
		if names := memberNames(shape.members); !slices.Equal(s.PropertyOrder, names) {
			t.Errorf("%s has the properties in the order %v, catalog.%s %v", where, s.PropertyOrder, shape.table, names)
		}
	}
}

// TestOpenAPISchemasFollowMembers: components.schemas of openapi.yaml has
// for Set, Card and Page the properties of their tables, no others, each
// with the rules of its member, the members an answer always has required,
// and otherwise the MCP schema; Zone has the zones.
func TestOpenAPISchemasFollowMembers(t *testing.T) {
	doc, err := loadOpenAPISpec()
	if err != nil {
		t.Fatal(err)
	}
	mcpSchemas := catalogSchemas()
	for _, shape := range apiShapes {
		where := "server/openapi.yaml: components.schemas." + shape.schema
		ref := doc.Components.Schemas[shape.schema]
		if ref == nil || ref.Value == nil {
			t.Errorf("%s is missing", where)
			continue
		}
		yaml := shapeJSON(t, ref.Value)
		assertSchemaFollows(t, where, yaml, shape.members, shape.table)
		mcp := shapeJSON(t, mcpSchemas[shape.schema])
		for _, s := range []map[string]any{yaml, mcp} {
			delete(s, "properties")
			delete(s, "required")
		}
		for _, d := range shapeDiff(yaml, mcp) {
			t.Errorf("%s: %s, as the MCP schema has it", where, d)
		}
	}
	zone := shapeJSON(t, doc.Components.Schemas["Zone"].Value)
	var zones []string
	for _, z := range zone["enum"].([]any) {
		zones = append(zones, fmt.Sprint(z))
	}
	if !slices.Equal(zones, catalog.Zones()) {
		t.Errorf("server/openapi.yaml: components.schemas.Zone has %v, catalog.Zones() %v", zones, catalog.Zones())
	}
}

// assertSchemaFollows checks the schema of a record, as shapeJSON renders
// it, against its members: the same properties, each with the rules of its
// member, and the members an answer always has required.
func assertSchemaFollows(t *testing.T, where string, schema map[string]any, members []catalog.Member, table string) {
	t.Helper()
	props, _ := schema["properties"].(map[string]any)
	names := memberNames(members)
	for _, name := range slices.Sorted(maps.Keys(props)) {
		if !slices.Contains(names, name) {
			t.Errorf("%s has property %q, which catalog.%s does not have", where, name, table)
		}
	}
	for _, m := range members {
		p, ok := props[m.Name]
		if !ok {
			t.Errorf("%s lacks property %q of catalog.%s", where, m.Name, table)
			continue
		}
		for _, d := range shapeDiff(p, memberJSON(m)) {
			t.Errorf("%s, property %s: %s, as catalog.%s has it", where, m.Name, d, table)
		}
	}
	var required []string
	list, _ := schema["required"].([]any)
	for _, r := range list {
		required = append(required, fmt.Sprint(r))
	}
	if want := alwaysThere(members); !sameElements(required, want) {
		t.Errorf("%s requires %v; the required and defaulted members of catalog.%s are %v", where, required, table, want)
	}
}

// memberJSON is the JSON Schema of a member, with its rules.
func memberJSON(m catalog.Member) map[string]any {
	if m.Format == "zone" {
		return map[string]any{"$ref": "#/$defs/Zone"}
	}
	s := map[string]any{"type": m.Type}
	if m.Nullable {
		s["type"] = []any{m.Type, "null"}
	}
	if m.Description != "" {
		s["description"] = m.Description
	}
	if m.Type == "integer" {
		s["minimum"], s["maximum"] = float64(m.Minimum), float64(catalog.MaxInteger)
	}
	if m.MinLength > 0 {
		s["minLength"] = float64(m.MinLength)
	}
	if m.MaxLength > 0 {
		s["maxLength"] = float64(m.MaxLength)
	}
	if m.Format != "" {
		s["format"] = m.Format
	}
	if m.Default != "" {
		s["default"] = m.Default
	}
	return s
}

// TestAnswersFollowMembers reads a page of a set's cards, the sets and a
// card from a real server over a real catalogue: the meta of the page is
// PageMembers with the page asked for, and each set and card has the
// members of its table that an answer always has, and no others, in the
// order of the table.
func TestAnswersFollowMembers(t *testing.T) {
	f := newFixture(t)
	r := f.get("/catalog/sets/intl-swshp/cards?page=2&pageSize=3")
	r.wantStatus(t, 200)
	var page struct {
		Data []json.RawMessage
		Meta json.RawMessage
	}
	r.json(t, &page)
	if names := objectMembers(t, page.Meta); !slices.Equal(names, memberNames(catalog.PageMembers[:])) {
		t.Errorf("the meta of listSetCards has the members %v, catalog.PageMembers %v: %s", names, memberNames(catalog.PageMembers[:]), page.Meta)
	}
	var meta catalog.Page
	if err := json.Unmarshal(page.Meta, &meta); err != nil || meta.Page != 2 || meta.PageSize != 3 || meta.Total < 6 || len(page.Data) != 3 {
		t.Errorf("listSetCards page 2 of 3 cards: meta %s (%v), %d cards", page.Meta, err, len(page.Data))
	}
	for _, card := range page.Data {
		assertAnswerFollows(t, "a card of listSetCards", card, catalog.CardMembers[:])
	}

	var sets struct{ Data []json.RawMessage }
	f.get("/catalog/sets").json(t, &sets)
	if len(sets.Data) == 0 {
		t.Fatal("listSets: no sets")
	}
	for _, set := range sets.Data {
		assertAnswerFollows(t, "a set of listSets", set, catalog.SetMembers[:])
	}

	var card struct{ Data json.RawMessage }
	var first struct{ ID string }
	if err := json.Unmarshal(page.Data[0], &first); err != nil {
		t.Fatal(err)
	}
	f.get("/catalog/cards/"+url.PathEscape(first.ID)).json(t, &card)
	assertAnswerFollows(t, "getCard", card.Data, catalog.CardMembers[:])
}

// assertAnswerFollows checks that the record of an answer has every member
// an answer always has, and no member outside members, in their order.
func assertAnswerFollows(t *testing.T, what string, record []byte, members []catalog.Member) {
	t.Helper()
	names := objectMembers(t, record)
	for _, name := range alwaysThere(members) {
		if !slices.Contains(names, name) {
			t.Errorf("%s lacks member %q, which an answer always has: %s", what, name, record)
		}
	}
	var inOrder []string
	for _, m := range members {
		if slices.Contains(names, m.Name) {
			inOrder = append(inOrder, m.Name)
		}
	}
	if !slices.Equal(names, inOrder) {
		t.Errorf("%s has the members %v, which are not catalog's members in their order %v: %s", what, names, memberNames(members), record)
	}
}

func memberNames(members []catalog.Member) []string {
	var names []string
	for _, m := range members {
		names = append(names, m.Name)
	}
	return names
}

// alwaysThere are the members an answer always has: required or defaulted.
func alwaysThere(members []catalog.Member) []string {
	var names []string
	for _, m := range members {
		if m.Required || m.Default != "" {
			names = append(names, m.Name)
		}
	}
	return names
}

func sameElements(a, b []string) bool {
	return slices.Equal(slices.Sorted(slices.Values(a)), slices.Sorted(slices.Values(b)))
}

// objectMembers returns the names of the members of a JSON object, in order.
func objectMembers(t *testing.T, object []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(object))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not a JSON object (%v): %s", err, object)
	}
	var names []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatalf("%v: %s", err, object)
		}
		names = append(names, tok.(string))
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			t.Fatalf("%v: %s", err, object)
		}
	}
	return names
}

// shapeJSON is a schema, of openapi.yaml or MCP, as plain JSON to compare:
// references into $defs, no examples, descriptions with their line breaks
// folded, a type array of one as that type.
func shapeJSON(t *testing.T, schema any) map[string]any {
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
	var fold func(v any) any
	fold = func(v any) any {
		switch v := v.(type) {
		case map[string]any:
			delete(v, "examples")
			for k, e := range v {
				switch a, _ := e.([]any); {
				case k == "description":
					v[k] = strings.Join(strings.Fields(e.(string)), " ")
				case k == "type" && len(a) == 1:
					v[k] = a[0]
				default:
					v[k] = fold(e)
				}
			}
		case []any:
			for i, e := range v {
				v[i] = fold(e)
			}
		}
		return v
	}
	return fold(m).(map[string]any)
}

// shapeDiff lists the keywords in which the schema got differs from want.
func shapeDiff(got, want any) []string {
	g, _ := got.(map[string]any)
	w, _ := want.(map[string]any)
	var out []string
	for _, k := range slices.Sorted(maps.Keys(g)) {
		if wv, ok := w[k]; !ok {
			out = append(out, fmt.Sprintf("%s %v, which is not there", k, g[k]))
		} else if !reflect.DeepEqual(g[k], wv) {
			out = append(out, fmt.Sprintf("%s %v, not %v", k, g[k], wv))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(w)) {
		if _, ok := g[k]; !ok {
			out = append(out, fmt.Sprintf("no %s, not %v", k, w[k]))
		}
	}
	return out
}
