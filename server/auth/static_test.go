package auth

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestVerifierWithGivenJWKS: a verifier given the dev issuer's key set
// accepts the issuer's tokens without fetching anything, and rejects a
// token signed by any other key as signed by an unknown one.
func TestVerifierWithGivenJWKS(t *testing.T) {
	key, err := LoadOrCreateDevKey(filepath.Join(t.TempDir(), "key.pem"))
	if err != nil {
		t.Fatal(err)
	}
	const issuer, audience = "http://127.0.0.1:1", "http://127.0.0.1:1/api/v1/mcp"
	dev := NewDevIssuer(key, issuer, audience, devClientID, devSecret, time.Hour)
	jwks, err := dev.JWKS()
	if err != nil {
		t.Fatal(err)
	}
	v, err := NewVerifier(context.Background(), Config{Issuer: issuer, Audience: audience, JWKS: jwks})
	if err != nil {
		t.Fatalf("NewVerifier: %v", err)
	}
	defer v.Close()
	if !v.Ready() {
		t.Fatal("a verifier given its keys is not ready")
	}
	token, _, err := dev.Token(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	p, err := v.Verify(context.Background(), "Bearer "+token)
	if err != nil {
		t.Fatalf("Verify of the dev issuer's token: %v", err)
	}
	if got, want := p.ClientID, devClientID; got != want {
		t.Fatalf("client %q, want %q", got, want)
	}

	other := NewDevIssuer(ecKey2(t).signer, issuer, audience, devClientID, devSecret, time.Hour)
	forged, _, err := other.Token(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	_, err = v.Verify(context.Background(), "Bearer "+forged)
	authError(t, err, CodeInvalidToken, ReasonUnknownKey)
}

func TestVerifierGivenBadJWKS(t *testing.T) {
	for name, jwks := range map[string]string{
		"NotJSON": "{", "NoKeys": `{"keys":[]}`, "BadKey": `{"keys":[{"kty":"EC"}]}`,
	} {
		t.Run(name, func(t *testing.T) {
			v, err := NewVerifier(context.Background(), Config{Issuer: "http://127.0.0.1:1", Audience: "x", JWKS: []byte(jwks)})
			if err == nil {
				v.Close()
				t.Fatal("NewVerifier accepted a bad JWKS")
			}
			if !strings.Contains(err.Error(), "JWKS") {
				t.Fatalf("error %q does not name the JWKS", err)
			}
		})
	}
}
