// Package idp is the benchmark harnesses' identity provider: catalogd's
// dev issuer with an RSA key on loopback, so that catalogd serve verifies
// RS256 tokens through a real JWKS as it does in production.
package idp

import (
	"crypto/rand"
	"crypto/rsa"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/catalogd/catalogd/server/auth"
)

const (
	// JWKSPath is the JWKS the dev issuer's discovery document names.
	JWKSPath     = "/.well-known/jwks.json"
	discoveryDoc = "/.well-known/openid-configuration"
)

// IdP serves its discovery document and JWKS. It has no token endpoint: it
// signs the harness's one token when it starts.
type IdP struct {
	Issuer string
	// Token is clientID's client-credentials access token, valid for a
	// day, as a partner would hold one.
	Token string
	srv   *http.Server
}

// Start starts an identity provider for catalogd serve on addr, whose token
// is clientID's, for the audience serve expects when none is given: the
// /mcp URL under its API.
func Start(addr, clientID string) (*IdP, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	issuer := "http://" + ln.Addr().String()
	// Without a token endpoint the client secret is never asked for; the
	// dev issuer only needs one to exist.
	dev := auth.NewDevIssuer(key, issuer, "http://"+addr+"/api/v1/mcp", clientID, rand.Text(), 24*time.Hour)
	token, _, err := dev.Token(time.Now())
	if err != nil {
		ln.Close()
		return nil, fmt.Errorf("identity provider: sign %s's token: %w", clientID, err)
	}
	mux := http.NewServeMux()
	mux.Handle(JWKSPath, dev.JWKSHandler())
	mux.Handle(discoveryDoc, dev.OpenIDConfigurationHandler())
	p := &IdP{Issuer: issuer, Token: token, srv: &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}}
	go p.srv.Serve(ln)
	return p, nil
}

// ServeFlags are the flags that make catalogd serve trust this provider.
func (p *IdP) ServeFlags() []string {
	return []string{"--issuer", p.Issuer, "--jwks-url", p.Issuer + JWKSPath}
}

// Close stops serving.
func (p *IdP) Close() { p.srv.Close() }
