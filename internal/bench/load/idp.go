package main

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net"
	"net/http"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

const (
	apiPath      = "/api/v1"
	jwksPath     = "/.well-known/jwks.json"
	discoveryDoc = "/.well-known/openid-configuration"
	keyID        = "load-1"
	clientID     = "catalogd-load"
)

// idp is an identity provider on loopback: a discovery document, a JWKS
// with one RSA key, and tokens signed with it.
type idp struct {
	issuer string
	key    *rsa.PrivateKey
	srv    *http.Server
}

func startIdP() (*idp, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &idp{issuer: "http://" + ln.Addr().String(), key: key}
	jwks, err := json.Marshal(map[string]any{"keys": []map[string]string{{
		"kty": "RSA", "use": "sig", "alg": "RS256", "kid": keyID,
		"n": base64.RawURLEncoding.EncodeToString(key.N.Bytes()),
		"e": base64.RawURLEncoding.EncodeToString(big.NewInt(int64(key.E)).Bytes()),
	}}})
	if err != nil {
		return nil, err
	}
	discovery, err := json.Marshal(map[string]string{"issuer": p.issuer, "jwks_uri": p.issuer + jwksPath})
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("GET "+jwksPath, jsonHandler(jwks))
	mux.Handle("GET "+discoveryDoc, jsonHandler(discovery))
	p.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go p.srv.Serve(ln)
	return p, nil
}

func jsonHandler(body []byte) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	})
}

// token signs a client-credentials access token for audience, valid for a
// day, as a partner would hold one.
func (p *idp) token(audience string) (string, error) {
	now := time.Now()
	t := jwt.NewWithClaims(jwt.SigningMethodRS256, jwt.MapClaims{
		"iss":       p.issuer,
		"sub":       clientID + "@clients",
		"aud":       audience,
		"iat":       now.Unix(),
		"exp":       now.Add(24 * time.Hour).Unix(),
		"scope":     "catalog:read",
		"azp":       clientID,
		"client_id": clientID,
	})
	t.Header["kid"] = keyID
	return t.SignedString(p.key)
}

func (p *idp) close() { p.srv.Close() }
