package server

import (
	"crypto/rand"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/MicahParks/jwkset"
	"github.com/catalogd/catalogd/server/auth"
	"github.com/golang-jwt/jwt/v5"
)

// TestBearerKeyRotation: a key the IdP starts publishing is used as soon as
// a token names it, without restarting, and a key it withdraws stops
// verifying new tokens at the next refresh, while tokens already verified
// keep working from the cache (the five-minute window the auth package
// documents).
func TestBearerKeyRotation(t *testing.T) {
	oldKey := rsaSigningKey(t, "2026-01", 0)
	newKey := ecSigningKey(t, "2026-07", 0, jwkset.UseSig)
	idp := newOIDCIdP(t, oldKey)
	// A short rate limit lets the test see two refreshes caused by unknown
	// kids without waiting the production minute. A request waits for the
	// refresh it causes however slow the machine (the production wait is a
	// second), so that the fetches are counted, and the keys replaced,
	// when its answer comes.
	s := newAuthServer(t, idp, func(c *auth.Config) {
		c.RefreshRateLimit = 50 * time.Millisecond
		c.RefreshWait = time.Minute
	})
	if n := idp.jwksFetches.Load(); n != 1 {
		t.Fatalf("%d JWKS fetches at start, want 1", n)
	}
	seenOld := "Bearer " + oldKey.sign(t, s.claims())
	s.wantOK(t, s.getWith(seenOld), "the old key before rotation")

	// Before the IdP publishes it, the new key is unknown even after a
	// refresh.
	early := "Bearer " + newKey.sign(t, s.claims())
	s.wantRejected(t, s.getWith(early), "the new key before it is published", auth.CodeInvalidToken, "does not publish", "")
	fetches := idp.jwksFetches.Load()
	if fetches != 2 {
		t.Fatalf("%d JWKS fetches after one unknown kid, want 2", fetches)
	}

	idp.publish(t, oldKey, newKey)
	s.wantOK(t, s.getWith("Bearer "+newKey.sign(t, s.claims())), "the first token of the new key")
	if n := idp.jwksFetches.Load(); n != fetches+1 {
		t.Fatalf("%d JWKS fetches, want %d: one refresh for the new kid", n, fetches+1)
	}
	s.wantOK(t, s.getWith(early), "a token of the new key rejected before it was published")
	s.wantOK(t, s.getWith("Bearer "+oldKey.sign(t, s.claims())), "the old key while both are published")

	// Withdraw the old key; an unknown kid is what makes the verifier
	// refetch here (the periodic refresh is an hour away).
	idp.publish(t, newKey)
	s.wantRejected(t, s.getWith("Bearer "+signAs(t, jwt.SigningMethodES256, "2027-01", newKey.priv, s.claims())),
		"a kid nobody publishes", auth.CodeInvalidToken, "does not publish", "")
	s.wantRejected(t, s.getWith("Bearer "+oldKey.sign(t, s.claims())), "a new token of the withdrawn key",
		auth.CodeInvalidToken, "does not publish", "")
	s.wantOK(t, s.getWith(seenOld), "a token of the withdrawn key verified before")
	s.wantOK(t, s.getWith("Bearer "+newKey.sign(t, s.claims())), "the new key after rotation")
}

// TestBearerUnknownKidFlood: tokens naming random kids, the cheapest attack
// on a JWKS verifier, neither slow requests down nor reach the IdP more
// than the rate limit allows.
func TestBearerUnknownKidFlood(t *testing.T) {
	key := rsaSigningKey(t, "rsa-1", 0)
	idp := newOIDCIdP(t, key)
	s := newAuthServer(t, idp, nil) // the production rate limit and wait
	// A slow JWKS keeps the one refresh the flood may cause in flight while
	// the other requests arrive.
	idp.jwksDelay.Store(int64(200 * time.Millisecond))

	const requests, workers = 300, 16
	headers := make([]string, requests)
	ec := bearerECKeys()[0]
	for i := range headers {
		// EC signing is cheap; the key does not matter, the kid does.
		headers[i] = "Bearer " + signAs(t, jwt.SigningMethodES256, "kid-"+rand.Text(), ec, s.claims())
	}
	type result struct {
		req     *http.Request
		status  int
		header  http.Header
		body    []byte
		elapsed time.Duration
		err     error
	}
	results := make([]result, requests)
	var next atomic.Int64
	var wg sync.WaitGroup
	client := s.http.Client()
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= requests {
					return
				}
				req, err := http.NewRequest(http.MethodGet, s.base+bearerCardPath, nil)
				if err != nil {
					results[i].err = err
					continue
				}
				req.Header.Set("Authorization", headers[i])
				start := time.Now()
				resp, err := client.Do(req)
				if err != nil {
					results[i].err = err
					continue
				}
				body, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				results[i] = result{req, resp.StatusCode, resp.Header, body, time.Since(start), err}
			}
		})
	}
	wg.Wait()

	var slowest time.Duration
	for i, r := range results {
		if r.err != nil {
			t.Fatalf("request %d: %v", i, r.err)
		}
		slowest = max(slowest, r.elapsed)
		if r.elapsed >= 2*time.Second {
			t.Errorf("request %d took %v; an unknown kid must not hold a request 2 s", i, r.elapsed)
		}
		validateResponse(t, r.req, r.status, r.header, r.body)
		s.wantRejected(t, &response{status: r.status, header: r.header, body: r.body},
			fmt.Sprintf("request %d", i), auth.CodeInvalidToken, "does not publish", "")
	}
	fetches := idp.jwksFetches.Load()
	t.Logf("%d requests with unknown kids: %d JWKS fetches in all, slowest request %v", requests, fetches, slowest)
	if fetches > 2 {
		t.Errorf("%d JWKS fetches, want at most 2 (the first load and one refresh a minute)", fetches)
	}
	if n := idp.discoveryFetches.Load(); n != 1 {
		t.Errorf("%d discovery fetches, want 1", n)
	}
	// The flood cost nothing to legitimate callers.
	idp.jwksDelay.Store(0)
	s.wantOK(t, s.getWith("Bearer "+key.sign(t, s.claims())), "a valid token after the flood")
}

// TestBearerIdPDownAtStart: a server whose IdP is down starts anyway and
// rejects every token with a 401 that says to retry, then serves as soon as
// the IdP is back, without a restart.
func TestBearerIdPDownAtStart(t *testing.T) {
	for _, mode := range []struct {
		name string
		mode idpMode
	}{{"503", idpUnavailable}, {"hang-up", idpHangUp}} {
		t.Run(mode.name, func(t *testing.T) {
			t.Parallel()
			key := rsaSigningKey(t, "rsa-1", 0)
			idp := newOIDCIdP(t, key)
			idp.setMode(mode.mode)
			start := time.Now()
			// RefreshRateLimit caps the retry backoff: production retries
			// a down IdP once a minute at most, the test every 100 ms.
			s := newAuthServer(t, idp, func(c *auth.Config) { c.RefreshRateLimit = 100 * time.Millisecond })
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("building the server took %v with the IdP down", d)
			}
			if s.verifier.Ready() {
				t.Fatal("verifier ready while the IdP is down")
			}
			token := "Bearer " + key.sign(t, s.claims())
			for range 3 {
				s.wantRejected(t, s.getWith(token), "a valid token before the keys load", auth.CodeInvalidToken, "retry later", "")
			}
			s.do(http.MethodGet, "/openapi.yaml").wantStatus(t, http.StatusOK)

			idp.setMode(idpUp)
			deadline := time.Now().Add(10 * time.Second)
			for {
				r := s.getWith(token)
				if r.status == http.StatusOK {
					break
				}
				s.wantRejected(t, r, "a valid token while the keys load", auth.CodeInvalidToken, "retry later", "")
				if time.Now().After(deadline) {
					t.Fatalf("still 401 10 s after the IdP came back: %s", r.body)
				}
				time.Sleep(20 * time.Millisecond)
			}
			t.Logf("served %v after the IdP came back", time.Since(deadline.Add(-10*time.Second)).Round(time.Millisecond))
			if !s.verifier.Ready() {
				t.Error("a token was accepted but the verifier is not ready")
			}
			s.wantOK(t, s.getWith("Bearer "+key.sign(t, s.claims())), "another valid token")
		})
	}
}

// TestBearerIdPDownLater: once the keys are loaded, an IdP outage, or an IdP
// that suddenly publishes an empty set, changes nothing for valid tokens,
// including ones never seen before; a refresh that fails on the way does
// not drop the keys either.
func TestBearerIdPDownLater(t *testing.T) {
	for _, mode := range []struct {
		name  string
		apply func(testing.TB, *oidcIdP)
	}{
		{"503", func(_ testing.TB, p *oidcIdP) { p.setMode(idpUnavailable) }},
		{"hang-up", func(_ testing.TB, p *oidcIdP) { p.setMode(idpHangUp) }},
		{"empty JWKS", func(t testing.TB, p *oidcIdP) { p.publish(t) }},
	} {
		t.Run(mode.name, func(t *testing.T) {
			t.Parallel()
			rsaKey := rsaSigningKey(t, "rsa-1", 0)
			ecKey := ecSigningKey(t, "ec-1", 0, jwkset.UseSig)
			idp := newOIDCIdP(t, rsaKey, ecKey)
			s := newAuthServer(t, idp, nil)
			s.wantOK(t, s.getWith("Bearer "+rsaKey.sign(t, s.claims())), "before the outage")

			mode.apply(t, idp)
			for i := range 3 {
				s.wantOK(t, s.getWith("Bearer "+rsaKey.sign(t, s.claims())), fmt.Sprintf("new RS256 token %d during the outage", i))
				s.wantOK(t, s.getWith("Bearer "+ecKey.sign(t, s.claims())), fmt.Sprintf("new ES256 token %d during the outage", i))
			}

			// An unknown kid makes the verifier try the IdP now; that
			// attempt fails (or finds no key) and must leave the loaded
			// keys alone.
			before := idp.jwksFetches.Load()
			start := time.Now()
			unknown := "Bearer " + signAs(t, jwt.SigningMethodRS256, "rsa-2", rsaKey.priv, s.claims())
			s.wantRejected(t, s.getWith(unknown), "an unknown kid during the outage", auth.CodeInvalidToken, "does not publish", "")
			if d := time.Since(start); d >= 2*time.Second {
				t.Errorf("an unknown kid during the outage took %v", d)
			}
			// The request may be answered before a slow machine's refresh
			// reaches the IdP: the attempt is awaited, not assumed.
			for deadline := time.Now().Add(10 * time.Second); idp.jwksFetches.Load() == before; time.Sleep(10 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatal("the unknown kid did not make the verifier try the IdP")
				}
			}
			s.wantOK(t, s.getWith("Bearer "+rsaKey.sign(t, s.claims())), "a new RS256 token after the failed refresh")
			s.wantOK(t, s.getWith("Bearer "+ecKey.sign(t, s.claims())), "a new ES256 token after the failed refresh")
		})
	}
}
