package idp

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/catalogd/catalogd/server/auth"
	"github.com/golang-jwt/jwt/v5"
)

// TestIdP checks that catalogd's verifier, configured as ServeFlags configure
// catalogd serve, accepts the harness's token, and that the token is RS256.
func TestIdP(t *testing.T) {
	const clientID = "catalogd-test"
	const audience = "http://127.0.0.1:1/api/v1/mcp" // serve's on 127.0.0.1:1, when none is given
	p, err := Start("127.0.0.1:1", clientID)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	token := p.Token
	parsed, _, err := jwt.NewParser().ParseUnverified(token, jwt.MapClaims{})
	if err != nil {
		t.Fatal(err)
	}
	if parsed.Method.Alg() != "RS256" {
		t.Fatalf("token signed with %s, want RS256", parsed.Method.Alg())
	}

	resp, err := http.Get(p.Issuer + discoveryDoc)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc struct {
		Issuer  string `json:"issuer"`
		JWKSURI string `json:"jwks_uri"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	if doc.Issuer != p.Issuer || doc.JWKSURI != p.Issuer+JWKSPath {
		t.Fatalf("discovery names issuer %q and JWKS %q, want %q and %q", doc.Issuer, doc.JWKSURI, p.Issuer, p.Issuer+JWKSPath)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	v, err := auth.NewVerifier(ctx, auth.Config{Issuer: p.Issuer, JWKSURL: p.Issuer + JWKSPath, Audience: audience})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	pr, err := v.Verify(ctx, "Bearer "+token)
	if err != nil {
		t.Fatalf("catalogd's verifier refuses the token: %v", err)
	}
	if pr.ClientID != clientID || !strings.Contains(strings.Join(pr.Scopes, " "), auth.Scope) {
		t.Fatalf("principal %+v, want client %q with scope %s", pr, clientID, auth.Scope)
	}
}
