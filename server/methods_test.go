package server

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/catalogd/catalogd/server/auth"
)

// everyMethod is what TestEveryRouteEveryMethod sends to every path: the
// methods of RFC 9110 and 5789, and one nobody defines.
var everyMethod = []string{
	http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
	http.MethodDelete, http.MethodOptions, http.MethodTrace, http.MethodConnect, "BREW",
}

// Dev issuer settings of the fixture that serves the dev routes.
const (
	methodsDevClient   = "dev"
	methodsDevSecret   = "dev-secret"
	methodsDevAudience = "https://dev.example/api/v1/mcp"
)

// routeMethods is one path of routes.go and the methods registered on it.
type routeMethods struct {
	name   string
	path   string // from the origin, query included
	allow  string // the Allow header of OPTIONS and 405, as the router writes it
	authed bool   // behind a bearer token (route.serve): without a token, its methods answer 401
	// options is the status of OPTIONS: the router's own answer (200, no
	// body) unless the route registers OPTIONS itself.
	options int
	dev     bool // registered only with a DevIssuer
}

// methodsRoutes is routes.go as a table: every path, its methods, and
// whether it needs a token.
func methodsRoutes() []routeMethods {
	const getHead, post = "GET, HEAD, OPTIONS", "OPTIONS, POST"
	return []routeMethods{
		{name: "listSets", path: testBasePath + "/catalog/sets", allow: getHead, authed: true, options: http.StatusOK},
		{name: "listSetCards", path: testBasePath + "/catalog/sets/SV1a/cards?pageSize=5", allow: getHead, authed: true, options: http.StatusOK},
		{name: "getCard", path: testBasePath + "/catalog/cards/jp-SV1a-001", allow: getHead, authed: true, options: http.StatusOK},
		{name: "search", path: testBasePath + "/catalog/search?q=pikachu", allow: getHead, authed: true, options: http.StatusOK},
		{name: "mcp", path: testBasePath + "/mcp", allow: post, authed: true, options: http.StatusOK},
		{name: "healthz", path: "/healthz", allow: getHead, options: http.StatusOK},
		{name: "readyz", path: "/readyz", allow: getHead, options: http.StatusOK},
		{name: "openapi", path: testBasePath + "/openapi.yaml", allow: getHead, options: http.StatusOK},
		{name: "docs", path: testBasePath + "/docs", allow: getHead, options: http.StatusOK},
		{name: "docs script", path: testBasePath + "/docs/page.js", allow: getHead, options: http.StatusOK},
		{name: "docs document", path: testBasePath + "/docs/openapi.yaml", allow: getHead, options: http.StatusOK},
		{name: "metadata", path: "/.well-known/oauth-protected-resource", allow: getHead, options: http.StatusNoContent},
		{name: "metadata of the audience", path: "/.well-known/oauth-protected-resource/api/v1/mcp", allow: getHead, options: http.StatusNoContent},
		// OPTIONS on the dev issuer's documents is TestDevIssuerDocumentsAnswerOptions.
		{name: "jwks", path: "/.well-known/jwks.json", allow: getHead, dev: true},
		{name: "discovery", path: "/.well-known/openid-configuration", allow: getHead, dev: true},
		{name: "authorization server", path: "/.well-known/oauth-authorization-server", allow: getHead, dev: true},
		{name: "token", path: "/oauth/token", allow: post, options: http.StatusOK, dev: true},
	}
}

// TestEveryRouteEveryMethod sends every method to every route of routes.go,
// with and without a token, and to a path no route claims: a registered
// method answers 200 (401 without a token where one is needed), OPTIONS
// answers Allow and no body, and anything else is 405 with Allow and a
// problem body. The router answers the method before authentication runs,
// so a wrong method is 405 with or without a token.
func TestEveryRouteEveryMethod(t *testing.T) {
	for _, withDev := range []bool{false, true} {
		name := "production"
		if withDev {
			name = "dev"
		}
		t.Run(name, func(t *testing.T) {
			f := newFixtureWith(t, func(c *Config) {
				if withDev {
					c.DevIssuer = auth.NewDevIssuer(bearerECKeys()[1], "https://dev.example", methodsDevAudience,
						methodsDevClient, methodsDevSecret, time.Hour)
				}
			})
			for _, rt := range methodsRoutes() {
				for _, method := range everyMethod {
					for _, token := range []bool{true, false} {
						if rt.dev && !withDev {
							wantUnroutedPath(t, sendMethod(t, f, rt.path, method, token), method, rt.path)
							continue
						}
						if rt.dev && method == http.MethodOptions && rt.options == 0 {
							continue
						}
						checkRouteMethod(t, f, rt, method, token)
					}
				}
			}
			for _, method := range everyMethod {
				for _, path := range []string{testBasePath + "/catalog/nothing", "/nothing", testBasePath + "/catalog/sets/"} {
					wantUnroutedPath(t, sendMethod(t, f, path, method, true), method, path)
				}
			}
		})
	}
}

// checkRouteMethod sends method to rt and checks the answer against the table.
func checkRouteMethod(t *testing.T, f *fixture, rt routeMethods, method string, token bool) {
	t.Helper()
	what := method + " " + rt.path
	if !token {
		what += " without a token"
	}
	r := sendMethod(t, f, rt.path, method, token)
	registered := slices.Contains(strings.Split(rt.allow, ", "), method) && method != http.MethodOptions
	switch {
	case registered && rt.authed && !token:
		if r.status != http.StatusUnauthorized {
			t.Errorf("%s: status %d, want 401; body %.300s", what, r.status, r.body)
			return
		}
		if r.header.Get("WWW-Authenticate") == "" {
			t.Errorf("%s: a 401 without WWW-Authenticate", what)
		}
		wantProblemBody(t, r, method, what, http.StatusUnauthorized)
	case registered:
		if r.status != http.StatusOK {
			t.Errorf("%s: status %d, want 200; body %.300s", what, r.status, r.body)
		}
		if method == http.MethodHead && len(r.body) != 0 {
			t.Errorf("%s: %d bytes of body", what, len(r.body))
		}
	case method == http.MethodOptions:
		if r.status != rt.options {
			t.Errorf("%s: status %d, want %d; body %.300s", what, r.status, rt.options, r.body)
		}
		if got := r.header.Get("Allow"); got != rt.allow {
			t.Errorf("%s: Allow %q, want %q", what, got, rt.allow)
		}
		if len(r.body) != 0 {
			t.Errorf("%s: body %q, want none", what, r.body)
		}
	default:
		if r.status != http.StatusMethodNotAllowed {
			t.Errorf("%s: status %d, want 405; body %.300s", what, r.status, r.body)
			return
		}
		if got := r.header.Get("Allow"); got != rt.allow {
			t.Errorf("%s: Allow %q, want %q", what, got, rt.allow)
		}
		p := wantProblemBody(t, r, method, what, http.StatusMethodNotAllowed)
		if p != nil && !strings.Contains(p.Detail, method) {
			t.Errorf("%s: problem detail %q does not name the method", what, p.Detail)
		}
	}
}

// wantUnroutedPath checks the 404 of a path no route claims.
func wantUnroutedPath(t *testing.T, r *response, method, path string) {
	t.Helper()
	what := method + " " + path
	if r.status != http.StatusNotFound {
		t.Errorf("%s: status %d, want 404; body %.300s", what, r.status, r.body)
		return
	}
	if allow := r.header.Get("Allow"); allow != "" {
		t.Errorf("%s: a 404 with Allow %q", what, allow)
	}
	wantProblemBody(t, r, method, what, http.StatusNotFound)
}

// wantProblemBody checks a problem+json answer; a HEAD has its headers only.
func wantProblemBody(t *testing.T, r *response, method, what string, status int) *problem {
	t.Helper()
	if ct := r.header.Get("Content-Type"); ct != "application/problem+json" {
		t.Errorf("%s: Content-Type %q, want application/problem+json", what, ct)
	}
	if method == http.MethodHead {
		if len(r.body) != 0 {
			t.Errorf("%s: %d bytes of body", what, len(r.body))
		}
		return nil
	}
	var p problem
	if err := json.Unmarshal(r.body, &p); err != nil {
		t.Errorf("%s: body is not a problem: %v: %.300s", what, err, r.body)
		return nil
	}
	if p.Type != "about:blank" || p.Status != status || p.Title != http.StatusText(status) || p.Detail == "" {
		t.Errorf("%s: problem %+v", what, p)
	}
	return &p
}

// sendMethod sends method to path (from the origin), with the fixture's
// token when token is set and, for POST, the body each POST route needs to
// succeed.
func sendMethod(t *testing.T, f *fixture, path, method string, token bool) *response {
	t.Helper()
	var body io.Reader
	header := http.Header{}
	if method == http.MethodPost {
		switch {
		case strings.HasSuffix(path, "/mcp"):
			body = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`)
			header.Set("Content-Type", "application/json")
			header.Set("Accept", "application/json, text/event-stream")
			header.Set("MCP-Protocol-Version", "2025-11-25")
		case path == "/oauth/token":
			body = strings.NewReader(url.Values{
				"grant_type": {"client_credentials"}, "client_id": {methodsDevClient},
				"client_secret": {methodsDevSecret}, "audience": {methodsDevAudience},
			}.Encode())
			header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
	}
	req, err := http.NewRequest(method, f.http.URL+path, body)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	req.Header = header
	if token {
		req.Header.Set("Authorization", "Bearer "+f.token)
	}
	resp, err := f.http.Client().Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: read body: %v", method, path, err)
	}
	return &response{status: resp.StatusCode, header: resp.Header, body: b}
}
