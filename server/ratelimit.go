package server

import (
	"fmt"
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
	retry, ok := ls.take(w.Header(), clientID, cost)
	if !ok {
		w.Header().Set("Retry-After", strconv.FormatInt(retry, 10))
		writeProblem(w, http.StatusTooManyRequests, ls.overLimit(clientID, retry))
	}
	return ok
}

// take takes cost from the client's budget, at most the burst, and sets
// the RateLimit headers in h. When the budget is short it takes nothing
// and reports in how many seconds the request would fit.
func (ls *limiters) take(h http.Header, clientID string, cost int) (retry int64, ok bool) {
	now := time.Now()
	lim := ls.get(clientID, now)
	h.Set("RateLimit-Policy", ls.policy)
	h.Set("RateLimit-Limit", strconv.Itoa(ls.limit.Burst))
	res := lim.ReserveN(now, min(cost, ls.limit.Burst))
	delay := res.DelayFrom(now)
	if delay > 0 {
		res.CancelAt(now)
	}
	// Reset is when the bucket is full again (docs/CONTRACT.md, Rate
	// limits), when the request is refused too.
	left := lim.TokensAt(now)
	full := (float64(ls.limit.Burst) - left) / ls.limit.PerSecond
	h.Set("RateLimit-Reset", strconv.FormatInt(ceilSeconds(time.Duration(full*float64(time.Second))), 10))
	if delay > 0 {
		h.Set("RateLimit-Remaining", "0")
		return ceilSeconds(delay), false
	}
	h.Set("RateLimit-Remaining", strconv.Itoa(int(math.Max(0, math.Floor(left)))))
	return 0, true
}

// overLimit is the detail of a request refused for the client's budget.
func (ls *limiters) overLimit(clientID string, retry int64) string {
	return fmt.Sprintf("client %q is over its limit of %s requests per second (bursts of %d); retry after %d s",
		clientID, strconv.FormatFloat(ls.limit.PerSecond, 'f', -1, 64), ls.limit.Burst, retry)
}

func ceilSeconds(d time.Duration) int64 {
	return int64(math.Ceil(d.Seconds()))
}

// requestCost is what a request to the route named name takes from its
// client's budget: one request, but for getCards, whose answer costs a
// lookup per id (idsCost). A call of the MCP tool get_cards takes the
// rest of its price when it runs (Server.chargeTool).
func requestCost(name string) func(*http.Request) int {
	if name == "getCards" {
		return queryIDsCost
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

func unescapedIs(key, name string) bool {
	k, err := url.QueryUnescape(key)
	return err == nil && k == name
}
