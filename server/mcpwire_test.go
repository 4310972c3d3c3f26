package server

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/catalogd/catalogd/catalog"
	"github.com/catalogd/catalogd/catalog/store"
	"github.com/catalogd/catalogd/server/op"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMCPBatchIsOneRequestAtATime: the calls of a JSON-RPC batch (protocol
// 2025-03-26) run one after another, as one request in flight, and each
// after the first pays its own price; a batch holds at most mcpMaxBatch
// calls, whose answers the SDK holds together.
func TestMCPBatchIsOneRequestAtATime(t *testing.T) {
	f := newFixtureWith(t, func(c *Config) {
		c.MaxClientRequests = 2
		c.RateLimit = RateLimit{PerSecond: 0.001, Burst: 1000} // no refill within the test
	})
	var mu sync.Mutex
	running, most := 0, 0
	// A tool of the catalogue's kind, through the handler every tool has.
	probe := catalogTool{tool: &mcp.Tool{Name: "probe", InputSchema: objectSchema(nil)}, answer: func(toolArgs, *store.DB) ([]byte, string, error) {
		mu.Lock()
		running++
		most = max(most, running)
		mu.Unlock()
		// Long enough for the batch's other calls to start, were they
		// allowed to: the test counts them, it does not time them.
		time.Sleep(10 * time.Millisecond)
		mu.Lock()
		running--
		mu.Unlock()
		return []byte(`{}`), "ok", nil
	}}
	f.srv.mcp.AddTool(probe.tool, f.srv.toolHandler(probe))
	batchThen := func(tool, args string, n int, after string) *response {
		var calls []string
		for i := range n {
			calls = append(calls, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, i, tool, args))
		}
		return f.mcpSend(t, http.MethodPost, "["+strings.Join(calls, ",")+"]"+after, "2025-03-26", "Bearer "+f.token, "")
	}
	batch := func(tool, args string, n int) *response { return batchThen(tool, args, n, "") }

	r := batch("probe", "{}", mcpMaxBatch)
	r.wantStatus(t, http.StatusOK)
	var answers []json.RawMessage
	if err := json.Unmarshal(r.body, &answers); err != nil || len(answers) != mcpMaxBatch {
		t.Fatalf("a batch of %d calls: %d answers (%v): %.200s", mcpMaxBatch, len(answers), err, r.body)
	}
	if most != 1 {
		t.Errorf("the calls of one batch ran %d at once, want 1", most)
	}
	if got, want := r.header.Get("RateLimit-Remaining"), fmt.Sprint(1000-mcpMaxBatch); got != want {
		t.Errorf("a batch of %d calls left RateLimit-Remaining %s of 1000, want %s", mcpMaxBatch, got, want)
	}

	// get_cards pays for its ids in a batch as alone: 1 + 10/5 each.
	ids := `{"id":["intl-base1-1","intl-base1-2","intl-base1-3","intl-base1-4","intl-base1-5","intl-base1-6","intl-base1-7","intl-base1-8","intl-base1-9","intl-base1-10"]}`
	r = batch("get_cards", ids, mcpMaxBatch)
	r.wantStatus(t, http.StatusOK)
	if got, want := r.header.Get("RateLimit-Remaining"), fmt.Sprint(1000-4*mcpMaxBatch); got != want {
		t.Errorf("a batch of %d get_cards of 10 ids left RateLimit-Remaining %s, want %s (3 each)", mcpMaxBatch, got, want)
	}

	// One call more is refused whole, before any runs.
	r = batch("get_cards", ids, mcpMaxBatch+1)
	r.wantStatus(t, http.StatusBadRequest)
	if !strings.Contains(string(r.body), fmt.Sprintf("at most %d", mcpMaxBatch)) {
		t.Errorf("a batch of %d calls: %s", mcpMaxBatch+1, r.body)
	}
	// Bytes after a batch, which the SDK would ignore, do not hide it
	// from the count: the body is refused, whatever the batch's size.
	for _, after := range []string{" x", "]", "}", "\n{}"} {
		for _, n := range []int{1, 50} {
			r = batchThen("list_sets", "{}", n, after)
			r.wantStatus(t, http.StatusBadRequest)
			if !strings.Contains(string(r.body), "not one JSON-RPC batch and nothing else") {
				t.Errorf("a batch of %d calls and %q: %s", n, after, r.body)
			}
		}
	}
}

func TestHasLoneSurrogate(t *testing.T) {
	for raw, want := range map[string]bool{
		`"pikachu"`:            false,
		`"\u00e9\u0041"`:       false,
		`"\ud83d\ude00"`:       false, // a pair: 😀
		`"\\ud800"`:            false, // an escaped backslash, then text
		`"\"\ud83d\ude00\\"`:   false,
		`"\ud800"`:             true,
		`"\ud800x"`:            true,
		`"\ude00\ud83d"`:       true, // the halves the wrong way round
		`"\ud83d\u0041"`:       true,
		`"a\ud83d"`:            true,
		`"\\\ud800"`:           true,
		`"\ud83d\ude00\udc00"`: true,
	} {
		if got := hasLoneSurrogate([]byte(raw)); got != want {
			t.Errorf("hasLoneSurrogate(%s) = %v, want %v", raw, got, want)
		}
	}
}

// TestMCPTakesTheLargestCall: get_cards of a hundred ids of the longest
// length, every character escaped as a surrogate pair, is a call the
// contract allows, and is answered, not refused for its size.
func TestMCPTakesTheLargestCall(t *testing.T) {
	f := newFixture(t)
	ids := make([]string, op.MaxIDs)
	for i := range ids {
		ids[i] = `"` + strings.Repeat(`\ud83d\ude00`, catalog.MaxKeyLength-3) + fmt.Sprintf("%03d", i) + `"`
	}
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_cards","arguments":{"id":[` + strings.Join(ids, ",") + `]}}}`
	if len(body) < 290<<10 {
		t.Fatalf("a body of %d bytes does not test the largest call", len(body))
	}
	r := f.mcpSend(t, http.MethodPost, body, mcpProtocol, "Bearer "+f.token, "")
	r.wantStatus(t, http.StatusOK)
	var answer struct {
		Result struct {
			IsError           bool
			StructuredContent struct{ NotFound []string }
		}
	}
	if err := json.Unmarshal(r.body, &answer); err != nil || answer.Result.IsError || len(answer.Result.StructuredContent.NotFound) != op.MaxIDs {
		t.Errorf("the largest call: %v, isError %v, %d ids not found (want %d): %.300s", err, answer.Result.IsError, len(answer.Result.StructuredContent.NotFound), op.MaxIDs, r.body)
	}
	// A body over the limit is refused before anything reads it as JSON.
	over := f.mcpSend(t, http.MethodPost, body+strings.Repeat(" ", mcpMaxBody), mcpProtocol, "Bearer "+f.token, "")
	over.wantStatus(t, http.StatusRequestEntityTooLarge)
}

// TestMCPInstructionsNameEveryTool: the instructions an agent reads first
// say what each tool the server lists is for.
func TestMCPInstructionsNameEveryTool(t *testing.T) {
	cs := newFixture(t).mcp(t, "")
	instructions := cs.InitializeResult().Instructions
	n := 0
	for tool, err := range cs.Tools(t.Context(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		if n++; !strings.Contains(instructions, tool.Name+" ") {
			t.Errorf("the instructions do not name %s: %s", tool.Name, instructions)
		}
	}
	if n == 0 {
		t.Fatal("no tools listed")
	}
}

// TestMCPBodyTooLargeOrTooSlow: a body declared over the limit is refused
// before any of it is sent, so a client waiting on Expect: 100-continue
// uploads nothing; a body that stops arriving is a 408, which a client or
// proxy may send again, not a 400.
func TestMCPBodyTooLargeOrTooSlow(t *testing.T) {
	f := newFixture(t)
	slow := httptest.NewUnstartedServer(f.srv)
	slow.Config.ReadTimeout = 300 * time.Millisecond
	slow.Start()
	t.Cleanup(slow.Close)
	base, err := url.Parse(f.base)
	if err != nil {
		t.Fatal(err)
	}
	send := func(addr, head string) *http.Response {
		t.Helper()
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		fmt.Fprintf(conn, "POST %s/mcp HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n%s",
			base.Path, base.Host, f.token, head)
		conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	if resp := send(base.Host, fmt.Sprintf("Content-Length: %d\r\nExpect: 100-continue\r\n\r\n", mcpMaxBody+1)); resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("a body declared over the limit, with Expect: 100-continue: %d, want 413 before the body", resp.StatusCode)
	}
	if resp := send(slow.Listener.Addr().String(), "Content-Length: 100\r\n\r\n{\"jsonrpc\""); resp.StatusCode != http.StatusRequestTimeout {
		t.Errorf("a body that stopped arriving: %d, want 408", resp.StatusCode)
	}
}
