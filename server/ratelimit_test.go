package server

import (
	"math"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// clientToken is a valid token of the fixture's IdP for another client.
func clientToken(t *testing.T, f *fixture, clientID string) string {
	t.Helper()
	now := time.Now()
	return f.idp.sign(t, jwt.MapClaims{
		"iss": f.idp.URL, "aud": []string{f.base + "/mcp"}, "sub": clientID, "azp": clientID,
		"scope": "catalog:read", "iat": now.Unix(), "exp": now.Add(time.Hour).Unix(),
	})
}

func rateLimitedFixture(t *testing.T, l RateLimit) *fixture {
	return newFixtureWith(t, func(c *Config) { c.RateLimit = l })
}

func TestRateLimitHeadersAnd429(t *testing.T) {
	// A rate so slow that no token comes back during the test.
	f := rateLimitedFixture(t, RateLimit{PerSecond: 0.01, Burst: 3})
	for i := range 3 {
		r := f.get("/catalog/cards/jp-SV1a-001")
		r.wantStatus(t, http.StatusOK)
		if got, want := r.header.Get("RateLimit-Remaining"), strconv.Itoa(2-i); got != want {
			t.Errorf("request %d: RateLimit-Remaining %q, want %s", i+1, got, want)
		}
		if r.header.Get("RateLimit-Limit") != "3" || r.header.Get("RateLimit-Policy") != "3;w=300" {
			t.Errorf("request %d: RateLimit-Limit %q, RateLimit-Policy %q", i+1, r.header.Get("RateLimit-Limit"), r.header.Get("RateLimit-Policy"))
		}
		if reset, err := strconv.Atoi(r.header.Get("RateLimit-Reset")); err != nil || reset < 1 || reset > 300 {
			t.Errorf("request %d: RateLimit-Reset %q", i+1, r.header.Get("RateLimit-Reset"))
		}
	}
	r := f.get("/catalog/cards/jp-SV1a-001")
	r.wantStatus(t, http.StatusTooManyRequests)
	if r.header.Get("Content-Type") != "application/problem+json" {
		t.Errorf("429 Content-Type %q", r.header.Get("Content-Type"))
	}
	var p problem
	r.json(t, &p)
	if p.Status != 429 || p.Title != "Too Many Requests" || p.Detail == "" {
		t.Errorf("429 body %+v", p)
	}
	retry, err := strconv.Atoi(r.header.Get("Retry-After"))
	// One request comes back every 100 s.
	if err != nil || retry < 90 || retry > 100 {
		t.Errorf("Retry-After %q, want about 100", r.header.Get("Retry-After"))
	}
	// Reset is when the bucket is full again, on a 429 as on a 200: the
	// three requests spent come back in 300 s.
	reset, err := strconv.Atoi(r.header.Get("RateLimit-Reset"))
	if r.header.Get("RateLimit-Remaining") != "0" || err != nil || reset < 290 || reset > 300 {
		t.Errorf("429 RateLimit-Remaining %q, RateLimit-Reset %q; want 0 and about 300", r.header.Get("RateLimit-Remaining"), r.header.Get("RateLimit-Reset"))
	}
	// Refused requests do not spend the budget: the next one is refused
	// for the same time, not longer.
	again := f.get("/catalog/sets")
	again.wantStatus(t, http.StatusTooManyRequests)
	if again.header.Get("Retry-After") != r.header.Get("Retry-After") {
		t.Errorf("a refused request pushed Retry-After from %s to %s", r.header.Get("Retry-After"), again.header.Get("Retry-After"))
	}
	// Authentication comes first: a request without a token is a 401 and
	// costs no client anything.
	f.do(http.MethodGet, "/catalog/sets", "Authorization", "").wantStatus(t, http.StatusUnauthorized)
}

func TestRateLimitIsolatesClients(t *testing.T) {
	f := rateLimitedFixture(t, RateLimit{PerSecond: 0.01, Burst: 5})
	greedy := f.token // partner-1
	// The greedy client spends its budget, from many connections at once.
	var wg sync.WaitGroup
	statuses := make(chan int, 40)
	for range 40 {
		wg.Go(func() {
			statuses <- f.do(http.MethodGet, "/catalog/sets", "Authorization", "Bearer "+greedy).status
		})
	}
	wg.Wait()
	close(statuses)
	counts := map[int]int{}
	for s := range statuses {
		counts[s]++
	}
	if counts[200] != 5 || counts[429] != 35 {
		t.Fatalf("40 concurrent requests of one client: %v, want 5 × 200 and 35 × 429", counts)
	}
	// Others are untouched: each has its whole budget.
	for _, client := range []string{"partner-2", "partner-3"} {
		tok := "Bearer " + clientToken(t, f, client)
		for i := range 5 {
			if r := f.do(http.MethodGet, "/catalog/sets", "Authorization", tok); r.status != http.StatusOK {
				t.Fatalf("%s request %d while partner-1 is limited: %d", client, i+1, r.status)
			}
		}
		f.do(http.MethodGet, "/catalog/sets", "Authorization", tok).wantStatus(t, http.StatusTooManyRequests)
	}
	f.do(http.MethodGet, "/catalog/sets", "Authorization", "Bearer "+greedy).wantStatus(t, http.StatusTooManyRequests)
}

func TestRateLimitRefills(t *testing.T) {
	f := rateLimitedFixture(t, RateLimit{PerSecond: 20, Burst: 1})
	f.get("/catalog/sets").wantStatus(t, http.StatusOK)
	if r := f.get("/catalog/sets"); r.status != http.StatusTooManyRequests || r.header.Get("Retry-After") != "1" {
		t.Fatalf("second request at once: %d, Retry-After %q", r.status, r.header.Get("Retry-After"))
	}
	deadline := time.Now().Add(5 * time.Second)
	for f.get("/catalog/sets").status != http.StatusOK {
		if time.Now().After(deadline) {
			t.Fatal("the budget never refilled")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestRateLimitOffByDefault(t *testing.T) {
	f := newFixture(t)
	for range 50 {
		r := f.get("/catalog/cards/jp-SV1a-001")
		r.wantStatus(t, http.StatusOK)
		if r.header.Get("RateLimit-Limit") != "" {
			t.Fatal("RateLimit headers without a rate limit")
		}
	}
}

func TestRateLimitConfig(t *testing.T) {
	f := newFixture(t)
	for _, l := range []RateLimit{{PerSecond: 10, Burst: 0}, {PerSecond: 10, Burst: -1}, {PerSecond: math.Inf(1), Burst: 1}} {
		if _, err := New(Config{Catalog: f.live, BaseURL: "http://127.0.0.1/api/v1", Auth: f.idp.verifier, RateLimit: l}); err == nil {
			t.Errorf("rate limit %+v accepted", l)
		}
	}
}

// TestRateLimitForgetsFullBuckets: a client whose bucket has refilled is
// forgotten at the next sweep, so that memory follows the active clients.
func TestRateLimitForgetsFullBuckets(t *testing.T) {
	ls := newLimiters(RateLimit{PerSecond: 10, Burst: 2})
	now := time.Now()
	ls.get("idle", now).AllowN(now, 1)
	ls.get("busy", now).AllowN(now, 2)
	later := now.Add(150 * time.Millisecond) // idle is full again, busy is not
	ls.lastSweep = later.Add(-sweepEvery)
	ls.get("new", later)
	if _, ok := ls.byClient["idle"]; ok {
		t.Error("a full bucket was kept")
	}
	if _, ok := ls.byClient["busy"]; !ok {
		t.Error("a bucket still refilling was forgotten")
	}
}
