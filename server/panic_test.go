package server

import (
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/julienschmidt/httprouter"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestPanicIsA500: a handler that panics answers a 500 problem that tells
// the client nothing internal, the panic is logged, and the access log
// still has the request's line under its route, with the 500.
func TestPanicIsA500(t *testing.T) {
	f, logs := logFixture(t)
	rt := f.srv.route("boom", false, func(http.ResponseWriter, *http.Request, httprouter.Params) { panic("boom") })
	w := httptest.NewRecorder()
	rt.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/boom", nil))
	if got, want := w.Code, http.StatusInternalServerError; got != want {
		t.Fatalf("status %d, want %d", got, want)
	}
	if ct := w.Header().Get("Content-Type"); ct != "application/problem+json" || strings.Contains(w.Body.String(), "boom") {
		t.Errorf("Content-Type %q, body %s", ct, w.Body)
	}
	if !strings.Contains(logs.String(), `"panic":"boom"`) {
		t.Errorf("the panic was not logged: %s", logs)
	}
	lines := accessLines(t, logs)
	if len(lines) != 1 || lines[0]["route"] != "boom" || lines[0]["status"] != float64(500) {
		t.Fatalf("access log %v, want one line of route boom with status 500", lines)
	}
}

// TestPanicAfterTheAnswerBegan: a handler that panics once its answer has
// begun is cut short, not given a problem appended to its bytes; the
// access log has the request with the status sent and the error.
func TestPanicAfterTheAnswerBegan(t *testing.T) {
	f, logs := logFixture(t)
	rt := f.srv.route("half", false, func(w http.ResponseWriter, _ *http.Request, _ httprouter.Params) {
		w.Write([]byte(`{"data":[`))
		w.(http.Flusher).Flush()
		panic("boom")
	})
	ts := httptest.NewUnstartedServer(rt)
	ts.Config.ErrorLog = log.New(io.Discard, "", 0)
	ts.Start()
	defer ts.Close()
	res, err := http.Get(ts.URL + "/half")
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err == nil || strings.Contains(string(body), "problem") || strings.Contains(string(body), "could not answer") {
		t.Fatalf("status %d, body %q, read error %v; want the answer cut short", res.StatusCode, body, err)
	}
	if !strings.Contains(logs.String(), `"panic":"boom"`) {
		t.Errorf("the panic was not logged: %s", logs)
	}
	lines := accessLines(t, logs)
	if len(lines) != 1 || lines[0]["status"] != float64(200) || !strings.Contains(fmt.Sprint(lines[0]["error"]), "cut short") {
		t.Fatalf("access log %v, want one line with status 200 and the error", lines)
	}
}

// TestAbortBeforeTheAnswer: a handler that aborts (http.ErrAbortHandler)
// before a byte of its answer closes the connection, is recorded as the
// failure it is, and is not logged as a panic.
func TestAbortBeforeTheAnswer(t *testing.T) {
	f, logs := logFixture(t)
	rt := f.srv.route("abort", false, func(http.ResponseWriter, *http.Request, httprouter.Params) { panic(http.ErrAbortHandler) })
	ts := httptest.NewUnstartedServer(rt)
	ts.Config.ErrorLog = log.New(io.Discard, "", 0)
	ts.Start()
	defer ts.Close()
	if res, err := http.Get(ts.URL + "/abort"); err == nil {
		res.Body.Close()
		t.Fatalf("status %d, want the connection closed", res.StatusCode)
	}
	if strings.Contains(logs.String(), "panic serving request") {
		t.Errorf("an abort was logged as a panic: %s", logs)
	}
	lines := accessLines(t, logs)
	if len(lines) != 1 || lines[0]["status"] != float64(500) || !strings.Contains(fmt.Sprint(lines[0]["error"]), "cut short") {
		t.Fatalf("access log %v, want one line with status 500 and the error", lines)
	}
}

// TestACatalogueCutShortUnderServe cuts the served file short in place,
// as a cp or truncate over it does: every route and tool still answers,
// with a 500 where it reads what is gone, and the process goes on (a read
// of the map past the file's end is SIGBUS, which would end it).
func TestACatalogueCutShortUnderServe(t *testing.T) {
	b, err := os.ReadFile(sampleCatalogue(t))
	if err != nil {
		t.Fatal(err)
	}
	targets := []string{"/catalog/sets", "/catalog/sets/SV1a/cards", "/catalog/cards/jp-SV1a-001", "/catalog/cards?id=jp-SV1a-001&id=intl-base1-4",
		"/catalog/sets/SV2a/cards/025", "/catalog/search?q=pikachu", "/catalog/search?q=pikachuu&fuzzy=true", "/catalog/autocomplete?q=pik", "/catalog/export"}
	// An eighth left, and nothing, as a cp over the file leaves it first.
	for _, size := range []int{len(b) / 8, 0} {
		t.Run(fmt.Sprintf("%d-bytes", size), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "catalog.db")
			if err := os.WriteFile(path, b, 0o600); err != nil {
				t.Fatal(err)
			}
			f := newFixtureAt(t, path, nil)
			for _, target := range targets {
				f.raw(target).wantStatus(t, http.StatusOK)
			}
			if err := os.Truncate(path, int64(size)); err != nil {
				t.Fatal(err)
			}
			for range 2 { // the second round after the first's faults
				for _, target := range targets {
					if r := f.raw(target); r.status != http.StatusOK && r.status != http.StatusInternalServerError {
						t.Errorf("%s of a file cut short: %d, want 200 or 500", target, r.status)
					}
				}
				// Compressed: the list of sets is compressed from the file's
				// bytes, and a range of the export measures its chunks first.
				for _, target := range []string{"/catalog/sets", "/catalog/export"} {
					r := f.raw(target, "Accept-Encoding", "gzip", "Range", "bytes=10-20")
					if r.status != http.StatusOK && r.status != http.StatusPartialContent && r.status != http.StatusInternalServerError {
						t.Errorf("%s of a file cut short, compressed: %d", target, r.status)
					}
					if r.status == http.StatusOK && r.header.Get("Content-Encoding") == "gzip" && len(r.body) == 0 {
						t.Errorf("%s of a file cut short: a compressed 200 with no body", target)
					}
				}
			}
			cs := f.mcp(t, "")
			for name, args := range map[string]map[string]any{"list_sets": {}, "search_cards": {"q": "pikachu"}, "get_card": {"cardId": "jp-SV1a-001"}} {
				if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args}); err != nil {
					t.Errorf("%s of a file cut short: %v", name, err)
				}
			}
		})
	}
}
