package server

import (
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// TestUnauthorized covers the 401 of docs/CONTRACT.md, Authentication, on every catalogue
// route: the challenge, with error attributes only when a token was
// presented, and a problem body; and authentication before parameters.
func TestUnauthorized(t *testing.T) {
	f := newFixture(t)
	now := time.Now()
	claims := func(mod func(jwt.MapClaims)) jwt.MapClaims {
		c := jwt.MapClaims{
			"iss": f.idp.URL, "aud": []string{f.base + "/mcp"}, "sub": "partner-1", "azp": "partner-1",
			"scope": "catalog:read", "iat": now.Unix(), "exp": now.Add(time.Hour).Unix(),
		}
		mod(c)
		return c
	}
	metadata := f.http.URL + "/.well-known/oauth-protected-resource/api/v1/mcp"
	base := `Bearer realm="catalogd", resource_metadata="` + metadata + `", scope="catalog:read"`
	cases := []struct {
		name          string
		authorization string
		wantError     string // the error attribute; "" for none
	}{
		{"no credentials", "", ""},
		{"another scheme", "Basic cGFydG5lcjpzZWNyZXQ=", ""},
		{"garbage", "Bearer not-a-jwt", "invalid_token"},
		{"wrong audience", "Bearer " + f.idp.sign(t, claims(func(c jwt.MapClaims) { c["aud"] = "https://elsewhere.example/mcp" })), "invalid_token"},
		{"wrong issuer", "Bearer " + f.idp.sign(t, claims(func(c jwt.MapClaims) { c["iss"] = "https://evil.example" })), "invalid_token"},
		{"expired", "Bearer " + f.idp.sign(t, claims(func(c jwt.MapClaims) { c["exp"] = now.Add(-time.Hour).Unix() })), "invalid_token"},
		{"no scope", "Bearer " + f.idp.sign(t, claims(func(c jwt.MapClaims) { c["scope"] = "catalog:write" })), "insufficient_scope"},
	}
	targets := []string{"/catalog/sets", "/catalog/sets/SV1a/cards?page=0", "/catalog/cards/jp-SV1a-001", "/catalog/search?q=x&limit=0"}
	for _, c := range cases {
		for _, target := range targets {
			r := f.do(http.MethodGet, target, "Authorization", c.authorization)
			if r.status != http.StatusUnauthorized {
				t.Fatalf("%s, %s: status %d, want 401 (before any parameter check)", c.name, target, r.status)
			}
			challenge := r.header.Get("WWW-Authenticate")
			if !strings.HasPrefix(challenge, base) {
				t.Errorf("%s, %s: WWW-Authenticate %q, want it to start with %q", c.name, target, challenge, base)
			}
			hasError := strings.Contains(challenge, "error=")
			if c.wantError == "" && hasError {
				t.Errorf("%s: a request without a token got an error attribute: %s", c.name, challenge)
			}
			if c.wantError != "" && (!strings.Contains(challenge, `error="`+c.wantError+`"`) || !strings.Contains(challenge, `error_description="`)) {
				t.Errorf("%s: WWW-Authenticate %q, want error=%q and a description", c.name, challenge, c.wantError)
			}
			var p problem
			r.json(t, &p)
			if p.Status != 401 || r.header.Get("Content-Type") != "application/problem+json" {
				t.Errorf("%s: body %s", c.name, r.body)
			}
		}
	}
	// A token in the query string is never accepted.
	r := f.do(http.MethodGet, "/catalog/sets?access_token="+f.token, "Authorization", "")
	if r.status != http.StatusUnauthorized {
		t.Errorf("a token in the query string: status %d", r.status)
	}
}

func TestProtectedResourceMetadata(t *testing.T) {
	f := newFixture(t)
	for _, path := range []string{"/.well-known/oauth-protected-resource/api/v1/mcp", "/.well-known/oauth-protected-resource"} {
		req, _ := http.NewRequest(http.MethodGet, f.http.URL+path, nil)
		resp, err := f.http.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var m struct {
			Resource             string   `json:"resource"`
			AuthorizationServers []string `json:"authorization_servers"`
			Scopes               []string `json:"scopes_supported"`
			Methods              []string `json:"bearer_methods_supported"`
		}
		err = json.NewDecoder(resp.Body).Decode(&m)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: status %d, %v", path, resp.StatusCode, err)
		}
		if m.Resource != f.base+"/mcp" || len(m.AuthorizationServers) != 1 || m.AuthorizationServers[0] != f.idp.URL ||
			len(m.Scopes) != 1 || m.Scopes[0] != "catalog:read" || len(m.Methods) != 1 || m.Methods[0] != "header" {
			t.Errorf("%s: %+v", path, m)
		}
		if resp.Header.Get("Access-Control-Allow-Origin") != "*" {
			t.Errorf("%s: no CORS header", path)
		}
	}
}

// TestDevIssuerThroughTheServer: with a dev issuer, the server is its own
// identity provider, and its tokens pass the same verifier.
func TestDevIssuerThroughTheServer(t *testing.T) {
	f := newFixture(t)
	srv, err := New(Config{Catalog: f.live, BaseURL: f.base, Auth: f.idp.verifier, DevIssuer: f.idp.issuer})
	if err != nil {
		t.Fatal(err)
	}
	f.http.Config.Handler = srv
	body := `{"grant_type":"client_credentials","client_id":"partner-1","client_secret":"s3cret","audience":"` + f.base + `/mcp"}`
	resp, err := f.http.Client().Post(f.http.URL+"/oauth/token", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var tok struct {
		AccessToken string `json:"access_token"`
		TokenType   string `json:"token_type"`
		ExpiresIn   int    `json:"expires_in"`
		Scope       string `json:"scope"`
	}
	json.NewDecoder(resp.Body).Decode(&tok)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || tok.AccessToken == "" || tok.ExpiresIn != 86400 || tok.Scope != "catalog:read" {
		t.Fatalf("token endpoint: status %d, %+v", resp.StatusCode, tok)
	}
	f.token = tok.AccessToken
	f.get("/catalog/sets").wantStatus(t, http.StatusOK)

	resp, err = f.http.Client().Get(f.http.URL + "/.well-known/jwks.json")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("jwks: %v %v", resp, err)
	}
	resp.Body.Close()

	// A page whose name an attacker points at 127.0.0.1 (DNS rebinding)
	// is refused whatever it asks for; a loopback name is served.
	_, port, _ := net.SplitHostPort(f.http.Listener.Addr().String())
	for host, want := range map[string]int{
		"rebind.attacker.example:" + port: http.StatusMisdirectedRequest,
		"rebind.attacker.example":         http.StatusMisdirectedRequest,
		"10.0.0.1:" + port:                http.StatusMisdirectedRequest,
		"localhost:" + port:               http.StatusOK,
		"[::1]:" + port:                   http.StatusOK,
		"127.0.0.2:" + port:               http.StatusOK,
		"LocalHost:" + port:               http.StatusOK,
		"app.localhost:" + port:           http.StatusOK,
		"localhost.:" + port:              http.StatusOK,
		"localhost.attacker.example":      http.StatusMisdirectedRequest,
	} {
		for _, path := range []string{"/oauth/token", "/api/v1/docs/settings.json"} {
			req, _ := http.NewRequest(http.MethodPost, f.http.URL+path, strings.NewReader(body))
			if path != "/oauth/token" {
				req, _ = http.NewRequest(http.MethodGet, f.http.URL+path, nil)
			}
			req.Header.Set("Content-Type", "application/json")
			req.Host = host
			resp, err := f.http.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != want {
				t.Errorf("%s for Host %s: %d, want %d", path, host, resp.StatusCode, want)
			}
		}
	}
}
