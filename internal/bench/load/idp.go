package main

import (
	"crypto/rand"
	"crypto/rsa"
	"net"
	"net/http"
	"time"

	"github.com/catalogd/catalogd/server/auth"
)

const (
	apiPath = "/api/v1"
	// The dev issuer's discovery document names jwksPath as its JWKS, the
	// same URL catalogd serve is given with --jwks-url.
	jwksPath     = "/.well-known/jwks.json"
	discoveryDoc = "/.well-known/openid-configuration"
	clientID     = "catalogd-load"
)

// idp is an identity provider on loopback: catalogd's dev issuer with an
// RSA key, so that its tokens are RS256 like the production IdP's, serving
// its discovery document and JWKS. It has no token endpoint: the harness
// signs its one token itself.
type idp struct {
	issuer string
	dev    *auth.DevIssuer
	srv    *http.Server
}

// startIdP starts an identity provider whose tokens are for audience.
func startIdP(audience string) (*idp, error) {
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
	dev := auth.NewDevIssuer(key, issuer, audience, clientID, rand.Text(), 24*time.Hour)
	mux := http.NewServeMux()
	mux.Handle(jwksPath, dev.JWKSHandler())
	mux.Handle(discoveryDoc, dev.OpenIDConfigurationHandler())
	p := &idp{issuer: issuer, dev: dev, srv: &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}}
	go p.srv.Serve(ln)
	return p, nil
}

// token signs a client-credentials access token valid for a day, as a
// partner would hold one.
func (p *idp) token() (string, error) {
	t, _, err := p.dev.Token(time.Now())
	return t, err
}

func (p *idp) close() { p.srv.Close() }
