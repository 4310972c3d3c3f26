package auth

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/MicahParks/jwkset"
	"github.com/golang-jwt/jwt/v5"
)

const testAudience = "http://127.0.0.1:8080/api/v1/mcp"

// testKey is a real signing key with the JWK an IdP would publish for it.
type testKey struct {
	kid    string
	signer crypto.Signer
	method jwt.SigningMethod
	jwk    jwkset.JWKMarshal
}

func newTestKey(tb testing.TB, kid string, signer crypto.Signer, method jwt.SigningMethod) *testKey {
	tb.Helper()
	jwk, err := jwkset.NewJWKFromKey(signer.Public(), jwkset.JWKOptions{Metadata: jwkset.JWKMetadataOptions{
		ALG: jwkset.ALG(method.Alg()),
		KID: kid,
		USE: jwkset.UseSig,
	}})
	if err != nil {
		tb.Fatalf("JWK for %s: %v", kid, err)
	}
	return &testKey{kid: kid, signer: signer, method: method, jwk: jwk.Marshal()}
}

// Keys are generated once per test binary: RSA generation is slow under -race.
var (
	rsaSigner = sync.OnceValue(func() *rsa.PrivateKey {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			panic(err)
		}
		return k
	})
	ecSigners = sync.OnceValue(func() [2]*ecdsa.PrivateKey {
		var ks [2]*ecdsa.PrivateKey
		for i := range ks {
			k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
			if err != nil {
				panic(err)
			}
			ks[i] = k
		}
		return ks
	})
	edSigner = sync.OnceValue(func() ed25519.PrivateKey {
		_, k, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			panic(err)
		}
		return k
	})
)

func rsaKey(tb testing.TB) *testKey {
	return newTestKey(tb, "rsa-1", rsaSigner(), jwt.SigningMethodRS256)
}

// psKey is the RSA key published for PS256, under its own kid.
func psKey(tb testing.TB) *testKey {
	return newTestKey(tb, "rsa-ps", rsaSigner(), jwt.SigningMethodPS256)
}

func ecKey(tb testing.TB) *testKey {
	return newTestKey(tb, "ec-1", ecSigners()[0], jwt.SigningMethodES256)
}

func ecKey2(tb testing.TB) *testKey {
	return newTestKey(tb, "ec-2", ecSigners()[1], jwt.SigningMethodES256)
}

func edKey(tb testing.TB) *testKey {
	return newTestKey(tb, "ed-1", edSigner(), jwt.SigningMethodEdDSA)
}

// testIdP is an identity provider on a real HTTP server: discovery document,
// JWKS at a non-conventional path (so discovery is really used), and
// switches to make it fail.
type testIdP struct {
	srv *httptest.Server
	url string

	mu     sync.Mutex
	jwks   []byte
	status int // answer of every endpoint when not 0

	// hang makes the JWKS endpoint answer only when the client gives up.
	hang atomic.Bool
	// slow delays every JWKS answer by this many milliseconds.
	slow atomic.Int64

	discoveryHits atomic.Int64
	jwksHits      atomic.Int64
}

func newTestIdP(tb testing.TB, keys ...*testKey) *testIdP {
	tb.Helper()
	p := startlessIdP(tb, keys...)
	p.srv.Start()
	return p
}

// startlessIdP listens but does not answer until p.srv.Start is called.
func startlessIdP(tb testing.TB, keys ...*testKey) *testIdP {
	tb.Helper()
	p := &testIdP{}
	p.setKeys(keys...)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		p.discoveryHits.Add(1)
		if p.fail(w) {
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]string{"issuer": p.url, "jwks_uri": p.url + "/keys"})
	})
	mux.HandleFunc("GET /keys", func(w http.ResponseWriter, r *http.Request) {
		p.jwksHits.Add(1)
		if p.hang.Load() {
			<-r.Context().Done()
			return
		}
		if d := p.slow.Load(); d > 0 {
			select {
			case <-time.After(time.Duration(d) * time.Millisecond):
			case <-r.Context().Done():
				return
			}
		}
		if p.fail(w) {
			return
		}
		p.mu.Lock()
		body := p.jwks
		p.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	})
	p.srv = httptest.NewUnstartedServer(mux)
	p.url = "http://" + p.srv.Listener.Addr().String()
	tb.Cleanup(p.srv.Close)
	return p
}

func (p *testIdP) fail(w http.ResponseWriter) bool {
	p.mu.Lock()
	status := p.status
	p.mu.Unlock()
	if status == 0 {
		return false
	}
	http.Error(w, "down", status)
	return true
}

func (p *testIdP) setKeys(keys ...*testKey) {
	set := jwkset.JWKSMarshal{Keys: []jwkset.JWKMarshal{}}
	for _, k := range keys {
		set.Keys = append(set.Keys, k.jwk)
	}
	b, err := json.Marshal(set)
	if err != nil {
		panic(err)
	}
	p.setJWKS(string(b))
}

func (p *testIdP) setJWKS(body string) {
	p.mu.Lock()
	p.jwks = []byte(body)
	p.mu.Unlock()
}

func (p *testIdP) setStatus(status int) {
	p.mu.Lock()
	p.status = status
	p.mu.Unlock()
}

// claims are those of a valid token of this IdP at now; tests change them.
func (p *testIdP) claims(now time.Time) jwt.MapClaims {
	return jwt.MapClaims{
		"iss":   p.url,
		"sub":   "partner-sub",
		"azp":   "partner-1",
		"aud":   testAudience,
		"scope": "openid " + Scope,
		"iat":   now.Unix(),
		"nbf":   now.Unix(),
		"exp":   now.Add(time.Hour).Unix(),
		"jti":   rand.Text(),
	}
}

func sign(tb testing.TB, k *testKey, c jwt.Claims) string {
	tb.Helper()
	t := jwt.NewWithClaims(k.method, c)
	t.Header["kid"] = k.kid
	s, err := t.SignedString(k.signer)
	if err != nil {
		tb.Fatalf("sign with %s: %v", k.kid, err)
	}
	return s
}

// clock is a settable time source for Config.Now.
type clock struct{ t atomic.Pointer[time.Time] }

func newClock(t time.Time) *clock {
	c := &clock{}
	c.set(t)
	return c
}

func (c *clock) now() time.Time      { return *c.t.Load() }
func (c *clock) set(t time.Time)     { c.t.Store(&t) }
func (c *clock) add(d time.Duration) { c.set(c.now().Add(d)) }

// newVerifier returns a verifier of p's tokens, closed at the end of the test.
func newVerifier(tb testing.TB, p *testIdP, edit func(*Config)) *Verifier {
	tb.Helper()
	cfg := Config{Issuer: p.url, Audience: testAudience}
	if edit != nil {
		edit(&cfg)
	}
	v, err := NewVerifier(context.Background(), cfg)
	if err != nil {
		tb.Fatalf("NewVerifier: %v", err)
	}
	tb.Cleanup(v.Close)
	return v
}

// waitFor polls cond for up to 5 s; the tests use short intervals, so this
// only bounds a failure.
func waitFor(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// authError asserts err is an *Error with the given code and reason.
func authError(tb testing.TB, err error, code, reason string) *Error {
	tb.Helper()
	if err == nil {
		tb.Fatalf("Verify succeeded, want %q/%q", code, reason)
	}
	e, ok := err.(*Error)
	if !ok {
		tb.Fatalf("error %T %v, want *Error", err, err)
	}
	if e.Code != code || e.Reason != reason || e.Status != http.StatusUnauthorized {
		tb.Fatalf("error = %d %q/%q (%s), want 401 %q/%q", e.Status, e.Code, e.Reason, e.Description, code, reason)
	}
	return e
}
