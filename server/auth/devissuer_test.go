package auth

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"io"
	"maps"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/MicahParks/jwkset"
	"github.com/golang-jwt/jwt/v5"
)

const (
	devClientID = "dev-client"
	devSecret   = "dev-secret-0123456789"
)

func TestLoadOrCreateDevKey(t *testing.T) {
	path := filepath.Join(t.TempDir(), "catalog.db.devkey")
	first, err := LoadOrCreateDevKey(path)
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if _, ok := first.(*ecdsa.PrivateKey); !ok {
		t.Fatalf("created a %T, want *ecdsa.PrivateKey", first)
	}
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" {
		if got := info.Mode().Perm(); got != 0o600 {
			t.Errorf("mode = %v, want 0600", got)
		}
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries, want only the key (no temporary file left)", len(entries))
	}

	second, err := LoadOrCreateDevKey(path)
	if err != nil {
		t.Fatalf("reload: %v", err)
	}
	if !first.(*ecdsa.PrivateKey).Equal(second) {
		t.Fatal("reloading returned a different key")
	}
	a := NewDevIssuer(first, "http://127.0.0.1:8080", testAudience, devClientID, devSecret, 0)
	b := NewDevIssuer(second, "http://127.0.0.1:8080", testAudience, devClientID, devSecret, 0)
	if a.kid == "" || a.kid != b.kid {
		t.Fatalf("kid %q after reload, want %q", b.kid, a.kid)
	}
}

func TestLoadOrCreateDevKeyConcurrent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "devkey.pem")
	keys := make([]crypto.Signer, 8)
	var wg sync.WaitGroup
	for i := range keys {
		wg.Go(func() {
			k, err := LoadOrCreateDevKey(path)
			if err != nil {
				t.Errorf("LoadOrCreateDevKey: %v", err)
				return
			}
			keys[i] = k
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	for i, k := range keys[1:] {
		if !keys[0].(*ecdsa.PrivateKey).Equal(k) {
			t.Fatalf("creator %d got another key than creator 0", i+1)
		}
	}
}

func TestLoadOrCreateDevKeyErrors(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.pem")
	if err := os.WriteFile(garbage, []byte("not a key"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct{ name, path, want string }{
		{"NotPEM", garbage, "PKCS#8"},
		{"NoDirectory", filepath.Join(dir, "missing", "key.pem"), "missing"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadOrCreateDevKey(tc.path)
			if err == nil {
				t.Fatal("LoadOrCreateDevKey succeeded")
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.path) {
				t.Fatalf("error %q does not name %q and the path", err, tc.want)
			}
		})
	}
}

// TestThumbprintRFC7638 checks the kid computation against the example of
// RFC 7638 section 3.1.
func TestThumbprintRFC7638(t *testing.T) {
	n, err := base64.RawURLEncoding.DecodeString("0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw")
	if err != nil {
		t.Fatal(err)
	}
	jwk, err := jwkset.NewJWKFromKey(&rsa.PublicKey{N: new(big.Int).SetBytes(n), E: 65537}, jwkset.JWKOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := thumbprint(jwk.Marshal())
	if err != nil {
		t.Fatal(err)
	}
	if want := "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs"; got != want {
		t.Fatalf("thumbprint = %s, want %s", got, want)
	}
}

// devServer serves a DevIssuer on a real server and returns it with the
// issuer, which is the server's own origin as in `serve --dev`.
func devServer(t *testing.T, key crypto.Signer) (*httptest.Server, *DevIssuer) {
	t.Helper()
	mux := http.NewServeMux()
	srv := httptest.NewUnstartedServer(mux)
	issuer := "http://" + srv.Listener.Addr().String()
	d := NewDevIssuer(key, issuer, testAudience, devClientID, devSecret, 0)
	mux.Handle("/.well-known/openid-configuration", d.OpenIDConfigurationHandler())
	mux.Handle("/.well-known/jwks.json", d.JWKSHandler())
	mux.Handle("/oauth/token", d.TokenHandler())
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, d
}

type tokenAnswer struct {
	status int
	header http.Header
	body   map[string]any
}

func postToken(t *testing.T, srv *httptest.Server, contentType, body string, edit func(*http.Request)) tokenAnswer {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, srv.URL+"/oauth/token", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if edit != nil {
		edit(req)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("status %d, body %q is not JSON: %v", resp.StatusCode, raw, err)
	}
	return tokenAnswer{resp.StatusCode, resp.Header, m}
}

func jsonBody(fields map[string]any) string {
	b, _ := json.Marshal(fields)
	return string(b)
}

func TestDevTokenEndpoint(t *testing.T) {
	key, err := LoadOrCreateDevKey(filepath.Join(t.TempDir(), "devkey.pem"))
	if err != nil {
		t.Fatal(err)
	}
	srv, _ := devServer(t, key)
	good := map[string]any{
		"grant_type":    "client_credentials",
		"client_id":     devClientID,
		"client_secret": devSecret,
		"audience":      testAudience,
	}
	with := func(k string, v any) string {
		m := maps.Clone(good)
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
		return jsonBody(m)
	}
	form := func(edit func(url.Values)) string {
		f := url.Values{}
		for k, v := range good {
			f.Set(k, v.(string))
		}
		if edit != nil {
			edit(f)
		}
		return f.Encode()
	}
	const ctJSON, ctForm = "application/json", "application/x-www-form-urlencoded"
	basic := func(id, secret string) func(*http.Request) {
		return func(r *http.Request) { r.SetBasicAuth(url.QueryEscape(id), url.QueryEscape(secret)) }
	}

	cases := []struct {
		name   string
		ct     string
		body   string
		edit   func(*http.Request)
		status int
		code   string // "" for success
	}{
		{"JSON", ctJSON, jsonBody(good), nil, 200, ""},
		{"JSONWithCharset", ctJSON + "; charset=utf-8", jsonBody(good), nil, 200, ""},
		{"Form", ctForm, form(nil), nil, 200, ""},
		{"BasicAuth", ctForm, form(func(f url.Values) { f.Del("client_id"); f.Del("client_secret") }), basic(devClientID, devSecret), 200, ""},
		{"ScopeRequested", ctJSON, with("scope", Scope), nil, 200, ""},
		{"WrongSecret", ctJSON, with("client_secret", "nope"), nil, 401, "invalid_client"},
		{"WrongClient", ctJSON, with("client_id", "someone"), nil, 401, "invalid_client"},
		{"NoSecret", ctJSON, with("client_secret", nil), nil, 401, "invalid_client"},
		{"WrongBasicSecret", ctForm, form(func(f url.Values) { f.Del("client_secret") }), basic(devClientID, "nope"), 401, "invalid_client"},
		{"BasicAndBody", ctForm, form(nil), basic(devClientID, devSecret), 400, "invalid_request"},
		{"WrongGrant", ctJSON, with("grant_type", "password"), nil, 400, "unsupported_grant_type"},
		{"NoGrant", ctJSON, with("grant_type", nil), nil, 400, "invalid_request"},
		{"WrongAudience", ctJSON, with("audience", "https://other.example/mcp"), nil, 400, "invalid_target"},
		{"NoAudience", ctJSON, with("audience", nil), nil, 400, "invalid_request"},
		{"WrongScope", ctJSON, with("scope", "catalog:write"), nil, 400, "invalid_scope"},
		{"NonStringField", ctJSON, with("client_id", 42), nil, 400, "invalid_request"},
		{"NotJSON", ctJSON, "grant_type=client_credentials", nil, 400, "invalid_request"},
		{"RepeatedFormField", ctForm, form(func(f url.Values) { f.Add("audience", testAudience) }), nil, 400, "invalid_request"},
		{"NoContentType", "", jsonBody(good), nil, 400, "invalid_request"},
		{"TextPlain", "text/plain", jsonBody(good), nil, 400, "invalid_request"},
		{"TooLarge", ctJSON, `{"pad":"` + strings.Repeat("x", 70<<10) + `"}`, nil, 413, "invalid_request"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := postToken(t, srv, tc.ct, tc.body, tc.edit)
			if a.status != tc.status {
				t.Fatalf("status = %d, want %d (body %v)", a.status, tc.status, a.body)
			}
			if got := a.header.Get("Cache-Control"); got != "no-store" {
				t.Errorf("Cache-Control = %q, want no-store", got)
			}
			if tc.code != "" {
				if got := a.body["error"]; got != tc.code {
					t.Errorf("error = %v, want %s", got, tc.code)
				}
				if d, _ := a.body["error_description"].(string); d == "" {
					t.Error("no error_description")
				}
				if _, ok := a.body["access_token"]; ok {
					t.Error("an error answer carries an access_token")
				}
				if tc.status == 401 && !strings.HasPrefix(a.header.Get("WWW-Authenticate"), "Basic ") {
					t.Errorf("WWW-Authenticate = %q, want a Basic challenge", a.header.Get("WWW-Authenticate"))
				}
				return
			}
			if got := a.body["token_type"]; got != "Bearer" {
				t.Errorf("token_type = %v", got)
			}
			if got := a.body["expires_in"]; got != float64(86400) {
				t.Errorf("expires_in = %v, want 86400", got)
			}
			if got := a.body["scope"]; got != Scope {
				t.Errorf("scope = %v", got)
			}
			if tok, _ := a.body["access_token"].(string); strings.Count(tok, ".") != 2 {
				t.Errorf("access_token = %q, not a JWT", tok)
			}
		})
	}

	t.Run("GET", func(t *testing.T) {
		resp, err := srv.Client().Get(srv.URL + "/oauth/token")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "POST" {
			t.Fatalf("GET: status %d, Allow %q; want 405, POST", resp.StatusCode, resp.Header.Get("Allow"))
		}
	})
}

// TestDevTokenVerifies: a token from the dev token endpoint passes the same
// Verifier as production tokens, pointed at the dev issuer's origin.
func TestDevTokenVerifies(t *testing.T) {
	for _, tc := range []struct {
		name string
		key  func(t *testing.T) crypto.Signer
	}{
		{"ECDSA", func(t *testing.T) crypto.Signer {
			k, err := LoadOrCreateDevKey(filepath.Join(t.TempDir(), "devkey.pem"))
			if err != nil {
				t.Fatal(err)
			}
			return k
		}},
		{"RSA", func(t *testing.T) crypto.Signer { return rsaSigner() }},
		{"Ed25519", func(t *testing.T) crypto.Signer { return edSigner() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, d := devServer(t, tc.key(t))
			v, err := NewVerifier(context.Background(), Config{Issuer: srv.URL, Audience: testAudience})
			if err != nil {
				t.Fatal(err)
			}
			defer v.Close()
			if !v.Ready() {
				t.Fatal("Ready() = false against the dev issuer")
			}

			a := postToken(t, srv, "application/json", jsonBody(map[string]any{
				"grant_type": "client_credentials", "client_id": devClientID,
				"client_secret": devSecret, "audience": testAudience,
			}), nil)
			token, _ := a.body["access_token"].(string)
			p, err := v.Verify(context.Background(), "Bearer "+token)
			if err != nil {
				t.Fatalf("Verify(dev token): %v", err)
			}
			if p.ClientID != devClientID || p.Subject != devClientID || !slices.Equal(p.Scopes, []string{Scope}) {
				t.Errorf("principal = %+v", p)
			}
			if d := time.Until(p.ExpiresAt); d < 23*time.Hour || d > 24*time.Hour {
				t.Errorf("expires in %v, want about 24h", d)
			}

			// The claims are what production IdPs put in access tokens.
			var c jwt.MapClaims
			parsed, _, err := jwt.NewParser().ParseUnverified(token, &c)
			if err != nil {
				t.Fatal(err)
			}
			if parsed.Header["kid"] != d.kid || parsed.Header["typ"] != "at+jwt" {
				t.Errorf("header = %v", parsed.Header)
			}
			for claim, want := range map[string]any{
				"iss": srv.URL, "sub": devClientID, "azp": devClientID, "client_id": devClientID,
				"scope": Scope, "aud": []any{testAudience},
			} {
				got, _ := json.Marshal(c[claim])
				w, _ := json.Marshal(want)
				if string(got) != string(w) {
					t.Errorf("claim %s = %s, want %s", claim, got, w)
				}
			}
			for _, claim := range []string{"iat", "nbf", "exp", "jti"} {
				if _, ok := c[claim]; !ok {
					t.Errorf("claim %s missing", claim)
				}
			}

			// Token, as `catalogd token` uses it, makes the same tokens.
			direct, exp, err := d.Token(time.Now())
			if err != nil {
				t.Fatal(err)
			}
			if _, err := v.Verify(context.Background(), "Bearer "+direct); err != nil {
				t.Fatalf("Verify(Token()): %v", err)
			}
			if d := time.Until(exp); d < 23*time.Hour {
				t.Errorf("Token expiry in %v", d)
			}
		})
	}
}

func TestDevIssuerDocuments(t *testing.T) {
	key, err := LoadOrCreateDevKey(filepath.Join(t.TempDir(), "devkey.pem"))
	if err != nil {
		t.Fatal(err)
	}
	srv, d := devServer(t, key)
	get := func(path string) map[string]any {
		resp, err := srv.Client().Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("GET %s: %d %s", path, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		var m map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	oidc := get("/.well-known/openid-configuration")
	for k, want := range map[string]any{
		"issuer":                srv.URL,
		"jwks_uri":              srv.URL + "/.well-known/jwks.json",
		"token_endpoint":        srv.URL + "/oauth/token",
		"grant_types_supported": []any{"client_credentials"},
		"scopes_supported":      []any{Scope},
	} {
		got, _ := json.Marshal(oidc[k])
		w, _ := json.Marshal(want)
		if string(got) != string(w) {
			t.Errorf("%s = %s, want %s", k, got, w)
		}
	}

	jwks := get("/.well-known/jwks.json")
	keys, _ := jwks["keys"].([]any)
	if len(keys) != 1 {
		t.Fatalf("JWKS = %v, want one key", jwks)
	}
	k := keys[0].(map[string]any)
	if k["kid"] != d.kid || k["alg"] != "ES256" || k["use"] != "sig" || k["kty"] != "EC" {
		t.Errorf("JWK = %v", k)
	}
	if _, ok := k["d"]; ok {
		t.Fatal("the JWKS publishes the private key")
	}

	resp, err := srv.Client().Post(srv.URL+"/.well-known/jwks.json", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST jwks.json: status %d, want 405", resp.StatusCode)
	}
}

func TestDevIssuerBadKey(t *testing.T) {
	d := NewDevIssuer(nil, "http://127.0.0.1:8080", testAudience, devClientID, devSecret, 0)
	if _, _, err := d.Token(time.Now()); err == nil {
		t.Fatal("Token succeeded without a key")
	}
	rec := httptest.NewRecorder()
	d.JWKSHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/.well-known/jwks.json", nil))
	if rec.Code != http.StatusInternalServerError {
		t.Errorf("JWKS status = %d, want 500", rec.Code)
	}
	rec = httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, "/oauth/token", strings.NewReader(jsonBody(map[string]any{
		"grant_type": "client_credentials", "client_id": devClientID, "client_secret": devSecret, "audience": testAudience,
	})))
	req.Header.Set("Content-Type", "application/json")
	d.TokenHandler().ServeHTTP(rec, req)
	if rec.Code != http.StatusInternalServerError || !strings.Contains(rec.Body.String(), "server_error") {
		t.Errorf("token status = %d %s, want 500 server_error", rec.Code, rec.Body)
	}
}
