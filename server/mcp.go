package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/catalogd/catalogd/catalog"
	"github.com/catalogd/catalogd/catalog/store"
	"github.com/catalogd/catalogd/server/op"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpVersion is the version of the interface the MCP server announces: the
// API version (docs/CONTRACT.md, Versioning), which REST and MCP share.
const mcpVersion = "1.0.0"

// mcpMaxBody bounds a request to the MCP endpoint: the SDK's default of
// 4 MiB is a lot of memory to hand any token holder on a 512 MiB machine.
// The largest call the tools take is get_cards of op.MaxIDs ids of
// catalog.MaxKeyLength characters, each written as an escaped surrogate
// pair (12 bytes), 300 KiB; a usual call is a few hundred bytes.
const mcpMaxBody = 320 << 10

// mcpMaxBatch is the most calls of one JSON-RPC batch (protocol
// 2025-03-26; later ones have none). The SDK holds every answer of a batch
// until its last call is done, and an answer may be a page of 200 cards,
// some 170 KiB: four keep a request to the 1 MiB that docs/OPERATIONS.md,
// Connections, counts for one, where the body limit alone let a batch of
// 2,700 searches hold 358 MB.
const mcpMaxBatch = 4

const mcpInstructions = `A read-only catalogue of trading-card sets and cards in three release zones: intl, jp and chn. ` +
	`list_sets gives the sets (ids and codes); list_set_cards pages through the cards of one set; ` +
	`search_cards finds cards by name or printed number; get_card returns one card by its id, get_cards up to 100 at once; ` +
	`get_set_cards_by_number returns the cards of a set printed with one number, as read off a card ("SV1a 025/073"); ` +
	`autocomplete_names completes a card name as it is typed, in any script, with how many cards bear each name.`

// handleMCP serves the MCP interface of docs/CONTRACT.md, MCP: Streamable HTTP,
// stateless, answering each request with one JSON body.
func (s *Server) handleMCP() http.Handler {
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp }, &mcp.StreamableHTTPOptions{
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
		// token, and the browser a rebinding page runs in has none to send:
		// serve --dev gives its token to a loopback Host only
		// (devHostsOnly).
		DisableLocalhostProtection: true,
		MaxRequestBodyBytes:        mcpMaxBody,
		Logger:                     s.sdkLog(),
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && !mcpBodyFits(w, r) {
			return
		}
		// The SDK hands the request's context to the tools (so that
		// middleware may add to it, its docs say): the calls of one request
		// take their turns and their prices through it (toolHandler,
		// chargeTool).
		ctx := context.WithValue(r.Context(), mcpCallerKey{}, &mcpCaller{clientID: clientOf(w), header: w.Header()})
		sdk.ServeHTTP(w, r.WithContext(ctx))
	})
}

// mcpBodyFits reads the body of an MCP POST, at most mcpMaxBody bytes, and
// hands it on to the SDK when it is not a JSON-RPC batch of more than
// mcpMaxBatch calls; else it answers 413 or 400 and reports false.
func mcpBodyFits(w http.ResponseWriter, r *http.Request) bool {
	var body []byte
	var err error = &http.MaxBytesError{Limit: mcpMaxBody}
	if r.ContentLength <= mcpMaxBody {
		// A body declared too large is refused before any of it is read,
		// and a client that waits on Expect: 100-continue sends none.
		body, err = io.ReadAll(http.MaxBytesReader(w, r.Body, mcpMaxBody))
	}
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		writeProblem(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("the request body is over %d bytes", mcpMaxBody))
		return false
	case errors.Is(err, os.ErrDeadlineExceeded):
		// The server's read timeout: a client or proxy may send it again.
		writeProblem(w, http.StatusRequestTimeout, "the request body did not arrive in time")
		return false
	case err != nil:
		writeProblem(w, http.StatusBadRequest, "the request body could not be read whole")
		return false
	}
	if b := bytes.TrimSpace(body); len(b) > 0 && b[0] == '[' {
		// The SDK reads the first JSON value of the body and ignores what
		// follows it, so the batch is counted the same way, and a body
		// that is more than the batch is refused: else bytes after it
		// would hide the batch from the count.
		dec := json.NewDecoder(bytes.NewReader(b))
		var calls []json.RawMessage
		switch err := dec.Decode(&calls); {
		case err != nil || dec.InputOffset() != int64(len(b)):
			writeProblem(w, http.StatusBadRequest, "the request body is not one JSON-RPC batch and nothing else")
			return false
		case len(calls) > mcpMaxBatch:
			writeProblem(w, http.StatusBadRequest, fmt.Sprintf("a JSON-RPC batch of %d messages; at most %d: send more requests", len(calls), mcpMaxBatch))
			return false
		}
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	return true
}

// mcpCaller is who sent an MCP request, and the header of its answer,
// for its calls to charge their prices to (chargeTool).
type mcpCaller struct {
	clientID string
	// turn runs the calls of one request one at a time: the SDK runs each
	// call of a JSON-RPC batch (protocol 2025-03-26) on a goroutine of its
	// own, and a batch of hundreds would otherwise be hundreds of requests
	// in flight for one of --max-client-requests.
	turn   sync.Mutex
	calls  int // the calls of the request that have run, under turn
	header http.Header
}

type mcpCallerKey struct{}

// chargeTool takes from the caller's budget what a call of t costs: 1, or
// for get_cards the price of its ids as getCards has it (docs/CONTRACT.md,
// Rate limits), less the 1 route.serve took for the HTTP request if this is
// its first call; the calls of a JSON-RPC batch after the first pay whole.
// It sets the answer's RateLimit headers anew, which the SDK writes once
// the request is answered, and returns the refusal's detail when the
// budget is short. The caller's turn is held (toolHandler).
func (s *Server) chargeTool(caller *mcpCaller, t catalogTool, args toolArgs) (refused string) {
	if caller == nil {
		return ""
	}
	if caller.calls++; s.limits == nil {
		return ""
	}
	price := 1
	if t.cost != nil {
		price = t.cost(args)
	}
	price = min(price, s.limits.limit.Burst)
	if caller.calls == 1 {
		price--
	}
	if price <= 0 {
		return ""
	}
	if retry, ok := s.limits.take(caller.header, caller.clientID, price); !ok {
		return s.limits.overLimit(caller.clientID, retry)
	}
	return ""
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

// newMCP builds the MCP server with the read-only tools of
// docs/CONTRACT.md, MCP (mcp_tools.go). It holds no per-request state, so
// one serves every request.
func (s *Server) newMCP() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "catalogd", Title: "catalogd partner catalogue", Version: mcpVersion}, &mcp.ServerOptions{
		Instructions: mcpInstructions,
		Logger:       s.sdkLog(),
		// Tools only, and the list never changes: no logging capability and
		// nothing to notify (a stateless server could not notify anyway).
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}},
	})
	for _, t := range catalogTools() {
		// The low-level AddTool, not the generic one: the generic one checks
		// the arguments against the advertised schema before the handler
		// runs, with JSON Schema's rules (1.0 is an integer, q is not
		// trimmed) and messages about schema paths. The operation checks
		// them instead, with the rules and messages of the REST parameters.
		srv.AddTool(t.tool, s.toolHandler(t))
	}
	return srv
}

// catalogTool is one MCP tool: its definition, and answer, which answers
// the arguments from db with the body REST gives for the same question and
// a one-line summary of it. notFound tells an agent where to find what it
// named, after a NotFound.
type catalogTool struct {
	tool     *mcp.Tool
	answer   func(args toolArgs, db *store.DB) (body []byte, summary string, err error)
	notFound string
	cost     func(args toolArgs) int // what a call takes from the rate limit; nil: 1
}

// toolOf makes the tool that answers the operation o: the arguments, one
// call into the operation, the answer with its summary.
func toolOf[R any](tool *mcp.Tool, o op.Operation[R], summary func(db *store.DB, req R, a op.Answer) (string, error)) catalogTool {
	return catalogTool{tool: tool, answer: func(args toolArgs, db *store.DB) ([]byte, string, error) {
		req, err := o.Parse(op.Params{Values: args.values})
		if err = op.InvalidWith(args.errs, err); err != nil {
			return nil, "", err
		}
		a, err := o.Answer(make([]byte, 0, 4<<10), db, req)
		if err != nil {
			return nil, "", err
		}
		text, err := summary(db, req, a)
		return a.Body, text, err
	}}
}

// toolHandler runs t. Whatever goes wrong is a tool result with isError
// set, never a JSON-RPC error: an agent reads the message and corrects its
// call, where a protocol error would only tell it that the call failed.
func (s *Server) toolHandler(t catalogTool) mcp.ToolHandler {
	input := t.tool.InputSchema.(*jsonschema.Schema)
	return func(ctx context.Context, req *mcp.CallToolRequest) (res *mcp.CallToolResult, err error) {
		// The SDK calls tools on goroutines of its own, out of reach of
		// route.record's recovery: unrecovered, a panic would end the
		// process.
		defer func() {
			if v := recover(); v != nil {
				res, err = s.toolError(ctx, t, fmt.Errorf("panic: %v", v)), nil
			}
		}()
		// A fault on the catalogue file's mapped bytes too (route.serve).
		defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
		caller, _ := ctx.Value(mcpCallerKey{}).(*mcpCaller)
		if caller != nil {
			caller.turn.Lock()
			defer caller.turn.Unlock()
		}
		args, err := decodeToolArgs(req.Params.Arguments, input)
		if err != nil {
			return s.toolError(ctx, t, err), nil
		}
		if refused := s.chargeTool(caller, t, args); refused != "" {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: refused}}}, nil
		}
		db, release := s.catalog.Acquire()
		defer release()
		body, summary, err := t.answer(args, db)
		if err != nil {
			return s.toolError(ctx, t, err), nil
		}
		return &mcp.CallToolResult{
			// The JSON again as text, as the MCP spec asks, for clients that
			// do not read structured content.
			Content:           []mcp.Content{&mcp.TextContent{Text: summary}, &mcp.TextContent{Text: string(body)}},
			StructuredContent: json.RawMessage(body),
		}, nil
	}
}

// toolError renders err as a tool error, the one place MCP answers an
// error: an operation's *op.Error by its kind; anything else, like a 500,
// is logged and its cause kept from the client.
func (s *Server) toolError(ctx context.Context, t catalogTool, err error) *mcp.CallToolResult {
	var e *op.Error
	var msg string
	switch {
	case errors.As(err, &e) && e.Kind == op.Invalid && len(e.Params) > 0:
		var parts []string
		for _, p := range e.Params {
			parts = append(parts, p.Parameter+": "+p.Detail)
		}
		if len(parts) == 1 {
			msg = "invalid argument " + parts[0]
		} else {
			msg = "invalid arguments: " + strings.Join(parts, "; ")
		}
	case e != nil && e.Kind == op.NotFound:
		msg = e.Detail + t.notFound
	case e != nil:
		msg = e.Detail
	case errors.Is(err, store.ErrDamaged):
		s.log.ErrorContext(ctx, "catalogue file damaged", slog.String("tool", t.tool.Name), slog.Any("error", err))
		msg = damagedDetail
	default:
		s.log.ErrorContext(ctx, "MCP tool call failed", slog.String("tool", t.tool.Name), slog.Any("error", err))
		msg = "the server could not answer; the error was logged"
	}
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}}
}

// toolArgs are the arguments of a call as the values of op.Params, and
// what was wrong with their JSON.
type toolArgs struct {
	values map[string][]string
	errs   []op.ParamError
}

func (a *toolArgs) fail(name, format string, args ...any) {
	a.errs = append(a.errs, op.ParamError{Parameter: name, Detail: fmt.Sprintf(format, args...)})
}

// maxUnknownArgs is how many undeclared arguments of one call are named:
// enough to show a client its mistake, not one problem per member of a
// body made of them.
const maxUnknownArgs = 10

// errArgumentsNotObject is the error of a call whose arguments are not a
// JSON object.
var errArgumentsNotObject = &op.Error{Kind: op.Invalid, Detail: "the arguments must be a JSON object of named arguments"}

// decodeToolArgs decodes the JSON arguments of a call into the parameters
// an operation reads, each as the text its REST parameter would carry, so
// that one rule judges both. What JSON adds is checked here: each argument
// the input schema declares must have the declared JSON type (a number is
// kept as written, so that the operation judges 1.0 or -1; an array gives
// one value per string, as a repeated query parameter does), and be given
// once; null counts as absent, as clients send it for an argument they
// leave out, declared or not. An argument the schema does not declare is
// refused, naming those it does: where REST ignores an unknown query
// parameter, an agent that guessed a name (setCode for set) would
// otherwise take the answer without its filter for the answer it asked
// for.
func decodeToolArgs(raw json.RawMessage, input *jsonschema.Schema) (toolArgs, error) {
	a := toolArgs{values: map[string][]string{}}
	var args map[string]json.RawMessage
	var given map[string]int
	if raw := bytes.TrimSpace(raw); len(raw) > 0 && !bytes.Equal(raw, []byte("null")) {
		if raw[0] != '{' || json.Unmarshal(raw, &args) != nil {
			return a, errArgumentsNotObject
		}
		given = memberCounts(raw)
	}
	for _, name := range input.PropertyOrder {
		if n := given[name]; n > 1 {
			a.fail(name, "given %d times; give it once", n)
			continue
		}
		v := bytes.TrimSpace(args[name])
		if len(v) == 0 || bytes.Equal(v, []byte("null")) {
			continue
		}
		prop := input.Properties[name]
		switch {
		case prop.Type == "integer" && isJSONNumber(v):
			a.values[name] = []string{string(v)}
		case prop.Type == "string" && v[0] == '"':
			var str string
			if err := jsonText(v, &str); err != nil {
				a.fail(name, "must be a string")
				continue
			}
			a.values[name] = []string{str}
		case prop.Type == "array" && v[0] == '[':
			strs, err := stringArray(v)
			if err != nil {
				a.fail(name, "must be an array of strings, %v", err)
				continue
			}
			a.values[name] = strs
		case prop.Type == "boolean" && (string(v) == "true" || string(v) == "false"):
			a.values[name] = []string{string(v)}
		case prop.Type == "boolean":
			a.fail(name, "must be true or false, got %s", jsonKind(v))
		case prop.Type == "integer":
			a.fail(name, "must be an integer from %s to %s, got %s", schemaNumber(prop.Minimum), schemaNumber(prop.Maximum), jsonKind(v))
		case prop.Type == "array":
			a.fail(name, "must be an array of strings, got %s", jsonKind(v))
		default:
			a.fail(name, "must be a string, got %s", jsonKind(v))
		}
	}
	var unknown []string
	for name, v := range args {
		if _, ok := input.Properties[name]; !ok && !bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
			unknown = append(unknown, name)
		}
	}
	slices.Sort(unknown)
	for i, name := range unknown[:min(len(unknown), maxUnknownArgs)] {
		more := ""
		if i == maxUnknownArgs-1 && len(unknown) > maxUnknownArgs {
			more = fmt.Sprintf(" (and %d more arguments it does not take were given)", len(unknown)-maxUnknownArgs)
		}
		a.fail(name, "is not an argument of this tool, which takes %s%s", strings.Join(input.PropertyOrder, ", "), more)
	}
	return a, nil
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

// stringArray decodes a JSON array of strings; a null in it is an empty
// string, which the operation then refuses by its position. The error
// names the first value that is not a string.
func stringArray(v []byte) ([]string, error) {
	var raw []json.RawMessage
	if err := json.Unmarshal(v, &raw); err != nil {
		return nil, err
	}
	strs := make([]string, len(raw))
	for i, r := range raw {
		if string(r) == "null" {
			continue
		}
		if r[0] != '"' || jsonText(r, &strs[i]) != nil {
			return nil, fmt.Errorf("got %s as value %d of %d", jsonKind(r), i+1, len(raw))
		}
	}
	return strs, nil
}

// jsonText decodes the JSON string raw into s as encoding/json does, but
// for a text that is not valid UTF-8 (a bad byte, an escaped lone
// surrogate), which encoding/json turns into U+FFFD and so into a valid
// string: s is then itself invalid, for the operation to refuse with the
// message it gives such a value in a query.
func jsonText(raw []byte, s *string) error {
	if err := json.Unmarshal(raw, s); err != nil {
		return err
	}
	if !utf8.Valid(raw) || hasLoneSurrogate(raw) {
		*s = "\xff"
	}
	return nil
}

// hasLoneSurrogate reports whether the JSON string raw escapes half of a
// UTF-16 surrogate pair without the other half (\ud800 alone).
func hasLoneSurrogate(raw []byte) bool {
	surrogate := func(i int) (r rune, ok bool) { // the \u escape at raw[i:]
		if i+6 > len(raw) || raw[i] != '\\' || raw[i+1] != 'u' {
			return 0, false
		}
		n, err := strconv.ParseUint(string(raw[i+2:i+6]), 16, 16)
		return rune(n), err == nil && utf16.IsSurrogate(rune(n))
	}
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' {
			continue
		}
		r, ok := surrogate(i)
		switch {
		case !ok:
			i++ // an escape of one character, or a \u of another: skip its letter
		case r >= 0xdc00: // a second half first
			return true
		default:
			second, ok := surrogate(i + 6)
			if !ok || second < 0xdc00 {
				return true
			}
			i += 11
		}
	}
	return false
}

// jsonKind names a JSON value that has the wrong type, with the value when
// it is short.
func jsonKind(v []byte) string {
	switch v[0] {
	case '"':
		var s string
		if json.Unmarshal(v, &s) == nil {
			return "the string " + catalog.Quote(s)
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
