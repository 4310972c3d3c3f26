package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/catalogd/catalogd/server/op"
	"golang.org/x/time/rate"
)

// RateLimit is the optional per-client request budget: a token bucket of
// Burst requests refilled at PerSecond. The zero value is off.
type RateLimit struct {
	PerSecond float64
	Burst     int
}

// On reports whether the limit applies.
func (l RateLimit) On() bool { return l.PerSecond > 0 }

// sweepEvery is how often buckets that have refilled are forgotten: a full
// bucket is the same as a new one, so forgetting it changes no answer and
// bounds memory by the clients active in the last minute or so.
const sweepEvery = time.Minute

// limiters holds one token bucket per client id.
type limiters struct {
	limit RateLimit
	// policy is the RateLimit-Policy value: the quota and its window.
	policy string

	mu        sync.Mutex
	byClient  map[string]*rate.Limiter
	lastSweep time.Time
}

func newLimiters(l RateLimit) *limiters {
	window := math.Ceil(float64(l.Burst) / l.PerSecond)
	return &limiters{
		limit:    l,
		policy:   strconv.Itoa(l.Burst) + ";w=" + strconv.FormatFloat(window, 'f', -1, 64),
		byClient: make(map[string]*rate.Limiter),
	}
}

func (ls *limiters) get(clientID string, now time.Time) *rate.Limiter {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if now.Sub(ls.lastSweep) >= sweepEvery {
		for id, lim := range ls.byClient {
			if lim.TokensAt(now) >= float64(ls.limit.Burst) {
				delete(ls.byClient, id)
			}
		}
		ls.lastSweep = now
	}
	lim := ls.byClient[clientID]
	if lim == nil {
		lim = rate.NewLimiter(rate.Limit(ls.limit.PerSecond), ls.limit.Burst)
		ls.byClient[clientID] = lim
	}
	return lim
}

// allow takes a request that costs cost from the client's budget and sets the RateLimit
// headers (draft-ietf-httpapi-ratelimit-headers): the quota, what is left
// and when it is whole again. When the budget is spent it answers 429 with
// Retry-After and reports false.
func (ls *limiters) allow(w http.ResponseWriter, clientID string, cost int) bool {
	now := time.Now()
	lim := ls.get(clientID, now)
	h := w.Header()
	h.Set("RateLimit-Policy", ls.policy)
	h.Set("RateLimit-Limit", strconv.Itoa(ls.limit.Burst))
	res := lim.ReserveN(now, min(cost, ls.limit.Burst))
	delay := res.DelayFrom(now)
	if delay > 0 {
		res.CancelAt(now)
	}
	// Reset is when the bucket is full again (docs/CONTRACT.md, Rate
	// limits), on a 429 too; Retry-After is when this request would fit.
	left := lim.TokensAt(now)
	full := (float64(ls.limit.Burst) - left) / ls.limit.PerSecond
	h.Set("RateLimit-Reset", strconv.FormatInt(ceilSeconds(time.Duration(full*float64(time.Second))), 10))
	if delay > 0 {
		retry := strconv.FormatInt(ceilSeconds(delay), 10)
		h.Set("RateLimit-Remaining", "0")
		h.Set("Retry-After", retry)
		writeProblem(w, http.StatusTooManyRequests, fmt.Sprintf(
			"client %q is over its limit of %s requests per second (bursts of %d); retry after %s s",
			clientID, strconv.FormatFloat(ls.limit.PerSecond, 'f', -1, 64), ls.limit.Burst, retry))
		return false
	}
	h.Set("RateLimit-Remaining", strconv.Itoa(int(math.Max(0, math.Floor(left)))))
	return true
}

func ceilSeconds(d time.Duration) int64 {
	return int64(math.Ceil(d.Seconds()))
}

// requestCost is what a request to the route named name takes from its
// client's budget: one request, but for getCards and the MCP tool
// get_cards, whose answers cost a lookup per id (idsCost).
func requestCost(name string) func(*http.Request) int {
	switch name {
	case "getCards":
		return queryIDsCost
	case "mcp":
		return mcpCost
	}
	return nil
}

// idsCost is what a request of n ids costs: 1, and 1 more for each 5 ids
// (docs/CONTRACT.md, Rate limits), so 100 ids cost 21: the server spends
// on a hundred lookups about what it spends on twenty requests of one
// card over HTTP (docs/BENCHMARKS.md, Lookups). Past op.MaxIDs the
// request is refused, and costs what op.MaxIDs ids do.
func idsCost(n int) int { return 1 + min(n, op.MaxIDs)/5 }

// queryIDsCost is what a getCards request costs, its ids counted as the
// query names them, encoded or not.
func queryIDsCost(r *http.Request) int {
	n := 0
	for q := r.URL.RawQuery; q != "" && n < op.MaxIDs; {
		var param string
		param, q, _ = strings.Cut(q, "&")
		key, _, _ := strings.Cut(param, "=")
		if key == "id" || strings.Contains(key, "%") && unescapedIs(key, "id") {
			n++
		}
	}
	return idsCost(n)
}

// mcpCost is what a request to the MCP endpoint costs: a call of the tool
// get_cards what getCards of as many ids does, anything else 1. It reads
// the body (at most one byte past what the endpoint takes, mcpMaxBody)
// and puts back what it read, for the SDK to read again.
func mcpCost(r *http.Request) int {
	if r.Body == nil || r.Body == http.NoBody {
		return 1
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, mcpMaxBody+1))
	r.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(b), r.Body), r.Body}
	if err != nil || len(b) > mcpMaxBody {
		return 1 // the SDK refuses it
	}
	var call struct {
		Method string `json:"method"`
		Params struct {
			Name      string `json:"name"`
			Arguments struct {
				ID []json.RawMessage `json:"id"`
			} `json:"arguments"`
		} `json:"params"`
	}
	if json.Unmarshal(b, &call) != nil || call.Method != "tools/call" || call.Params.Name != "get_cards" {
		return 1
	}
	return idsCost(len(call.Params.Arguments.ID))
}

func unescapedIs(key, name string) bool {
	k, err := url.QueryUnescape(key)
	return err == nil && k == name
}
