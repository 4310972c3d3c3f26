package server

import (
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/catalogd/catalogd/server/auth"
	"github.com/golang-jwt/jwt/v5"
)

// These benchmarks price a whole authenticated GET of one card through the
// real handler, in process: routing, bearer verification, the catalogue
// read and the JSON answer, with httptest.NewRecorder as the client.

// BenchmarkGetCardAuthCached is a partner reusing its token, the common
// case: after the first call the verification comes from the token cache.
func BenchmarkGetCardAuthCached(b *testing.B) {
	key := rsaSigningKey(b, "rsa-1", 0)
	s := newAuthServer(b, newOIDCIdP(b, key), nil)
	req := httptest.NewRequest(http.MethodGet, s.base+bearerCardPath, nil)
	req.Header.Set("Authorization", "Bearer "+key.sign(b, s.claims()))
	serveCard(b, s.srv, req) // the first call verifies and fills the cache

	b.ReportAllocs()
	for b.Loop() {
		serveCard(b, s.srv, req)
	}
}

// BenchmarkGetCardAuthUncached is every call paying for a full RS256
// verification, as a token seen for the first time does.
//
// The token cache holds 10,000 entries and frees a random tenth when full,
// so a round-robin pool larger than that would still hit most of the time,
// and one token per iteration would mean signing b.N tokens up front. The
// cache instead trusts an entry for five minutes at most, measured on
// Config.Now: the benchmark's clock jumps past that window after each pass
// over the pool, so every lookup finds a stale entry and verifies again,
// while the tokens (valid for a month) stay valid. Every iteration is a
// miss, and the cache never fills, so no eviction is timed either.
func BenchmarkGetCardAuthUncached(b *testing.B) {
	const pool = 4096
	var skew atomic.Int64 // nanoseconds added to the real time
	now := func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }
	key := rsaSigningKey(b, "rsa-1", 0)
	s := newAuthServer(b, newOIDCIdP(b, key), func(c *auth.Config) { c.Now = now })

	headers := make([][]string, pool)
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, runtime.GOMAXPROCS(0))
	for range cap(errs) {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= pool {
					return
				}
				c := s.claims()
				c["exp"] = time.Now().Add(30 * 24 * time.Hour).Unix()
				tok := jwt.NewWithClaims(key.method, c)
				tok.Header["kid"] = key.kid
				signed, err := tok.SignedString(key.priv)
				if err != nil {
					errs <- err
					return
				}
				headers[i] = []string{"Bearer " + signed}
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		b.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodGet, s.base+bearerCardPath, nil)

	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if i == pool {
			i = 0
			skew.Add(int64(6 * time.Minute))
		}
		req.Header["Authorization"] = headers[i]
		i++
		serveCard(b, s.srv, req)
	}
}

func serveCard(b *testing.B, srv *Server, req *http.Request) {
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		b.Fatalf("status %d: %s %s", rec.Code, rec.Header().Get("WWW-Authenticate"), rec.Body)
	}
}
