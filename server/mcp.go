package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/catalogd/catalogd/catalog"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpVersion is the version of the interface the MCP server announces: the
// API version (docs/CONTRACT.md, Versioning), which REST and MCP share.
const mcpVersion = "1.0.0"

// mcpMaxBody bounds a request to the MCP endpoint: a call to these tools is
// a few hundred bytes, and the SDK's default of 4 MiB is a lot of memory to
// hand any token holder on a 512 MiB machine.
const mcpMaxBody = 64 << 10

const mcpInstructions = `A read-only catalogue of trading-card sets and cards in three release zones: intl, jp and chn. ` +
	`list_sets gives the sets (ids and codes); list_set_cards pages through the cards of one set; ` +
	`search_cards finds cards by name or printed number; get_card returns one card by its id.`

// handleMCP serves the MCP interface of docs/CONTRACT.md, MCP: Streamable HTTP,
// stateless, answering each request with one JSON body.
func (s *Server) handleMCP() http.Handler {
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp }, &mcp.StreamableHTTPOptions{
		// No session: each POST stands alone, so any replica behind a load
		// balancer can answer any request (docs/CONTRACT.md, Scaling out).
		Stateless: true,
		// Every tool answers at once; an event stream would only add framing.
		JSONResponse: true,
		// The SDK rejects a request that reaches a loopback address with a
		// Host that is not loopback, the mark of DNS rebinding; it is also
		// the mark of a reverse proxy on the same host that passes the
		// client's Host on, which catalogd must work behind (docs/CONTRACT.md,
		// MCP). Rebinding gains an attacker nothing here: this handler sits
		// behind the bearer check of route.serve, so every request must carry a valid bearer
		// token, and the browser a rebinding page runs in has none to send.
		DisableLocalhostProtection: true,
		MaxRequestBodyBytes:        mcpMaxBody,
		Logger:                     s.sdkLog(),
	})
}

// sdkLog is the logger the SDK gets: warnings and errors only, because it
// logs the start and end of every session at Info, and a stateless server
// has a session per request.
func (s *Server) sdkLog() *slog.Logger {
	return slog.New(minLevel{s.log.Handler().WithAttrs([]slog.Attr{slog.String("component", "mcp")}), slog.LevelWarn})
}

// minLevel drops the records of h below min.
type minLevel struct {
	h   slog.Handler
	min slog.Level
}

func (m minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= m.min && m.h.Enabled(ctx, l)
}

func (m minLevel) Handle(ctx context.Context, r slog.Record) error { return m.h.Handle(ctx, r) }

func (m minLevel) WithAttrs(attrs []slog.Attr) slog.Handler {
	return minLevel{m.h.WithAttrs(attrs), m.min}
}

func (m minLevel) WithGroup(name string) slog.Handler { return minLevel{m.h.WithGroup(name), m.min} }

// newMCP builds the MCP server: the four read-only tools of
// docs/CONTRACT.md, MCP. It holds no per-request state, so one serves every request.
func (s *Server) newMCP() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "catalogd", Title: "catalogd partner catalogue", Version: mcpVersion}, &mcp.ServerOptions{
		Instructions: mcpInstructions,
		Logger:       s.sdkLog(),
		// Tools only, and the list never changes: no logging capability and
		// nothing to notify (a stateless server could not notify anyway).
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}},
	})
	for _, t := range []catalogTool{listSetsTool(), listSetCardsTool(), getCardTool(), searchCardsTool()} {
		// The low-level AddTool, not the generic one: the generic one checks
		// the arguments against the advertised schema before the handler
		// runs, with JSON Schema's rules (1.0 is an integer, q is not
		// trimmed) and messages about schema paths. The handler checks them
		// instead, with the rules and messages of the REST parameters.
		srv.AddTool(t.tool, s.toolHandler(t))
	}
	return srv
}

// catalogTool is one MCP tool: its definition, and answer, which reads its
// arguments from q with the rules of the matching REST parameters and
// answers from db with the body REST gives for the same question and a
// one-line summary of it.
type catalogTool struct {
	tool   *mcp.Tool
	answer func(q *query, db *catalog.DB) (body []byte, summary string, err error)
}

// toolHandler runs t. Whatever goes wrong is a tool result with isError
// set, never a JSON-RPC error: an agent reads the message and corrects its
// call, where a protocol error would only tell it that the call failed.
func (s *Server) toolHandler(t catalogTool) mcp.ToolHandler {
	input := t.tool.InputSchema.(*jsonschema.Schema)
	return func(ctx context.Context, req *mcp.CallToolRequest) (res *mcp.CallToolResult, err error) {
		// The SDK calls tools on goroutines of its own, out of reach of the
		// router's panic handler: unrecovered, a panic would end the process.
		defer func() {
			if v := recover(); v != nil {
				res, err = s.toolError(ctx, t.tool.Name, fmt.Errorf("panic: %v", v)), nil
			}
		}()
		q, err := toolQuery(req.Params.Arguments, input)
		if err != nil {
			return s.toolError(ctx, t.tool.Name, err), nil
		}
		db, release := s.catalog.Acquire()
		defer release()
		body, summary, err := t.answer(q, db)
		if err != nil {
			return s.toolError(ctx, t.tool.Name, err), nil
		}
		return &mcp.CallToolResult{
			// The JSON again as text, as the MCP spec asks, for clients that
			// do not read structured content.
			Content:           []mcp.Content{&mcp.TextContent{Text: summary}, &mcp.TextContent{Text: string(body)}},
			StructuredContent: json.RawMessage(body),
		}, nil
	}
}

// toolError renders err as a tool error. Like a 500, an unexpected error is
// logged and its cause kept from the client.
func (s *Server) toolError(ctx context.Context, tool string, err error) *mcp.CallToolResult {
	var msg string
	var params paramErrors
	switch {
	case errors.As(err, &params):
		// An argument of the wrong type reads as absent to the REST rules,
		// which may then call it missing: its first problem is the one to
		// tell.
		var parts []string
		seen := map[string]bool{}
		for _, p := range params {
			if !seen[p.Parameter] {
				seen[p.Parameter] = true
				parts = append(parts, p.Parameter+": "+p.Detail)
			}
		}
		if len(parts) == 1 {
			msg = "invalid argument " + parts[0]
		} else {
			msg = "invalid arguments: " + strings.Join(parts, "; ")
		}
	case errors.Is(err, errArgumentsNotObject):
		msg = err.Error()
	case errors.Is(err, catalog.ErrNotFound):
		msg = err.Error() + " in the active catalogue"
		switch tool {
		case "list_set_cards":
			msg += "; list_sets gives the id and code of every set"
		case "get_card":
			msg += "; search_cards and list_set_cards give card ids"
		}
	default:
		s.log.ErrorContext(ctx, "MCP tool call failed", slog.String("tool", tool), slog.Any("error", err))
		msg = "the server could not answer; the error was logged"
	}
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}}
}

var errArgumentsNotObject = errors.New("the arguments must be a JSON object of named arguments")

// toolQuery turns the JSON arguments of a call into the query parameters of
// the REST request that asks the same question, so that one parser checks
// both. What JSON adds is checked here: each argument the input schema
// declares must have the declared JSON type (a number is kept as written,
// so that the REST rules judge 1.0 or -1), and be given once; null counts
// as absent, as clients send it for an argument they leave out; arguments
// the schema does not declare are ignored, like unknown query parameters.
func toolQuery(raw json.RawMessage, input *jsonschema.Schema) (*query, error) {
	q := &query{values: url.Values{}}
	var args map[string]json.RawMessage
	var given map[string]int
	if raw := bytes.TrimSpace(raw); len(raw) > 0 && !bytes.Equal(raw, []byte("null")) {
		if raw[0] != '{' || json.Unmarshal(raw, &args) != nil {
			return nil, errArgumentsNotObject
		}
		given = memberCounts(raw)
	}
	for _, name := range input.PropertyOrder {
		if n := given[name]; n > 1 {
			q.fail(name, "given %d times; give it once", n)
			continue
		}
		v := bytes.TrimSpace(args[name])
		if len(v) == 0 || bytes.Equal(v, []byte("null")) {
			continue
		}
		prop := input.Properties[name]
		switch {
		case prop.Type == "integer" && isJSONNumber(v):
			q.values.Set(name, string(v))
		case prop.Type == "string" && v[0] == '"':
			var str string
			if err := json.Unmarshal(v, &str); err != nil {
				q.fail(name, "must be a string")
				continue
			}
			q.values.Set(name, str)
		case prop.Type == "integer":
			q.fail(name, "must be an integer from %s to %s, got %s", schemaNumber(prop.Minimum), schemaNumber(prop.Maximum), jsonKind(v))
		default:
			q.fail(name, "must be a string, got %s", jsonKind(v))
		}
	}
	return q, nil
}

// memberCounts counts the members of a valid JSON object by name:
// encoding/json keeps the last of a name given twice, where a query
// parameter given twice is refused.
func memberCounts(object []byte) map[string]int {
	counts := map[string]int{}
	dec := json.NewDecoder(bytes.NewReader(object))
	if _, err := dec.Token(); err != nil { // {
		return counts
	}
	for dec.More() {
		t, err := dec.Token()
		name, ok := t.(string)
		var value json.RawMessage
		if err != nil || !ok || dec.Decode(&value) != nil {
			break
		}
		counts[name]++
	}
	return counts
}

func isJSONNumber(v []byte) bool { return v[0] == '-' || ('0' <= v[0] && v[0] <= '9') }

// jsonKind names a JSON value that has the wrong type, with the value when
// it is short.
func jsonKind(v []byte) string {
	switch v[0] {
	case '"':
		var s string
		if json.Unmarshal(v, &s) == nil {
			return "the string " + quoteParam(s)
		}
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "the boolean " + string(v)
	default:
		if len(v) > 30 {
			return "a number"
		}
		return "the number " + string(v)
	}
}

func schemaNumber(f *float64) string {
	if f == nil {
		return "?"
	}
	return strconv.FormatFloat(*f, 'f', -1, 64)
}

// idArgument reads a required argument that names one record, as the REST
// path parameter of the same name does.
func idArgument(q *query, name string) string {
	v, ok := q.get(name)
	switch {
	case !ok:
		q.fail(name, "is required")
	case v == "":
		q.fail(name, "must not be empty")
	}
	return v
}

func listSetsTool() catalogTool {
	return catalogTool{
		tool: &mcp.Tool{
			Name:  "list_sets",
			Title: "List sets",
			Description: "Lists the card sets of the catalogue, or of one release zone, newest release first " +
				"(sets without a release date last, then by id). A set's id is unique across zones; its code is " +
				"unique within its zone. Either names the set in list_set_cards and search_cards.",
			InputSchema: objectSchema(nil,
				"zone", zoneSchema("Only the sets of this release zone; every zone when left out."),
			),
			OutputSchema: outputSchema([]string{"Set", "Zone"}, "data", arrayOf("Set")),
			Annotations:  readOnlyHints("List sets"),
		},
		answer: func(q *query, db *catalog.DB) ([]byte, string, error) {
			zone := q.zone("zone")
			if err := q.err(); err != nil {
				return nil, "", err
			}
			b, err := appendSets(nil, db, zone)
			if err != nil {
				return nil, "", err
			}

			var n int64
			for _, z := range db.Info().Zones {
				if zone == "" || z.Zone == zone {
					n += z.Sets
				}
			}
			where := "every zone"
			if zone != "" {
				where = "zone " + zone
			}
			return b, fmt.Sprintf("%s in %s, newest release first.", counted(n, "set"), where), nil
		},
	}
}

func listSetCardsTool() catalogTool {
	return catalogTool{
		tool: &mcp.Tool{
			Name:  "list_set_cards",
			Title: "List the cards of a set",
			Description: "Returns one page of the cards of a set, in printed-number order (1 < 2 < TG02 < 3 < 10 < 025/165 < 112/102), " +
				"then by card id, with the page, the page size and the total number of cards of the set. " +
				"A page past the last one has no cards and the true total.",
			InputSchema: objectSchema([]string{"code"},
				"code", &jsonschema.Schema{
					Type: "string", MinLength: intPtr(1),
					Description: "A set code as returned by list_sets, or the full set id. A code used in several zones " +
						"names the set of the first zone in the order intl, jp, chn; use the set id for another zone.",
				},
				"page", integerSchema("The page to return, counting from 1.", 1, maxPage, 1),
				"pageSize", integerSchema("The number of cards per page.", 1, maxPageSize, defaultPageSize),
			),
			OutputSchema: outputSchema([]string{"Card", "Page", "Zone"}, "data", arrayOf("Card"), "meta", &jsonschema.Schema{Ref: "#/$defs/Page"}),
			Annotations:  readOnlyHints("List the cards of a set"),
		},
		answer: func(q *query, db *catalog.DB) ([]byte, string, error) {
			code := idArgument(q, "code")
			page := q.int("page", 1, 1, maxPage)
			pageSize := q.int("pageSize", defaultPageSize, 1, maxPageSize)
			if err := q.err(); err != nil {
				return nil, "", err
			}
			b, total, n, err := appendSetCards(make([]byte, 0, 4<<10), db, code, page, pageSize)
			if err != nil {
				return nil, "", err
			}
			set, err := db.Set(code)
			if err != nil {
				return nil, "", err
			}

			summary := fmt.Sprintf("Set %s (id %s, code %s, zone %s): ", quoteParam(set.Name), set.ID, set.Code, set.Zone)
			pages := (total + pageSize - 1) / pageSize
			switch {
			case total == 0:
				summary += "no cards."
			case n == 0:
				summary += fmt.Sprintf("%s; page %d is past the last page, %d.", counted(total, "card"), page, pages)
			default:
				first := (page-1)*pageSize + 1
				summary += fmt.Sprintf("cards %d to %d of %d, page %d of %d.", first, first+int64(n)-1, total, page, pages)
			}
			return b, summary, nil
		},
	}
}

func getCardTool() catalogTool {
	return catalogTool{
		tool: &mcp.Tool{
			Name:        "get_card",
			Title:       "Get a card",
			Description: "Returns the card whose id is exactly cardId.",
			InputSchema: objectSchema([]string{"cardId"},
				"cardId", &jsonschema.Schema{
					Type: "string", MinLength: intPtr(1),
					Description: "The full card id, as list_set_cards and search_cards return it in a card's id.",
				},
			),
			OutputSchema: outputSchema([]string{"Card", "Zone"}, "data", &jsonschema.Schema{Ref: "#/$defs/Card"}),
			Annotations:  readOnlyHints("Get a card"),
		},
		answer: func(q *query, db *catalog.DB) ([]byte, string, error) {
			id := idArgument(q, "cardId")
			if err := q.err(); err != nil {
				return nil, "", err
			}
			b, err := appendCard(make([]byte, 0, 1<<10), db, id)
			if err != nil {
				return nil, "", err
			}

			var card struct{ Name, Number, SetName, SetCode, Zone string }
			if err := json.Unmarshal(b[len(`{"data":`):len(b)-1], &card); err != nil {
				return nil, "", fmt.Errorf("card %q: decode stored record: %w", id, err)
			}
			return b, fmt.Sprintf("Card %s (id %s): number %s of set %s (code %s, zone %s).",
				quoteParam(card.Name), id, card.Number, quoteParam(card.SetName), card.SetCode, card.Zone), nil
		},
	}
}

func searchCardsTool() catalogTool {
	return catalogTool{
		tool: &mcp.Tool{
			Name:  "search_cards",
			Title: "Search cards",
			Description: "Finds cards by name or printed number, in every zone unless zone is given, in printed-number order " +
				"then by card id, at most limit of them. Names and queries are folded alike (case, diacritics, " +
				"full-width and half-width forms, hiragana to katakana; the kana voicing marks are kept), so pokemon " +
				"finds Pokémon and ぴかちゅう finds ピカチュウ. The query is split on white space into terms; a card matches " +
				"when every term is part of its name or equals its printed number (25, 025 and 25/102 all equal 25), " +
				"so charizard 4 finds Charizard numbered 4.",
			InputSchema: objectSchema([]string{"q"},
				"q", &jsonschema.Schema{
					Type: "string", MinLength: intPtr(minQueryLen), MaxLength: intPtr(maxQueryLen),
					Description: fmt.Sprintf("The query: %d to %d characters (Unicode code points) once leading and trailing white space is trimmed.", minQueryLen, maxQueryLen),
				},
				"zone", zoneSchema("Only cards of this release zone."),
				"set", &jsonschema.Schema{
					Type: "string", MinLength: intPtr(1), MaxLength: intPtr(maxSetLen),
					Description: "Only cards of this set, named by its id or by its code. A code matches the sets of that code " +
						"in every zone, or in zone alone when it is given. A set that does not exist gives no cards, not an error.",
				},
				"limit", integerSchema("The largest number of cards to return.", 1, maxLimit, defaultLimit),
			),
			OutputSchema: outputSchema([]string{"Card", "Zone"}, "data", arrayOf("Card")),
			Annotations:  readOnlyHints("Search cards"),
		},
		answer: func(q *query, db *catalog.DB) ([]byte, string, error) {
			sq := searchParams(q)
			if err := q.err(); err != nil {
				return nil, "", err
			}
			b, n, err := appendSearch(make([]byte, 0, 4<<10), db, sq)
			if err != nil {
				return nil, "", err
			}

			var filters []string
			if sq.Zone != "" {
				filters = append(filters, "zone "+sq.Zone)
			}
			if sq.Set != "" {
				filters = append(filters, "set "+quoteParam(sq.Set))
			}
			verb := " match "
			if n == 1 {
				verb = " matches "
			}
			summary := counted(int64(n), "card") + verb + quoteParam(sq.Q)
			if len(filters) > 0 {
				summary += " (" + strings.Join(filters, ", ") + ")"
			}
			summary += ", in printed-number order."
			if n == sq.Limit {
				summary += fmt.Sprintf(" That is the limit of %d: more may match.", sq.Limit)
			}
			return b, summary, nil
		},
	}
}

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

// counted is n things in English: "1 card", "2 cards".
func counted(n int64, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return strconv.FormatInt(n, 10) + " " + thing + "s"
}

func intPtr(n int) *int           { return &n }
func floatPtr(f float64) *float64 { return &f }
