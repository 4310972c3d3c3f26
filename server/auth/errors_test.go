package auth

import (
	"context"
	"testing"
)

const testMetadataURL = "http://127.0.0.1:8080/.well-known/oauth-protected-resource/api/v1/mcp"

func TestChallenge(t *testing.T) {
	cases := []struct {
		name string
		err  *Error
		want string
	}{
		{
			"NoCredentials",
			newError("", ReasonMissing, "no bearer token was presented"),
			`Bearer realm="catalogd", resource_metadata="` + testMetadataURL + `", scope="catalog:read"`,
		},
		{
			"InvalidToken",
			newError(CodeInvalidToken, ReasonExpired, "the token has expired"),
			`Bearer realm="catalogd", resource_metadata="` + testMetadataURL + `", scope="catalog:read", error="invalid_token", error_description="the token has expired"`,
		},
		{
			"InsufficientScope",
			newError(CodeInsufficientScope, ReasonScope, "the token does not grant the catalog:read scope"),
			`Bearer realm="catalogd", resource_metadata="` + testMetadataURL + `", scope="catalog:read", error="insufficient_scope", error_description="the token does not grant the catalog:read scope"`,
		},
		{
			"InvalidRequest",
			newError(CodeInvalidRequest, ReasonMalformed, ""),
			`Bearer realm="catalogd", resource_metadata="` + testMetadataURL + `", scope="catalog:read", error="invalid_request"`,
		},
		{
			"Escaping",
			newError(CodeInvalidToken, ReasonMalformed, "say \"hi\" \\ bye\r\nX-Injected: 1"),
			`Bearer realm="catalogd", resource_metadata="` + testMetadataURL + `", scope="catalog:read", error="invalid_token", error_description="say \"hi\" \\ bye  X-Injected: 1"`,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.err.Challenge(testMetadataURL); got != tc.want {
				t.Fatalf("Challenge:\n got %s\nwant %s", got, tc.want)
			}
		})
	}
	t.Run("EscapedMetadataURL", func(t *testing.T) {
		got := newError("", ReasonMissing, "").Challenge(`http://x/"a\b`)
		want := `Bearer realm="catalogd", resource_metadata="http://x/\"a\\b", scope="catalog:read"`
		if got != want {
			t.Fatalf("Challenge:\n got %s\nwant %s", got, want)
		}
	})
}

// TestChallengeFromVerify checks the challenges of real rejections.
func TestChallengeFromVerify(t *testing.T) {
	idp := newTestIdP(t, ecKey(t))
	v := newVerifier(t, idp, nil)
	_, err := v.Verify(context.Background(), "")
	if got, want := err.(*Error).Challenge(testMetadataURL), `Bearer realm="catalogd", resource_metadata="`+testMetadataURL+`", scope="catalog:read"`; got != want {
		t.Errorf("no credentials:\n got %s\nwant %s", got, want)
	}
	_, err = v.Verify(context.Background(), "Bearer a.b.c")
	if got, want := err.(*Error).Challenge(testMetadataURL), `Bearer realm="catalogd", resource_metadata="`+testMetadataURL+`", scope="catalog:read", error="invalid_token", error_description="the token is not a well-formed JWT"`; got != want {
		t.Errorf("malformed token:\n got %s\nwant %s", got, want)
	}
	if got, want := err.Error(), "bearer authentication failed (malformed): the token is not a well-formed JWT"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}
