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
	s := &jsonschema.Schema{Type: "object", Required: required, Properties: map[string]*jsonschema.Schema{}, AdditionalProperties: falseSchema()}
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
// of openapi.yaml has them (a test holds the two equal), made from catalog's
// members.
func catalogSchemas() map[string]*jsonschema.Schema {
	object := func(description string, members []catalog.Member) *jsonschema.Schema {
		s := &jsonschema.Schema{Type: "object", Description: description, Properties: map[string]*jsonschema.Schema{}}
		for _, m := range members {
			s.Properties[m.Name] = memberSchema(m)
			s.PropertyOrder = append(s.PropertyOrder, m.Name)
			if m.Required || m.Default != "" { // always in an answer
				s.Required = append(s.Required, m.Name)
			}
		}
		s.AdditionalProperties = falseSchema()
		return s
	}
	return map[string]*jsonschema.Schema{
		"Zone": zoneSchema("A release zone."),
		"Set":  object("A card set of one release zone.", catalog.SetMembers[:]),
		"Card": object("A printed card.", catalog.CardMembers[:]),
		"Page": object("Pagination metadata of a list of cards.", catalog.PageMembers[:]),
		"NameCount": {
			Type: "object", Description: "A card name and how many cards bear it.",
			Properties: map[string]*jsonschema.Schema{
				"name":  {Type: "string", Description: "A card name, as printed."},
				"cards": {Type: "integer", Minimum: floatPtr(1), Description: "How many cards bear that name, in the zone asked or in every zone."},
			},
			PropertyOrder:        []string{"name", "cards"},
			Required:             []string{"name", "cards"},
			AdditionalProperties: falseSchema(),
		},
	}
}

// memberSchema is the schema of one member of a record.
func memberSchema(m catalog.Member) *jsonschema.Schema {
	if m.Format == "zone" {
		return &jsonschema.Schema{Ref: "#/$defs/Zone"}
	}
	s := &jsonschema.Schema{Type: m.Type, Description: m.Description}
	if m.Nullable {
		s.Type, s.Types = "", []string{m.Type, "null"}
	}
	if m.Type == "integer" {
		s.Minimum, s.Maximum = floatPtr(float64(m.Minimum)), floatPtr(catalog.MaxInteger)
	}
	if m.MinLength > 0 {
		s.MinLength = intPtr(m.MinLength)
	}
	if m.MaxLength > 0 {
		s.MaxLength = intPtr(m.MaxLength)
	}
	s.Format = m.Format
	if m.Default != "" {
		s.Default, _ = json.Marshal(m.Default)
	}
	return s
}

func intPtr(n int) *int           { return &n }
func floatPtr(f float64) *float64 { return &f }
