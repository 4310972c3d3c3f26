package server

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/julienschmidt/httprouter"
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
