package server

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// heldWriter is a client that reads nothing until released: the handler's
// first write blocks, so its request stays in flight.
type heldWriter struct {
	*httptest.ResponseRecorder
	writing chan struct{} // closed at the first write
	release chan struct{}
	once    sync.Once
}

func newHeldWriter() *heldWriter {
	return &heldWriter{ResponseRecorder: httptest.NewRecorder(), writing: make(chan struct{}), release: make(chan struct{})}
}

func (w *heldWriter) Write(b []byte) (int, error) {
	w.once.Do(func() { close(w.writing) })
	<-w.release
	return w.ResponseRecorder.Write(b)
}

// A client has at most MaxClientRequests requests in flight, however it
// sends them: one more is answered 429 with Retry-After and a problem that
// names the client and says it is its own limit; another client is served
// meanwhile; once an answer is read, the client may send one more.
func TestClientRequestsInFlight(t *testing.T) {
	const max = 3
	f := newFixtureWith(t, func(c *Config) { c.MaxClientRequests = max })
	get := func(w http.ResponseWriter, token string) {
		r := httptest.NewRequest(http.MethodGet, f.base+"/catalog/sets", nil)
		r.Header.Set("Authorization", token)
		f.srv.ServeHTTP(w, r)
	}
	mine := "Bearer " + f.token
	var held []*heldWriter
	var ended []chan struct{}
	for range max {
		w, end := newHeldWriter(), make(chan struct{})
		held, ended = append(held, w), append(ended, end)
		go func() { defer close(end); get(w, mine) }()
		<-w.writing
	}

	over := httptest.NewRecorder()
	get(over, mine)
	if over.Code != http.StatusTooManyRequests || over.Header().Get("Retry-After") != "1" {
		t.Fatalf("request %d of one client: status %d, Retry-After %q; want 429 and 1", max+1, over.Code, over.Header().Get("Retry-After"))
	}
	if ct := over.Header().Get("Content-Type"); ct != "application/problem+json" {
		t.Errorf("429 as %q, want a problem", ct)
	}
	if body := over.Body.String(); !strings.Contains(body, `client \"partner-1\" has 3 requests in flight, the most one client may have at once`) {
		t.Errorf("429 says %s; want the client and its limit named", body)
	}

	other := httptest.NewRecorder()
	get(other, "Bearer "+clientToken(t, f, "partner-2"))
	if other.Code != http.StatusOK {
		t.Errorf("another client meanwhile: status %d, want 200", other.Code)
	}

	// Once one answer is read, the client may send one more.
	close(held[0].release)
	<-ended[0]
	again := httptest.NewRecorder()
	get(again, mine)
	if again.Code != http.StatusOK {
		t.Errorf("after one answer was read: status %d, want 200", again.Code)
	}
	for i, w := range held {
		if i > 0 {
			close(w.release)
		}
		<-ended[i]
		if w.Code != http.StatusOK {
			t.Errorf("held request %d: status %d, want 200", i, w.Code)
		}
	}
}

// A request refused for the client's requests in flight takes nothing from
// its rate budget, and its 429 says nothing of that budget: a client that
// read RateLimit-Remaining there would retry at once.
func TestInFlightRefusalSpendsNoBudget(t *testing.T) {
	f := newFixtureWith(t, func(c *Config) {
		c.MaxClientRequests = 1
		c.RateLimit = RateLimit{PerSecond: 0.01, Burst: 5}
	})
	get := func(w http.ResponseWriter) {
		r := httptest.NewRequest(http.MethodGet, f.base+"/catalog/sets", nil)
		r.Header.Set("Authorization", "Bearer "+f.token)
		f.srv.ServeHTTP(w, r)
	}
	held, ended := newHeldWriter(), make(chan struct{})
	go func() { defer close(ended); get(held) }()
	<-held.writing
	for i := range 3 {
		over := httptest.NewRecorder()
		get(over)
		if over.Code != http.StatusTooManyRequests || !strings.Contains(over.Body.String(), "requests in flight") {
			t.Fatalf("refusal %d: status %d, %s; want the in-flight 429", i+1, over.Code, over.Body)
		}
		for _, name := range []string{"RateLimit-Remaining", "RateLimit-Limit", "RateLimit-Reset", "RateLimit-Policy"} {
			if v := over.Header().Get(name); v != "" {
				t.Errorf("refusal %d: %s %q on the in-flight 429", i+1, name, v)
			}
		}
	}
	close(held.release)
	<-ended
	// The held request took one of five; the refusals none.
	next := httptest.NewRecorder()
	get(next)
	if next.Code != http.StatusOK || next.Header().Get("RateLimit-Remaining") != "3" {
		t.Errorf("after the refusals: status %d, RateLimit-Remaining %q; want 200 and 3", next.Code, next.Header().Get("RateLimit-Remaining"))
	}
}
