package server

import (
	"encoding/json"
	"strconv"

	"github.com/catalogd/catalogd/catalog"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// objectSchema is the schema of an object: props holds pairs of a member
// name and its schema, in the order they are shown.
func objectSchema(required []string, props ...any) *jsonschema.Schema {
	s := &jsonschema.Schema{Type: "object", Required: required, Properties: map[string]*jsonschema.Schema{}}
	for i := 0; i+1 < len(props); i += 2 {
		name := props[i].(string)
		s.Properties[name] = props[i+1].(*jsonschema.Schema)
		s.PropertyOrder = append(s.PropertyOrder, name)
	}
	return s
}

func integerSchema(description string, min, max, def int64) *jsonschema.Schema {
	return &jsonschema.Schema{
		Type: "integer", Description: description,
		Minimum: floatPtr(float64(min)), Maximum: floatPtr(float64(max)),
		Default: json.RawMessage(strconv.FormatInt(def, 10)),
	}
}

func zoneSchema(description string) *jsonschema.Schema {
	s := &jsonschema.Schema{Type: "string", Description: description}
	for _, z := range catalog.Zones() {
		s.Enum = append(s.Enum, z)
	}
	return s
}

func arrayOf(def string) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "array", Items: &jsonschema.Schema{Ref: "#/$defs/" + def}}
}

// withItems bounds the items of the array schema a: at least min, and at
// most max when max is not 0.
func withItems(a *jsonschema.Schema, min, max int) *jsonschema.Schema {
	if min > 0 {
		a.MinItems = intPtr(min)
	}
	if max > 0 {
		a.MaxItems = intPtr(max)
	}
	return a
}

func readOnlyHints(title string) *mcp.ToolAnnotations {
	closed := false
	return &mcp.ToolAnnotations{Title: title, ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: &closed}
}

// outputSchema is the schema of a tool's structured content, the REST
// envelope: members holds pairs of a member name and its schema, every
// member required; defs names the catalogue schemas they refer to.
func outputSchema(defs []string, members ...any) *jsonschema.Schema {
	s := objectSchema(nil, members...)
	s.Required = s.PropertyOrder
	s.AdditionalProperties = falseSchema()
	s.Defs = map[string]*jsonschema.Schema{}
	all := catalogSchemas()
	for _, name := range defs {
		s.Defs[name] = all[name]
	}
	return s
}

// falseSchema matches nothing; as additionalProperties it closes an object.
func falseSchema() *jsonschema.Schema { return &jsonschema.Schema{Not: &jsonschema.Schema{}} }

// catalogSchemas are the schemas of docs/CONTRACT.md, Records, as components.schemas
// of openapi.yaml has them (a test holds the two equal).
func catalogSchemas() map[string]*jsonschema.Schema {
	str := func(description string, minLen int) *jsonschema.Schema {
		return &jsonschema.Schema{Type: "string", Description: description, MinLength: intPtr(minLen)}
	}
	nullable := func(typ string) *jsonschema.Schema { return &jsonschema.Schema{Types: []string{typ, "null"}} }
	integer := func(description string, min float64) *jsonschema.Schema {
		return &jsonschema.Schema{Type: "integer", Description: description, Minimum: floatPtr(min), Maximum: floatPtr(catalog.MaxInteger)}
	}
	object := func(description string, required []string, props ...any) *jsonschema.Schema {
		s := objectSchema(required, props...)
		s.Description = description
		s.AdditionalProperties = falseSchema()
		return s
	}
	zone := &jsonschema.Schema{Ref: "#/$defs/Zone"}

	totalCards := nullable("integer")
	totalCards.Minimum, totalCards.Maximum = floatPtr(1), floatPtr(catalog.MaxInteger)
	illustrator, marketAID, marketAPath, marketBID := nullable("string"), nullable("string"), nullable("string"), nullable("string")
	for _, s := range []*jsonschema.Schema{illustrator, marketAID, marketAPath, marketBID} {
		s.MinLength = intPtr(1)
	}
	scanFallbackURL := nullable("string")
	scanFallbackURL.Format = "uri"
	rarity := str("", 1)
	rarity.MaxLength = intPtr(100)
	key := func(description string, maxLen int) *jsonschema.Schema {
		s := str(description, 1)
		s.MaxLength = intPtr(maxLen)
		return s
	}

	return map[string]*jsonschema.Schema{
		"Zone": zoneSchema("A release zone."),
		"Set": object("A card set of one release zone.", []string{"id", "code", "name", "zone", "cardCount"},
			"id", key("The set id, unique across all zones.", catalog.MaxKeyLength),
			"code", key("The set code, unique within its zone; the same code may be used in several zones.", catalog.MaxKeyLength),
			"name", str("", 1),
			"zone", zone,
			"releasedOn", &jsonschema.Schema{Type: "string", Description: "The release date, a calendar date `YYYY-MM-DD`.", Format: "date"},
			"cardCount", integer("", 0),
		),
		"Card": object("A printed card.", []string{"id", "name", "setName", "setCode", "number", "language", "variant", "zone"},
			"id", key("The catalogue id of the card, unique across all zones.", catalog.MaxKeyLength),
			"name", str("", 1),
			"setName", str("The `name` of the card's set.", 1),
			"setCode", key("The `code` of the card's set, in the card's zone.", catalog.MaxKeyLength),
			"number", key("The printed number, as printed (`4/102`, `TG02`).", catalog.MaxNumberLength),
			"language", str("", 2),
			"year", integer("", 1996),
			"variant", &jsonschema.Schema{Type: "string", Default: json.RawMessage(`"` + catalog.DefaultVariant + `"`)},
			"rarity", rarity,
			"imageUrl", &jsonschema.Schema{Type: "string", Format: "uri"},
			"zone", zone,
			"totalCards", totalCards,
			"illustrator", illustrator,
			"marketAId", marketAID,
			"marketAPath", marketAPath,
			"marketBId", marketBID,
			"scanFallbackUrl", scanFallbackURL,
		),
		"Page": object("Pagination metadata of a list of cards.", []string{"page", "pageSize", "total"},
			"page", integer("The page returned, counting from 1.", 1),
			"pageSize", integer("The number of cards per page asked for.", 1),
			"total", integer("The number of cards of the set, on all pages.", 0),
		),
	}
}

func intPtr(n int) *int           { return &n }
func floatPtr(f float64) *float64 { return &f }
