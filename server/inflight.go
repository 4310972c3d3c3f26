package server

import (
	"fmt"
	"net/http"
	"sync"
)

// DefaultMaxClientRequests is the requests one client may have in flight
// when Config leaves MaxClientRequests 0.
const DefaultMaxClientRequests = 64

// clientRequests caps the requests each client (a token's client id) has
// in flight, whatever the connections and HTTP/2 streams it spreads them
// over: a request holds its answer until the client has read it, and a
// client that reads slowly, or not at all, would otherwise hold as many
// answers as it can open streams (docs/OPERATIONS.md, A fair share per
// client).
type clientRequests struct {
	max int
	mu  sync.Mutex
	n   map[string]int // requests in flight, for clients with any
}

func newClientRequests(max int) *clientRequests {
	return &clientRequests{max: max, n: make(map[string]int)}
}

// acquire counts a request of client in flight, or, when the client has
// as many as it may, answers 429 with Retry-After and reports false. A
// request acquired is released once answered.
func (c *clientRequests) acquire(w http.ResponseWriter, client string) bool {
	c.mu.Lock()
	n := c.n[client]
	if n < c.max {
		c.n[client] = n + 1
	}
	c.mu.Unlock()
	if n < c.max {
		return true
	}
	w.Header().Set("Retry-After", "1")
	writeProblem(w, http.StatusTooManyRequests, fmt.Sprintf(
		"client %q has %d requests in flight, the most one client may have at once; retry when one has been answered", client, c.max))
	return false
}

func (c *clientRequests) release(client string) {
	c.mu.Lock()
	if n := c.n[client] - 1; n > 0 {
		c.n[client] = n
	} else {
		delete(c.n, client)
	}
	c.mu.Unlock()
}
