package server

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/MicahParks/jwkset"
	"github.com/catalogd/catalogd/catalog/store"
	"github.com/catalogd/catalogd/server/auth"
	"github.com/golang-jwt/jwt/v5"
)

// These tests drive bearer authentication through the real handler against
// an identity provider over real HTTP, the way a partner and its IdP meet
// the server in production: discovery, JWKS, rotation and outages included.
// authn_test.go covers the challenge on every route with dev-issuer tokens;
// here the point is what the verifier accepts and rejects, and how it
// behaves while the IdP misbehaves.

// bearerCardPath is a catalogue route every test here uses: authentication
// must come before anything else the route does.
const bearerCardPath = "/catalog/cards/jp-SV1a-001"

// signingKey is a real private key and the JWK its IdP publishes for it.
type signingKey struct {
	kid    string
	method jwt.SigningMethod
	priv   any // *rsa.PrivateKey or *ecdsa.PrivateKey, as jwt wants it
	jwk    jwkset.JWKMarshal
}

func newSigningKey(tb testing.TB, kid string, method jwt.SigningMethod, priv crypto.Signer, use jwkset.USE) *signingKey {
	tb.Helper()
	jwk, err := jwkset.NewJWKFromKey(priv.Public(), jwkset.JWKOptions{Metadata: jwkset.JWKMetadataOptions{
		ALG: jwkset.ALG(method.Alg()),
		KID: kid,
		USE: use,
	}})
	if err != nil {
		tb.Fatalf("JWK for %s: %v", kid, err)
	}
	return &signingKey{kid: kid, method: method, priv: priv, jwk: jwk.Marshal()}
}

// Private keys are made once per test binary: key generation, RSA above
// all, is slow under -race and says nothing about the server.
var (
	bearerRSAKeys = sync.OnceValue(func() [2]*rsa.PrivateKey {
		var ks [2]*rsa.PrivateKey
		for i := range ks {
			k, err := rsa.GenerateKey(rand.Reader, 2048)
			if err != nil {
				panic(err)
			}
			ks[i] = k
		}
		return ks
	})
	bearerECKeys = sync.OnceValue(func() [3]*ecdsa.PrivateKey {
		var ks [3]*ecdsa.PrivateKey
		for i := range ks {
			k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
			if err != nil {
				panic(err)
			}
			ks[i] = k
		}
		return ks
	})
)

// rsaSigningKey is the IdP's RSA key under kid; index picks one of two
// distinct key pairs.
func rsaSigningKey(tb testing.TB, kid string, index int) *signingKey {
	return newSigningKey(tb, kid, jwt.SigningMethodRS256, bearerRSAKeys()[index], jwkset.UseSig)
}

// ecSigningKey is the IdP's P-256 key under kid; index picks one of three
// distinct key pairs.
func ecSigningKey(tb testing.TB, kid string, index int, use jwkset.USE) *signingKey {
	return newSigningKey(tb, kid, jwt.SigningMethodES256, bearerECKeys()[index], use)
}

// sign signs claims with k, naming k's kid in the header as IdPs do.
func (k *signingKey) sign(tb testing.TB, claims jwt.MapClaims) string {
	tb.Helper()
	return signAs(tb, k.method, k.kid, k.priv, claims)
}

// signAs signs with any method and key under any kid, to forge tokens.
func signAs(tb testing.TB, method jwt.SigningMethod, kid string, key any, claims jwt.MapClaims) string {
	tb.Helper()
	tok := jwt.NewWithClaims(method, claims)
	tok.Header["kid"] = kid
	s, err := tok.SignedString(key)
	if err != nil {
		tb.Fatalf("sign %s with kid %q: %v", method.Alg(), kid, err)
	}
	return s
}

// idpMode is how the test IdP answers.
type idpMode int32

const (
	idpUp          idpMode = iota
	idpUnavailable         // 503 on every endpoint, like an IdP being redeployed
	idpHangUp              // closes every connection without a response
)

// oidcIdP is a configurable identity provider over real HTTP: an OpenID
// configuration whose jwks_uri is not the conventional path (so that the
// verifier really uses discovery), a JWKS that can be swapped at runtime,
// and switches to take it down and bring it back.
type oidcIdP struct {
	*httptest.Server
	mode      atomic.Int32
	jwks      atomic.Pointer[[]byte]
	jwksDelay atomic.Int64 // a time.Duration each JWKS answer waits

	discoveryFetches atomic.Int64
	jwksFetches      atomic.Int64
}

func newOIDCIdP(tb testing.TB, keys ...*signingKey) *oidcIdP {
	tb.Helper()
	p := &oidcIdP{}
	p.publish(tb, keys...)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		p.discoveryFetches.Add(1)
		if p.down(w) {
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]string{
			"issuer":         p.URL,
			"jwks_uri":       p.URL + "/oauth2/v1/keys",
			"token_endpoint": p.URL + "/oauth2/v1/token",
		})
	})
	mux.HandleFunc("GET /oauth2/v1/keys", func(w http.ResponseWriter, r *http.Request) {
		p.jwksFetches.Add(1)
		if d := time.Duration(p.jwksDelay.Load()); d > 0 {
			select {
			case <-time.After(d):
			case <-r.Context().Done():
				return
			}
		}
		if p.down(w) {
			return
		}
		w.Header().Set("Content-Type", "application/jwk-set+json")
		w.Write(*p.jwks.Load())
	})
	// The conventional path answers nothing, so a verifier that skipped
	// discovery would never load a key.
	mux.HandleFunc("/", http.NotFound)
	p.Server = httptest.NewServer(mux)
	tb.Cleanup(p.Close)
	return p
}

// publish replaces the JWKS the IdP serves; no key at all serves an empty set.
func (p *oidcIdP) publish(tb testing.TB, keys ...*signingKey) {
	tb.Helper()
	set := jwkset.JWKSMarshal{Keys: []jwkset.JWKMarshal{}}
	for _, k := range keys {
		set.Keys = append(set.Keys, k.jwk)
	}
	b, err := json.Marshal(set)
	if err != nil {
		tb.Fatal(err)
	}
	p.jwks.Store(&b)
}

func (p *oidcIdP) setMode(m idpMode) { p.mode.Store(int32(m)) }

// down answers for an IdP that is not up, and reports whether it did.
func (p *oidcIdP) down(w http.ResponseWriter) bool {
	switch idpMode(p.mode.Load()) {
	case idpUnavailable:
		w.Header().Set("Retry-After", "1")
		http.Error(w, "identity provider unavailable", http.StatusServiceUnavailable)
		return true
	case idpHangUp:
		if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
			conn.Close()
		}
		return true
	}
	return false
}

// claims are those of a valid access token for audience at now; each call
// has a fresh jti, so that no two tokens share a cache entry.
func (p *oidcIdP) claims(audience string, now time.Time) jwt.MapClaims {
	return jwt.MapClaims{
		"iss":   p.URL,
		"sub":   "partner-sub",
		"azp":   "partner-1",
		"aud":   audience,
		"scope": "openid " + auth.Scope,
		"iat":   now.Unix(),
		"nbf":   now.Unix(),
		"exp":   now.Add(time.Hour).Unix(),
		"jti":   rand.Text(),
	}
}

// authServer is a real Server whose verifier trusts an oidcIdP, behind a
// real listener; fixture.do works on it as on every other fixture.
type authServer struct {
	*fixture
	idp      *oidcIdP
	verifier *auth.Verifier
	audience string
	// metadata is the resource_metadata every 401 must name.
	metadata string
}

// newAuthServer builds the server as serve does: the verifier is made, and
// has discovered and loaded the IdP's keys if it can, before the server
// exists, so it needs the base URL before the listener serves.
func newAuthServer(tb testing.TB, idp *oidcIdP, edit func(*auth.Config)) *authServer {
	tb.Helper()
	db, err := store.Open(sampleCatalogue(tb))
	if err != nil {
		tb.Fatal(err)
	}
	live := store.NewLive(db)
	tb.Cleanup(func() { live.Close() })

	hs := httptest.NewUnstartedServer(nil)
	origin := "http://" + hs.Listener.Addr().String()
	base := origin + testBasePath
	cfg := auth.Config{Issuer: idp.URL, Audience: base + "/mcp"}
	if edit != nil {
		edit(&cfg)
	}
	ctx, cancel := context.WithCancel(context.Background())
	tb.Cleanup(cancel)
	v, err := auth.NewVerifier(ctx, cfg)
	if err != nil {
		tb.Fatalf("NewVerifier: %v", err)
	}
	tb.Cleanup(v.Close)
	srv, err := New(Config{Catalog: live, BaseURL: base, Auth: v, AuthorizationServers: []string{idp.URL}})
	if err != nil {
		tb.Fatal(err)
	}
	hs.Config.Handler = srv
	hs.Start()
	tb.Cleanup(hs.Close)
	return &authServer{
		fixture:  &fixture{t: tb, srv: srv, live: live, http: hs, base: base},
		idp:      idp,
		verifier: v,
		audience: cfg.Audience,
		metadata: origin + "/.well-known/oauth-protected-resource/api/v1/mcp",
	}
}

// claims are a valid token's claims for this server, changed by mods.
func (s *authServer) claims(mods ...func(jwt.MapClaims)) jwt.MapClaims {
	c := s.idp.claims(s.audience, time.Now())
	for _, m := range mods {
		m(c)
	}
	return c
}

// getWith GETs the card with exactly this Authorization header ("" for none).
func (s *authServer) getWith(authorization string) *response {
	s.t.Helper()
	return s.do(http.MethodGet, bearerCardPath, "Authorization", authorization)
}

// wantOK fails unless the request was let through.
func (s *authServer) wantOK(t testing.TB, r *response, what string) {
	t.Helper()
	if r.status != http.StatusOK {
		t.Errorf("%s: status %d, want 200; WWW-Authenticate %q; body %s",
			what, r.status, r.header.Get("WWW-Authenticate"), r.body)
		return
	}
	if c := r.header.Values("WWW-Authenticate"); len(c) != 0 {
		t.Errorf("%s: a 200 carries a challenge: %q", what, c)
	}
}

// wantRejected checks a 401 of docs/CONTRACT.md, Authentication, in full: exactly one Bearer
// challenge with exactly the expected parameters, error and
// error_description only when code is set, a description that says why
// (descWant is a fragment of it), and a problem body agreeing with it.
// token, when set, must not be echoed anywhere.
func (s *authServer) wantRejected(t testing.TB, r *response, what, code, descWant, token string) {
	t.Helper()
	if r.status != http.StatusUnauthorized {
		t.Errorf("%s: status %d, want 401; body %s", what, r.status, r.body)
		return
	}
	challenges := r.header.Values("WWW-Authenticate")
	if len(challenges) != 1 {
		t.Errorf("%s: %d WWW-Authenticate headers, want 1: %q", what, len(challenges), challenges)
		return
	}
	scheme, params, err := parseChallenge(challenges[0])
	if err != nil {
		t.Errorf("%s: WWW-Authenticate %q: %v", what, challenges[0], err)
		return
	}
	want := map[string]string{
		"realm":             "catalogd",
		"resource_metadata": s.metadata,
		"scope":             auth.Scope,
	}
	if code != "" {
		want["error"] = code
		want["error_description"] = params["error_description"] // checked below
	}
	if scheme != "Bearer" || !sameParams(params, want) {
		t.Errorf("%s: challenge %s %q, want Bearer %q", what, scheme, params, want)
	}
	desc := params["error_description"]
	if code != "" && (desc == "" || !strings.Contains(desc, descWant)) {
		t.Errorf("%s: error_description %q, want one that mentions %q", what, desc, descWant)
	}

	var p problem
	if err := json.Unmarshal(r.body, &p); err != nil {
		t.Errorf("%s: body is not JSON: %v: %s", what, err, r.body)
		return
	}
	if ct := r.header.Get("Content-Type"); ct != "application/problem+json" {
		t.Errorf("%s: Content-Type %q, want application/problem+json", what, ct)
	}
	if p.Status != http.StatusUnauthorized || p.Title != "Unauthorized" || p.Detail == "" {
		t.Errorf("%s: problem %+v", what, p)
	}
	if code != "" && p.Detail != desc {
		t.Errorf("%s: problem detail %q differs from error_description %q", what, p.Detail, desc)
	}
	if token != "" && (strings.Contains(string(r.body), token) || strings.Contains(challenges[0], token)) {
		t.Errorf("%s: the token is echoed in the response", what)
	}
}

func sameParams(got, want map[string]string) bool {
	if len(got) != len(want) {
		return false
	}
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			return false
		}
	}
	return true
}

// parseChallenge reads one RFC 9110 challenge, `scheme name="value", ...`,
// strictly: a client library parses it, so a sloppy one must fail here.
func parseChallenge(s string) (scheme string, params map[string]string, err error) {
	scheme, rest, ok := strings.Cut(s, " ")
	if !ok || scheme == "" {
		return "", nil, errors.New("no auth-scheme followed by parameters")
	}
	params = map[string]string{}
	for first := true; rest != ""; first = false {
		if !first {
			var ok bool
			if rest, ok = strings.CutPrefix(rest, ", "); !ok {
				return "", nil, fmt.Errorf("want \", \" between parameters at %q", rest)
			}
		}
		name, after, ok := strings.Cut(rest, "=")
		if !ok || name == "" || strings.ContainsAny(name, " ,\"") {
			return "", nil, fmt.Errorf("bad parameter name at %q", rest)
		}
		if !strings.HasPrefix(after, `"`) {
			return "", nil, fmt.Errorf("parameter %s is not a quoted-string", name)
		}
		var v strings.Builder
		i := 1
		for ; i < len(after) && after[i] != '"'; i++ {
			c := after[i]
			if c == '\\' {
				i++
				if i == len(after) {
					break
				}
				c = after[i]
			}
			if c < 0x20 || c == 0x7f {
				return "", nil, fmt.Errorf("control character in parameter %s", name)
			}
			v.WriteByte(c)
		}
		if i >= len(after) {
			return "", nil, fmt.Errorf("unterminated quoted-string in parameter %s", name)
		}
		if _, dup := params[name]; dup {
			return "", nil, fmt.Errorf("parameter %s repeated", name)
		}
		params[name] = v.String()
		rest = after[i+1:]
	}
	return scheme, params, nil
}

func TestParseChallenge(t *testing.T) {
	_, p, err := parseChallenge(`Bearer realm="catalogd", error_description="say \"hi\" \\ bye"`)
	if err != nil || p["realm"] != "catalogd" || p["error_description"] != `say "hi" \ bye` {
		t.Fatalf("got %q, %v", p, err)
	}
	for _, bad := range []string{
		`Bearer`, `Bearer realm=catalogd`, `Bearer realm="a",scope="b"`, `Bearer realm="a`,
		`Bearer realm="a", realm="b"`, `Bearer realm="a" scope="b"`,
	} {
		if _, _, err := parseChallenge(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

// TestBearerThroughHandler is the acceptance and rejection matrix of
// docs/CONTRACT.md, Authentication, token by token, through the server against an IdP publishing an
// RSA and an EC key.
func TestBearerThroughHandler(t *testing.T) {
	rsaKey := rsaSigningKey(t, "rsa-1", 0)
	ecKey := ecSigningKey(t, "ec-1", 0, jwkset.UseSig)
	encKey := ecSigningKey(t, "ec-enc", 1, jwkset.UseEnc)
	idp := newOIDCIdP(t, rsaKey, ecKey, encKey)
	s := newAuthServer(t, idp, func(c *auth.Config) {
		c.DenyClients = []string{"denied-azp", "denied-client-id", "denied-sub"}
	})
	if !s.verifier.Ready() || idp.discoveryFetches.Load() != 1 {
		t.Fatalf("keys not loaded through discovery: ready %v, %d discovery fetches",
			s.verifier.Ready(), idp.discoveryFetches.Load())
	}

	now := time.Now()
	set := func(k string, v any) func(jwt.MapClaims) { return func(c jwt.MapClaims) { c[k] = v } }
	del := func(ks ...string) func(jwt.MapClaims) {
		return func(c jwt.MapClaims) {
			for _, k := range ks {
				delete(c, k)
			}
		}
	}
	rs := func(mods ...func(jwt.MapClaims)) string { return rsaKey.sign(t, s.claims(mods...)) }

	t.Run("accepted", func(t *testing.T) {
		cases := []struct {
			name, authorization string
		}{
			{"RS256", "Bearer " + rs()},
			{"ES256", "Bearer " + ecKey.sign(t, s.claims())},
			{"scheme is case-insensitive", "bearer " + rs()},
			{"expired within the leeway", "Bearer " + rs(set("exp", now.Add(-10*time.Second).Unix()))},
			{"nbf within the leeway", "Bearer " + rs(set("nbf", now.Add(10*time.Second).Unix()))},
			{"audience array containing ours", "Bearer " + rs(set("aud", []string{"https://other.example/api", s.audience}))},
			{"scope string", "Bearer " + rs(set("scope", "openid profile catalog:read"))},
			{"scp array", "Bearer " + rs(del("scope"), set("scp", []string{"openid", auth.Scope}))},
			{"permissions array", "Bearer " + rs(del("scope"), set("permissions", []string{auth.Scope}))},
			{"only client_id names the client", "Bearer " + rs(del("azp", "sub"), set("client_id", "partner-2"))},
			// The client is azp; a denied sub or client_id behind an allowed
			// azp does not make it another client.
			{"denied sub behind an allowed azp", "Bearer " + rs(set("sub", "denied-sub"), set("client_id", "denied-client-id"))},
		}
		for _, c := range cases {
			s.wantOK(t, s.getWith(c.authorization), c.name)
		}
		// The same token opens every catalogue route.
		token := "Bearer " + rs()
		for _, target := range []string{"/catalog/sets", "/catalog/sets/SV1a/cards", "/catalog/search?q=pikachu", bearerCardPath} {
			s.wantOK(t, s.do(http.MethodGet, target, "Authorization", token), target)
		}
	})

	t.Run("rejected", func(t *testing.T) {
		otherRSA := rsaSigningKey(t, rsaKey.kid, 1)
		otherEC := ecSigningKey(t, ecKey.kid, 2, jwkset.UseSig)
		pubDER, err := x509.MarshalPKIXPublicKey(&bearerRSAKeys()[0].PublicKey)
		if err != nil {
			t.Fatal(err)
		}
		pubPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER})
		unsignedTok := jwt.NewWithClaims(jwt.SigningMethodNone, s.claims())
		unsignedTok.Header["kid"] = rsaKey.kid
		unsigned, err := unsignedTok.SignedString(jwt.UnsafeAllowNoneSignatureType)
		if err != nil {
			t.Fatal(err)
		}

		const (
			invalid = auth.CodeInvalidToken
			scope   = auth.CodeInsufficientScope
		)
		cases := []struct {
			name          string
			authorization string
			code          string // "" when no token counts as presented
			desc          string // a fragment of error_description
		}{
			{"no Authorization header", "", "", ""},
			{"Basic scheme", "Basic cGFydG5lci0xOnMzY3JldA==", "", ""},
			{"Bearer without a token", "Bearer", auth.CodeInvalidRequest, `"Bearer" followed by a single token`},
			{"two tokens", "Bearer " + rs() + " " + rs(), auth.CodeInvalidRequest, `"Bearer" followed by a single token`},
			{"garbage", "Bearer bm90LWEtand0", invalid, "well-formed"},
			{"three garbage segments", "Bearer aaa.bbb.ccc", invalid, "well-formed"},
			{"RS256 signed by another key with the same kid", "Bearer " + otherRSA.sign(t, s.claims()), invalid, "signature"},
			{"ES256 signed by another key with the same kid", "Bearer " + otherEC.sign(t, s.claims()), invalid, "signature"},
			{"unknown kid", "Bearer " + signAs(t, jwt.SigningMethodRS256, "no-such-kid", rsaKey.priv, s.claims()), invalid, "does not publish"},
			{"RS256 under the kid of an EC key", "Bearer " + signAs(t, jwt.SigningMethodRS256, ecKey.kid, rsaKey.priv, s.claims()), invalid, "algorithm"},
			{"key published for encryption", "Bearer " + signAs(t, jwt.SigningMethodES256, encKey.kid, encKey.priv, s.claims()), invalid, "algorithm"},
			{"alg none", "Bearer " + unsigned, invalid, "algorithm"},
			{"HS256 keyed with the RSA public key", "Bearer " + signAs(t, jwt.SigningMethodHS256, rsaKey.kid, pubPEM, s.claims()), invalid, "algorithm"},
			{"expired beyond the leeway", "Bearer " + rs(set("exp", now.Add(-31*time.Second).Unix())), invalid, "expired"},
			{"no exp", "Bearer " + rs(del("exp")), invalid, "expiry"},
			{"nbf beyond the leeway", "Bearer " + rs(set("nbf", now.Add(time.Minute).Unix())), invalid, "not valid yet"},
			{"iat beyond the leeway", "Bearer " + rs(set("iat", now.Add(time.Minute).Unix())), invalid, "issued in the future"},
			{"wrong issuer", "Bearer " + rs(set("iss", "https://evil.example")), invalid, "another issuer"},
			{"issuer with a trailing slash", "Bearer " + rs(set("iss", idp.URL+"/")), invalid, "another issuer"},
			{"wrong audience", "Bearer " + rs(set("aud", "https://other.example/api/v1/mcp")), invalid, "(aud)"},
			{"the API base as audience", "Bearer " + rs(set("aud", s.base)), invalid, "(aud)"},
			{"audience array without ours", "Bearer " + rs(set("aud", []string{"https://a.example", "https://b.example"})), invalid, "(aud)"},
			{"no audience", "Bearer " + rs(del("aud")), invalid, "(aud)"},
			{"no scope claim", "Bearer " + rs(del("scope")), scope, auth.Scope},
			{"another scope", "Bearer " + rs(set("scope", "openid catalog:write")), scope, auth.Scope},
			{"a scope that only starts like ours", "Bearer " + rs(set("scope", "catalog:reader")), scope, auth.Scope},
			{"scope as one comma-joined string", "Bearer " + rs(set("scope", "openid,catalog:read")), scope, auth.Scope},
			{"scp without ours", "Bearer " + rs(del("scope"), set("scp", []string{"catalog:write"})), scope, auth.Scope},
			{"no client", "Bearer " + rs(del("azp", "sub")), invalid, "names no client"},
			{"denied azp", "Bearer " + rs(set("azp", "denied-azp")), invalid, "not allowed"},
			{"denied client_id alone", "Bearer " + rs(del("azp", "sub"), set("client_id", "denied-client-id")), invalid, "not allowed"},
			{"denied sub alone", "Bearer " + rs(del("azp"), set("sub", "denied-sub")), invalid, "not allowed"},
		}
		for _, c := range cases {
			// Only JWT-shaped values are looked for in the answer: a short
			// non-token like "Bearer" is in it by right.
			token, _ := strings.CutPrefix(c.authorization, "Bearer ")
			if !strings.Contains(token, ".") {
				token = ""
			}
			s.wantRejected(t, s.getWith(c.authorization), c.name, c.code, c.desc, token)
		}

		// A token in the query string is never looked at: without a header
		// the request carries no credentials at all.
		token := rs()
		r := s.do(http.MethodGet, bearerCardPath+"?access_token="+url.QueryEscape(token), "Authorization", "")
		s.wantRejected(t, r, "token in the query string", "", "", token)
	})
}
