package server

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/MicahParks/jwkset"
	"github.com/catalogd/catalogd/server/auth"
	"github.com/golang-jwt/jwt/v5"
)

// These tests drive identity provider faults beyond those of
// authn_idp_test.go: a JWKS refresh slower than a request may wait,
// a JWKS that turns to garbage or grows huge after serving good keys, and a
// key rotation while requests keep coming. An IdP down at start or later,
// and an emptied JWKS, are TestBearerIdPDownAtStart and TestBearerIdPDownLater.

// maxUnknownKidWait is the longest a request with an unknown kid may be held
// for a JWKS refresh: docs/OPERATIONS.md, The identity provider, says a
// second, docs/CONTRACT.md, Authentication, "a second or two".
const maxUnknownKidWait = 2 * time.Second

// bearerGet GETs the card with authorization, for use off the test's own
// goroutine: it reports a transport error instead of failing the test.
func (s *authServer) bearerGet(authorization string) (status int, body []byte, err error) {
	req, err := http.NewRequest(http.MethodGet, s.base+bearerCardPath, nil)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", authorization)
	resp, err := s.http.Client().Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err = io.ReadAll(resp.Body)
	return resp.StatusCode, body, err
}

// TestIdPSlowJWKSRefresh: while the refresh an unknown kid causes takes
// longer than a request may wait for it, requests with that kid are refused
// within the documented wait, and tokens of the keys already loaded, seen
// before or new, are verified at once, without waiting for the refresh. Once
// the slow refresh lands, the new key serves, with no second fetch.
func TestIdPSlowJWKSRefresh(t *testing.T) {
	t.Parallel()
	oldKey := ecSigningKey(t, "2026-01", 0, jwkset.UseSig)
	newKey := ecSigningKey(t, "2026-07", 1, jwkset.UseSig)
	idp := newOIDCIdP(t, oldKey)
	s := newAuthServer(t, idp, nil) // the production wait and rate limit
	seen := "Bearer " + oldKey.sign(t, s.claims())
	s.wantOK(t, s.getWith(seen), "an old-key token before the refresh")

	const delay = 4 * time.Second
	fetches := idp.jwksFetches.Load()
	idp.jwksDelay.Store(int64(delay))
	idp.publish(t, oldKey, newKey)
	refreshStarted := time.Now()

	// Several requests name the new key at once; one of them starts the
	// refresh, and none is held past the bound.
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			start := time.Now()
			status, body, err := s.bearerGet("Bearer " + newKey.sign(t, s.claims()))
			d := time.Since(start)
			switch {
			case err != nil:
				t.Errorf("new-key request %d during the slow refresh: %v", i, err)
			case status != http.StatusUnauthorized:
				t.Errorf("new-key request %d during the slow refresh: status %d, want 401 (the refresh has not landed); body %s", i, status, body)
			case d >= maxUnknownKidWait:
				t.Errorf("new-key request %d was held %v by a slow JWKS refresh, want less than %v", i, d, maxUnknownKidWait)
			}
		})
	}
	// Meanwhile the loaded key verifies new tokens and cached ones, each
	// answered before the refresh lands, so none waits for it.
	n := 0
	for time.Since(refreshStarted) < 1500*time.Millisecond {
		for _, token := range []string{seen, "Bearer " + oldKey.sign(t, s.claims())} {
			s.wantOK(t, s.getWith(token), fmt.Sprintf("old-key token %d during the slow refresh", n))
			if d := time.Since(refreshStarted); d >= delay {
				t.Errorf("old-key token %d was answered %v after the slow refresh started, once it had landed: it waited for it", n, d)
			}
			n++
		}
	}
	wg.Wait()
	if got := idp.jwksFetches.Load(); got != fetches+1 {
		t.Fatalf("%d JWKS fetches during the slow refresh, want 1", got-fetches)
	}

	deadline := refreshStarted.Add(delay + 5*time.Second)
	for {
		status, body, err := s.bearerGet("Bearer " + newKey.sign(t, s.claims()))
		if err != nil {
			t.Fatal(err)
		}
		if status == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the new key is still refused %v after its slow refresh started: %d %s", time.Since(refreshStarted), status, body)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("%d old-key requests during the refresh; the new key served %v after the refresh started", n, time.Since(refreshStarted).Round(time.Millisecond))
	if got := idp.jwksFetches.Load(); got != fetches+1 {
		t.Errorf("%d JWKS fetches for the new key, want the one slow refresh", got-fetches)
	}
}

// TestIdPGarbageJWKSKeepsKeys: an IdP that has served good keys and then
// answers its JWKS URL with garbage, on the periodic refresh and on one an
// unknown kid causes, leaves the loaded keys verifying new tokens; the
// server stays ready, and a good JWKS afterwards is taken up again.
func TestIdPGarbageJWKSKeepsKeys(t *testing.T) {
	t.Parallel()
	rsaKey := rsaSigningKey(t, "rsa-1", 0)
	ecKey := ecSigningKey(t, "ec-1", 0, jwkset.UseSig)
	idp := newOIDCIdP(t, rsaKey, ecKey)
	s := newAuthServer(t, idp, func(c *auth.Config) {
		c.RefreshInterval = 50 * time.Millisecond
		c.RefreshRateLimit = 20 * time.Millisecond
	})
	seen := "Bearer " + rsaKey.sign(t, s.claims())
	s.wantOK(t, s.getWith(seen), "before the garbage")

	garbage := []struct{ name, body string }{
		{"HTML error page", "<!doctype html><html><body><h1>502 Bad Gateway</h1></body></html>"},
		{"truncated", `{"keys":[{"kty":"EC","crv":"P-256","kid":"ec-1","x":"`},
		{"empty body", ""},
		{"binary", "\x00\x01\x02\xff\xfe garbage \x7f"},
		{"array", `[1,2,3]`},
		{"keys not an array", `{"keys":"none"}`},
		{"null keys", `{"keys":null}`},
		{"invalid key", `{"keys":[{"kty":"RSA","kid":"rsa-1","n":"!!","e":"AQAB"}]}`},
		{"unsupported keys only", `{"keys":[{"kty":"OKP","crv":"X448","kid":"x","x":"AAAA"}]}`},
		{"key without kty", `{"keys":[{"kid":"rsa-1","n":"AQAB","e":"AQAB"}]}`},
	}
	for i, g := range garbage {
		body := []byte(g.body)
		idp.jwks.Store(&body)
		before := idp.jwksFetches.Load()
		start := time.Now()
		unknown := "Bearer " + signAs(t, jwt.SigningMethodES256, fmt.Sprintf("unknown-%d", i), ecKey.priv, s.claims())
		s.wantRejected(t, s.getWith(unknown), g.name+": an unknown kid", auth.CodeInvalidToken, "does not publish", "")
		if d := time.Since(start); d >= maxUnknownKidWait {
			t.Errorf("%s: an unknown kid took %v", g.name, d)
		}
		deadline := time.Now().Add(5 * time.Second)
		for idp.jwksFetches.Load() < before+2 {
			if time.Now().After(deadline) {
				t.Fatalf("%s: %d JWKS fetches in 5 s, want the periodic and the unknown-kid refresh", g.name, idp.jwksFetches.Load()-before)
			}
			time.Sleep(10 * time.Millisecond)
		}
		s.wantOK(t, s.getWith("Bearer "+rsaKey.sign(t, s.claims())), g.name+": a new RS256 token")
		s.wantOK(t, s.getWith("Bearer "+ecKey.sign(t, s.claims())), g.name+": a new ES256 token")
		s.wantOK(t, s.getWith(seen), g.name+": a token verified before")
		if r := sendMethod(t, s.fixture, "/readyz", http.MethodGet, false); r.status != http.StatusOK {
			t.Errorf("%s: /readyz %d %s", g.name, r.status, r.body)
		}
	}

	// A good JWKS after the garbage is used again: a key first published now
	// verifies.
	next := ecSigningKey(t, "ec-2", 1, jwkset.UseSig)
	idp.publish(t, rsaKey, ecKey, next)
	deadline := time.Now().Add(5 * time.Second)
	for {
		r := s.getWith("Bearer " + next.sign(t, s.claims()))
		if r.status == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a key published after the garbage is still refused after 5 s: %d %s", r.status, r.body)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// countingTransport counts the bytes read from response bodies and tells
// when a body has been closed, that is, when its reader is done with it.
type countingTransport struct {
	base   http.RoundTripper
	read   atomic.Int64
	closed atomic.Int64
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := c.base.RoundTrip(r)
	if err == nil {
		resp.Body = &countingBody{ReadCloser: resp.Body, t: c}
	}
	return resp, err
}

type countingBody struct {
	io.ReadCloser
	t    *countingTransport
	once sync.Once
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.t.read.Add(int64(n))
	return n, err
}

func (b *countingBody) Close() error {
	err := b.ReadCloser.Close()
	b.once.Do(func() { b.t.closed.Add(1) })
	return err
}

// TestIdPOversizedJWKS: a JWKS answer far larger than any real key set (a
// well-formed document padded to 16 MiB, as a misrouted jwks_uri serving a
// large file would be) is not read whole into memory, and the keys loaded
// before keep working. The discovery document is read up to 1 MiB; the JWKS
// must be bounded too.
func TestIdPOversizedJWKS(t *testing.T) {
	t.Parallel()
	key := ecSigningKey(t, "ec-1", 0, jwkset.UseSig)
	idp := newOIDCIdP(t, key)
	counter := &countingTransport{base: &http.Transport{}}
	s := newAuthServer(t, idp, func(c *auth.Config) {
		c.HTTPClient = &http.Client{Timeout: 10 * time.Second, Transport: counter}
		c.RefreshRateLimit = 20 * time.Millisecond
	})
	s.wantOK(t, s.getWith("Bearer "+key.sign(t, s.claims())), "before the oversized JWKS")

	const size = 16 << 20
	huge := []byte(`{"keys":[],"padding":"` + strings.Repeat("A", size) + `"}`)
	idp.jwks.Store(&huge)
	read, closed := counter.read.Load(), counter.closed.Load()
	start := time.Now()
	unknown := "Bearer " + signAs(t, jwt.SigningMethodES256, "unknown", key.priv, s.claims())
	s.wantRejected(t, s.getWith(unknown), "an unknown kid", auth.CodeInvalidToken, "does not publish", "")
	if d := time.Since(start); d >= maxUnknownKidWait {
		t.Errorf("an unknown kid took %v", d)
	}
	deadline := time.Now().Add(15 * time.Second)
	for counter.closed.Load() == closed {
		if time.Now().After(deadline) {
			t.Fatal("the refresh of the oversized JWKS never finished")
		}
		time.Sleep(10 * time.Millisecond)
	}
	s.wantOK(t, s.getWith("Bearer "+key.sign(t, s.claims())), "after the oversized JWKS")
	if got := counter.read.Load() - read; got > 2<<20 {
		t.Fatalf("the verifier read %d bytes of one %d-byte JWKS answer, want at most 2 MiB", got, len(huge))
	}
}

// TestIdPKeyRotationUnderLoad: requests keep coming while the IdP publishes
// a new key beside the old one, its clients switch to it, and the IdP then
// withdraws the old key. No request whose token's key the IdP publishes when
// it is sent may fail, and the new key is accepted within the unknown-kid
// wait of its first use. The IdP answers its JWKS in 100 ms, as one across
// the internet does.
func TestIdPKeyRotationUnderLoad(t *testing.T) {
	t.Parallel()
	oldKey := ecSigningKey(t, "2026-01", 0, jwkset.UseSig)
	newKey := ecSigningKey(t, "2026-07", 1, jwkset.UseSig)
	idp := newOIDCIdP(t, oldKey)
	s := newAuthServer(t, idp, nil) // the production wait and rate limit
	idp.jwksDelay.Store(int64(100 * time.Millisecond))

	// phase 0: the old key only; 1: both; 2: the new key only.
	published := func(phase int32, k *signingKey) bool {
		return phase == 1 || (phase == 0) == (k == oldKey)
	}
	var (
		phase     atomic.Int32
		sentIn    [3]atomic.Int64 // requests sent, by phase
		rotatedAt atomic.Int64    // unix nanoseconds of phase 1
		firstNew  atomic.Int64    // unix nanoseconds of the first new-key 200
		mu        sync.Mutex
		failures  []string
		lastFail  time.Duration // after the publication, of the last failure sent
		counts    [3][2]int     // by phase: old-key, new-key requests
	)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	const workers = 8
	for w := range workers {
		wg.Go(func() {
			for n := w; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				p := phase.Load()
				sentIn[p].Add(1)
				k := oldKey
				if p == 2 || (p == 1 && n%2 == 0) {
					k = newKey
				}
				sent := time.Now()
				status, body, err := s.bearerGet("Bearer " + k.sign(t, s.claims()))
				mu.Lock()
				if k == oldKey {
					counts[p][0]++
				} else {
					counts[p][1]++
				}
				if (err != nil || status != http.StatusOK) && published(p, k) {
					lastFail = max(lastFail, sent.Sub(time.Unix(0, rotatedAt.Load())))
					failures = append(failures, fmt.Sprintf("kid %s sent in phase %d, %v after the new key was published: %d %v %.160s",
						k.kid, p, sent.Sub(time.Unix(0, rotatedAt.Load())).Round(time.Millisecond), status, err, body))
				}
				if err == nil && status == http.StatusOK && k == newKey {
					firstNew.CompareAndSwap(0, time.Now().UnixNano())
				}
				mu.Unlock()
			}
		})
	}

	// Each phase lasts at least d and until every worker has had time to
	// send in it.
	run := func(p int32, d time.Duration) {
		end, limit := time.Now().Add(d), time.Now().Add(10*time.Second)
		for (time.Now().Before(end) || sentIn[p].Load() < 2*workers) && time.Now().Before(limit) {
			time.Sleep(10 * time.Millisecond)
		}
	}
	run(0, 300*time.Millisecond)
	idp.publish(t, oldKey, newKey)
	rotatedAt.Store(time.Now().UnixNano())
	phase.Store(1)
	run(1, 1500*time.Millisecond)
	idp.publish(t, newKey)
	phase.Store(2)
	run(2, 500*time.Millisecond)
	close(stop)
	wg.Wait()

	t.Logf("requests by phase (old key, new key): %v; %d JWKS fetches", counts, idp.jwksFetches.Load())
	for p := range counts {
		if counts[p][0]+counts[p][1] == 0 {
			t.Errorf("no request in phase %d", p)
		}
	}
	if first := firstNew.Load(); first == 0 {
		t.Error("no new-key token was accepted")
	} else if d := time.Duration(first - rotatedAt.Load()); d >= maxUnknownKidWait {
		t.Errorf("the first new-key token was accepted %v after the IdP published the key, want less than %v", d, maxUnknownKidWait)
	}
	if len(failures) > 0 {
		t.Fatalf("%d requests failed whose key the IdP published when they were sent, the last sent %v after the new key was published; first %d:\n%s",
			len(failures), lastFail.Round(time.Millisecond), min(len(failures), 5), strings.Join(failures[:min(len(failures), 5)], "\n"))
	}
}

// TestDevIssuerDocumentsAnswerOptions: serve --dev registers its JWKS and
// discovery documents for OPTIONS (routes.go, public: "OPTIONS for CORS
// preflight"), and OPTIONS answers with Allow and no body (docs/CONTRACT.md,
// Answers), as the protected resource metadata beside them does.
func TestDevIssuerDocumentsAnswerOptions(t *testing.T) {
	f := newFixtureWith(t, func(c *Config) {
		c.DevIssuer = auth.NewDevIssuer(bearerECKeys()[1], "https://dev.example", methodsDevAudience,
			methodsDevClient, methodsDevSecret, time.Hour)
	})
	meta := sendMethod(t, f, "/.well-known/oauth-protected-resource", http.MethodOptions, false)
	if meta.status != http.StatusNoContent {
		t.Fatalf("OPTIONS on the protected resource metadata: %d", meta.status)
	}
	for _, path := range []string{"/.well-known/jwks.json", "/.well-known/openid-configuration", "/.well-known/oauth-authorization-server"} {
		r := sendMethod(t, f, path, http.MethodOptions, false)
		if r.status != meta.status || r.header.Get("Allow") != "GET, HEAD, OPTIONS" || len(r.body) != 0 ||
			r.header.Get("Access-Control-Allow-Origin") != "*" {
			t.Fatalf("OPTIONS %s: status %d, Allow %q, Access-Control-Allow-Origin %q, body %q; want %d, \"GET, HEAD, OPTIONS\", \"*\" and no body, as OPTIONS on the protected resource metadata answers",
				path, r.status, r.header.Get("Allow"), r.header.Get("Access-Control-Allow-Origin"), r.body, meta.status)
		}
	}
}
