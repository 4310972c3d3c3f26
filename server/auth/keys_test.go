package auth

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/MicahParks/jwkset"
)

// TestUnknownKidFlood: tokens with random kids cause one JWKS fetch at most
// per RefreshRateLimit (default one minute), and none makes its request
// wait for long.
func TestUnknownKidFlood(t *testing.T) {
	k := ecKey(t)
	idp := newTestIdP(t, k)
	v := newVerifier(t, idp, nil)
	if got := idp.jwksHits.Load(); got != 1 {
		t.Fatalf("JWKS fetched %d times at start, want 1", got)
	}

	forged := make([]string, 200)
	for i := range forged {
		f := *k
		f.kid = rand.Text()
		forged[i] = "Bearer " + sign(t, &f, idp.claims(time.Now()))
	}

	start := time.Now()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var slowest time.Duration
	for i, h := range forged {
		run := func() {
			t0 := time.Now()
			_, err := v.Verify(context.Background(), h)
			d := time.Since(t0)
			mu.Lock()
			slowest = max(slowest, d)
			mu.Unlock()
			authError(t, err, CodeInvalidToken, ReasonUnknownKey)
		}
		// Half in sequence, half at once: both must be bounded.
		if i < len(forged)/2 {
			run()
		} else {
			wg.Go(run)
		}
	}
	wg.Wait()
	if elapsed := time.Since(start); elapsed > 5*time.Second {
		t.Errorf("200 unknown-kid tokens took %v", elapsed)
	}
	if slowest > 5*time.Second {
		t.Errorf("slowest Verify took %v", slowest)
	}
	t.Logf("200 unknown-kid tokens: %v in all, slowest %v, %d JWKS fetches", time.Since(start), slowest, idp.jwksHits.Load())
	if got := idp.jwksHits.Load(); got > 2 {
		t.Errorf("JWKS fetched %d times, want at most 2 (start and one refresh)", got)
	}

	// The genuine key still works throughout.
	if _, err := v.Verify(context.Background(), "Bearer "+sign(t, k, idp.claims(time.Now()))); err != nil {
		t.Fatalf("Verify with the published key after the flood: %v", err)
	}
}

// TestUnknownKidWaitIsBounded: an IdP that hangs on the refresh does not
// hold the request longer than RefreshWait.
func TestUnknownKidWaitIsBounded(t *testing.T) {
	k := ecKey(t)
	idp := newTestIdP(t, k)
	v := newVerifier(t, idp, func(c *Config) { c.RefreshWait = 100 * time.Millisecond })

	idp.hang.Store(true)

	f := *k
	f.kid = "rotated"
	t0 := time.Now()
	_, err := v.Verify(context.Background(), "Bearer "+sign(t, &f, idp.claims(time.Now())))
	if d := time.Since(t0); d > 5*time.Second {
		t.Errorf("Verify waited %v for a hanging refresh", d)
	}
	authError(t, err, CodeInvalidToken, ReasonUnknownKey)
	if _, err := v.Verify(context.Background(), "Bearer "+sign(t, k, idp.claims(time.Now()))); err != nil {
		t.Fatalf("the loaded key stopped working after a failed refresh: %v", err)
	}
}

// TestKeyRotation: a key added to the JWKS is picked up on the first token
// that uses it.
func TestKeyRotation(t *testing.T) {
	old, next := ecKey(t), ecKey2(t)
	idp := newTestIdP(t, old)
	v := newVerifier(t, idp, func(c *Config) { c.RefreshRateLimit = 10 * time.Millisecond })

	rotated := "Bearer " + sign(t, next, idp.claims(time.Now()))
	_, err := v.Verify(context.Background(), rotated)
	authError(t, err, CodeInvalidToken, ReasonUnknownKey)

	idp.setKeys(old, next)
	hits := idp.jwksHits.Load()
	waitFor(t, "the new key to be accepted", func() bool {
		_, err := v.Verify(context.Background(), rotated)
		return err == nil
	})
	if got := idp.jwksHits.Load(); got <= hits {
		t.Errorf("JWKS fetches %d after rotation, want more than %d", got, hits)
	}
	if _, err := v.Verify(context.Background(), "Bearer "+sign(t, old, idp.claims(time.Now()))); err != nil {
		t.Fatalf("the old key, still published, is rejected: %v", err)
	}
}

// TestIdPDownAtStart: the verifier starts without keys, rejects tokens as
// unavailable, and loads the keys as soon as the IdP answers.
func TestIdPDownAtStart(t *testing.T) {
	k := rsaKey(t)
	idp := newTestIdP(t, k)
	idp.setStatus(http.StatusServiceUnavailable)
	v := newVerifier(t, idp, func(c *Config) { c.RefreshRateLimit = 20 * time.Millisecond })
	if v.Ready() {
		t.Fatal("Ready() = true while the IdP is down")
	}
	token := "Bearer " + sign(t, k, idp.claims(time.Now()))
	_, err := v.Verify(context.Background(), token)
	authError(t, err, CodeInvalidToken, ReasonUnavailable)

	idp.setStatus(0)
	waitFor(t, "Ready", v.Ready)
	if _, err := v.Verify(context.Background(), token); err != nil {
		t.Fatalf("Verify after the IdP came up: %v", err)
	}
}

// TestIdPDiscoveryMissingAtStart: the IdP's discovery document is missing
// for a moment at start (a 404 from a proxy not yet routed), so the
// conventional JWKS URL is tried, and is not where this IdP keeps its keys.
// Once the document is back, discovery finds them: the fallback was not
// kept for good.
func TestIdPDiscoveryMissingAtStart(t *testing.T) {
	k := rsaKey(t)
	idp := newTestIdP(t, k) // its keys at /keys, which discovery names
	idp.setStatus(http.StatusNotFound)
	v := newVerifier(t, idp, func(c *Config) { c.RefreshRateLimit = 20 * time.Millisecond })
	if v.Ready() {
		t.Fatal("Ready() = true while discovery and the fallback both answer 404")
	}
	idp.setStatus(0)
	waitFor(t, "Ready once discovery is back", v.Ready)
	if _, err := v.Verify(context.Background(), "Bearer "+sign(t, k, idp.claims(time.Now()))); err != nil {
		t.Fatalf("Verify once discovery is back: %v", err)
	}
}

// TestIdPUnreachableAtStart: an IdP that accepts connections but never
// answers delays NewVerifier by one HTTP timeout at most.
func TestIdPUnreachableAtStart(t *testing.T) {
	k := ecKey(t)
	idp := startlessIdP(t, k)
	t0 := time.Now()
	v := newVerifier(t, idp, func(c *Config) {
		c.HTTPClient = &http.Client{Timeout: 100 * time.Millisecond}
		c.RefreshRateLimit = 20 * time.Millisecond
	})
	if d := time.Since(t0); d > 5*time.Second {
		t.Errorf("NewVerifier took %v", d)
	}
	if v.Ready() {
		t.Fatal("Ready() = true before the IdP answered")
	}
	idp.srv.Start()
	waitFor(t, "Ready", v.Ready)
	if _, err := v.Verify(context.Background(), "Bearer "+sign(t, k, idp.claims(time.Now()))); err != nil {
		t.Fatalf("Verify after the IdP came up: %v", err)
	}
}

// TestIdPDownLater: keys loaded once keep verifying new tokens while every
// refresh fails.
func TestIdPDownLater(t *testing.T) {
	k := ecKey(t)
	idp := newTestIdP(t, k)
	v := newVerifier(t, idp, func(c *Config) {
		c.RefreshInterval = 5 * time.Millisecond
		c.RefreshRateLimit = 5 * time.Millisecond
	})
	idp.setStatus(http.StatusBadGateway)
	hits := idp.jwksHits.Load()
	waitFor(t, "two failed refreshes", func() bool { return idp.jwksHits.Load() >= hits+2 })

	if !v.Ready() {
		t.Error("Ready() = false after the IdP went down")
	}
	if _, err := v.Verify(context.Background(), "Bearer "+sign(t, k, idp.claims(time.Now()))); err != nil {
		t.Fatalf("Verify with cached keys: %v", err)
	}
	// An unknown kid makes a refresh that fails too; the keys stay.
	f := *k
	f.kid = "unknown"
	_, err := v.Verify(context.Background(), "Bearer "+sign(t, &f, idp.claims(time.Now())))
	authError(t, err, CodeInvalidToken, ReasonUnknownKey)
	if _, err := v.Verify(context.Background(), "Bearer "+sign(t, k, idp.claims(time.Now()))); err != nil {
		t.Fatalf("Verify after a failed unknown-kid refresh: %v", err)
	}
}

// TestJWKSBadDocuments: garbage, an empty set or an invalid key neither
// panics nor counts as loaded, nor replaces keys already loaded.
func TestJWKSBadDocuments(t *testing.T) {
	k := ecKey(t)
	bad := []struct{ name, body string }{
		{"Garbage", "<html>oops</html>"},
		{"Truncated", `{"keys":[{"kty":"EC"`},
		{"NotAnObject", `[1,2,3]`},
		{"EmptySet", `{"keys":[]}`},
		{"NoKeysMember", `{}`},
		{"InvalidKey", `{"keys":[{"kty":"RSA","kid":"x","n":"!!","e":"AQAB"}]}`},
		{"UnsupportedKeyOnly", `{"keys":[{"kty":"OKP","crv":"X448","kid":"x","x":"AAAA"}]}`},
	}
	for _, tc := range bad {
		t.Run("AtStart"+tc.name, func(t *testing.T) {
			idp := newTestIdP(t)
			idp.setJWKS(tc.body)
			v := newVerifier(t, idp, func(c *Config) { c.RefreshRateLimit = 10 * time.Millisecond })
			if v.Ready() {
				t.Fatal("Ready() = true with a bad JWKS")
			}
			_, err := v.Verify(context.Background(), "Bearer "+sign(t, k, idp.claims(time.Now())))
			authError(t, err, CodeInvalidToken, ReasonUnavailable)
			idp.setKeys(k)
			waitFor(t, "Ready once the JWKS is fixed", v.Ready)
		})
		t.Run("Later"+tc.name, func(t *testing.T) {
			idp := newTestIdP(t, k)
			v := newVerifier(t, idp, func(c *Config) { c.RefreshInterval = 5 * time.Millisecond })
			idp.setJWKS(tc.body)
			hits := idp.jwksHits.Load()
			waitFor(t, "two refreshes of the bad JWKS", func() bool { return idp.jwksHits.Load() >= hits+2 })
			if _, err := v.Verify(context.Background(), "Bearer "+sign(t, k, idp.claims(time.Now()))); err != nil {
				t.Fatalf("Verify after the JWKS went bad: %v", err)
			}
		})
	}
}

// TestDiscoveryFallback: an issuer without an OpenID configuration has its
// JWKS at the conventional path.
func TestDiscoveryFallback(t *testing.T) {
	k := ecKey(t)
	var hits int
	var mu sync.Mutex
	mux := http.NewServeMux()
	jwks := newTestIdP(t, k) // only for its JWKS body
	mux.HandleFunc("GET /.well-known/jwks.json", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits++
		mu.Unlock()
		jwks.mu.Lock()
		w.Write(jwks.jwks)
		jwks.mu.Unlock()
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()

	// Auth0 writes its issuer with a trailing slash.
	issuer := srv.URL + "/"
	v, err := NewVerifier(context.Background(), Config{Issuer: issuer, Audience: testAudience})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if !v.Ready() {
		t.Fatal("Ready() = false")
	}
	c := jwks.claims(time.Now())
	c["iss"] = issuer
	if _, err := v.Verify(context.Background(), "Bearer "+sign(t, k, c)); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if hits != 1 {
		t.Fatalf("%s/.well-known/jwks.json fetched %d times, want 1", srv.URL, hits)
	}
}

// TestExplicitJWKSURL: a configured JWKS URL skips discovery.
func TestExplicitJWKSURL(t *testing.T) {
	k := ecKey(t)
	idp := newTestIdP(t, k)
	v := newVerifier(t, idp, func(c *Config) { c.JWKSURL = idp.url + "/keys" })
	if !v.Ready() {
		t.Fatal("Ready() = false")
	}
	if got := idp.discoveryHits.Load(); got != 0 {
		t.Errorf("discovery fetched %d times, want 0", got)
	}
	if _, err := v.Verify(context.Background(), "Bearer "+sign(t, k, idp.claims(time.Now()))); err != nil {
		t.Fatal(err)
	}
}

// TestIssuerNotAURL: with a JWKS URL, the issuer is only compared, so it may
// be any string.
func TestIssuerNotAURL(t *testing.T) {
	k := ecKey(t)
	idp := newTestIdP(t, k)
	const issuer = "urn:catalogd:test-idp"
	v := newVerifier(t, idp, func(c *Config) { c.Issuer = issuer; c.JWKSURL = idp.url + "/keys" })
	c := idp.claims(time.Now())
	c["iss"] = issuer
	if _, err := v.Verify(context.Background(), "Bearer "+sign(t, k, c)); err != nil {
		t.Fatal(err)
	}
}

// TestCloseStopsRetries: after Close nothing keeps calling a down IdP.
// The calls are counted as the verifier sends them: a call sent before
// Close may reach the IdP after it.
func TestCloseStopsRetries(t *testing.T) {
	idp := newTestIdP(t)
	idp.setStatus(http.StatusServiceUnavailable)
	var sent atomic.Int64
	client := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		sent.Add(1)
		return http.DefaultTransport.RoundTrip(r)
	})}
	v, err := NewVerifier(context.Background(), Config{Issuer: idp.url, Audience: testAudience, RefreshRateLimit: 5 * time.Millisecond, HTTPClient: client})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a few retries", func() bool { return sent.Load() >= 3 })
	v.Close()
	calls := sent.Load()
	time.Sleep(50 * time.Millisecond)
	if got := sent.Load(); got != calls {
		t.Errorf("discovery fetched %d more times after Close", got-calls)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestSlowRefreshStillLands: an unknown kid whose JWKS refresh takes longer
// than a request may wait is refused, but the refresh runs on and the new
// key serves the next request, without a second fetch.
func TestSlowRefreshStillLands(t *testing.T) {
	old, next := ecKey(t), ecKey2(t)
	idp := newTestIdP(t, old)
	v := newVerifier(t, idp, func(c *Config) { c.RefreshWait = 100 * time.Millisecond })
	idp.setKeys(old, next)
	idp.slow.Store(400)
	hits := idp.jwksHits.Load()

	rotated := "Bearer " + sign(t, next, idp.claims(time.Now()))
	t0 := time.Now()
	_, err := v.Verify(context.Background(), rotated)
	if d := time.Since(t0); d > 2*time.Second {
		t.Errorf("Verify waited %v for a slow refresh", d)
	}
	authError(t, err, CodeInvalidToken, ReasonUnknownKey)
	waitFor(t, "the slow refresh to deliver the new key", func() bool {
		_, err := v.Verify(context.Background(), rotated)
		return err == nil
	})
	if got := idp.jwksHits.Load() - hits; got != 1 {
		t.Errorf("%d JWKS fetches, want the one refresh", got)
	}
}

// TestKeysNeverComeInClear: an identity provider reached over https never
// hands its keys over plain HTTP, by the jwks_uri it publishes nor by a
// redirect; and a plain-HTTP issuer that is not loopback is warned of.
func TestKeysNeverComeInClear(t *testing.T) {
	plain := newTestIdP(t, ecKey(t)) // its keys, over plain HTTP
	var conventional atomic.Int64
	mux := http.NewServeMux()
	secure := httptest.NewUnstartedServer(mux)
	mux.HandleFunc("GET /.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]string{"issuer": "https://" + r.Host, "jwks_uri": plain.url + "/keys"})
	})
	mux.HandleFunc("GET /.well-known/jwks.json", func(w http.ResponseWriter, r *http.Request) {
		conventional.Add(1)
		http.NotFound(w, r)
	})
	mux.HandleFunc("GET /moved", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, plain.url+"/keys", http.StatusFound)
	})
	// Plain HTTP, then https, then plain HTTP again.
	mux.HandleFunc("GET /hop", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, plain.url+"/keys", http.StatusFound)
	})
	secure.StartTLS()
	defer secure.Close()
	start := httptest.NewServer(http.RedirectHandler(secure.URL+"/hop", http.StatusFound))
	defer start.Close()

	discovered := newVerifierOf(t, Config{Issuer: secure.URL, Audience: testAudience, HTTPClient: secure.Client()})
	moved := newVerifierOf(t, Config{Issuer: secure.URL, JWKSURL: secure.URL + "/moved", Audience: testAudience, HTTPClient: secure.Client()})
	around := newVerifierOf(t, Config{Issuer: secure.URL, JWKSURL: start.URL + "/keys", Audience: testAudience, HTTPClient: secure.Client()})
	if conventional.Load() == 0 {
		t.Errorf("a jwks_uri in clear was not refused for the conventional URL")
	}
	if n := plain.jwksHits.Load(); n != 0 || discovered.Ready() || moved.Ready() || around.Ready() {
		t.Errorf("the keys were fetched in clear %d times; ready %v, %v, %v", n, discovered.Ready(), moved.Ready(), around.Ready())
	}

	jwks, err := json.Marshal(jwkset.JWKSMarshal{Keys: []jwkset.JWKMarshal{ecKey(t).jwk}})
	if err != nil {
		t.Fatal(err)
	}
	// Each verifier logs apart: its loader goes on logging after the check.
	warnedOf := func(cfg Config) bool {
		out := &lockedLog{}
		cfg.Audience, cfg.Logger = testAudience, slog.New(slog.NewJSONHandler(out, nil))
		newVerifierOf(t, cfg)
		return strings.Contains(out.String(), "plain HTTP")
	}
	if warnedOf(Config{Issuer: plain.url, JWKSURL: plain.url + "/keys"}) {
		t.Errorf("a JWKS URL on loopback was warned of")
	}
	if warnedOf(Config{Issuer: "http://idp.example", JWKS: jwks}) {
		t.Errorf("keys handed over, nothing fetched, were warned of")
	}
	unreachable := &http.Client{Timeout: time.Millisecond}
	if !warnedOf(Config{Issuer: "https://idp.example", JWKSURL: "http://keys.example/jwks", HTTPClient: unreachable}) {
		t.Errorf("a plain-HTTP JWKS URL off loopback was not warned of")
	}
	if !warnedOf(Config{Issuer: "http://idp.example", HTTPClient: unreachable}) {
		t.Errorf("a plain-HTTP issuer off loopback, where discovery starts, was not warned of")
	}
}

// lockedLog is a log output that goroutines write to while a test reads it.
type lockedLog struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// newVerifierOf returns a verifier of cfg, closed at the end of the test.
func newVerifierOf(tb testing.TB, cfg Config) *Verifier {
	tb.Helper()
	v, err := NewVerifier(context.Background(), cfg)
	if err != nil {
		tb.Fatalf("NewVerifier: %v", err)
	}
	tb.Cleanup(v.Close)
	return v
}
