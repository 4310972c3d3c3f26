package auth

import (
	"net/http"
	"strings"
)

// Error codes of RFC 6750 section 3.1, as used in Error.Code.
const (
	CodeInvalidRequest    = "invalid_request"
	CodeInvalidToken      = "invalid_token"
	CodeInsufficientScope = "insufficient_scope"
)

// Reasons are short, stable labels for metrics and logs; they never carry
// anything taken from the request.
const (
	ReasonMissing     = "missing"       // no Authorization header
	ReasonScheme      = "scheme"        // an Authorization scheme other than Bearer
	ReasonMalformed   = "malformed"     // the header or the token is not well formed
	ReasonAlgorithm   = "algorithm"     // alg is not an accepted asymmetric algorithm, or does not match the key
	ReasonUnknownKey  = "unknown_key"   // no key in the JWKS has the token's kid
	ReasonUnavailable = "unavailable"   // the JWKS has not been loaded yet
	ReasonSignature   = "signature"     // the signature does not verify
	ReasonExpired     = "expired"       // exp is past (beyond the leeway)
	ReasonExpMissing  = "exp_missing"   // the token has no exp
	ReasonNotYetValid = "not_yet_valid" // nbf is in the future
	ReasonIssuedAt    = "issued_at"     // iat is in the future
	ReasonIssuer      = "issuer"        // iss is not the configured issuer
	ReasonAudience    = "audience"      // aud does not name the configured audience
	ReasonClient      = "client"        // the token names no client (azp, client_id, sub)
	ReasonDenied      = "denied"        // the client is on the deny list
	ReasonScope       = "scope"         // the catalog:read scope is not granted
)

// Error is why a request was not authenticated. Verify returns only *Error.
//
// Status is always 401: docs/CONTRACT.md, Authentication, answers 401 for a missing scope and
// for a malformed header too, so a client has one status to handle.
type Error struct {
	Status int
	// Code is the RFC 6750 error code, or "" when no bearer token was
	// presented (then the challenge carries no error attribute).
	Code string
	// Description is safe to show to the client: it never contains the token
	// or any other value taken from the request.
	Description string
	// Reason is one of the Reason constants.
	Reason string
}

func newError(code, reason, description string) *Error {
	return &Error{Status: http.StatusUnauthorized, Code: code, Reason: reason, Description: description}
}

func (e *Error) Error() string {
	return "bearer authentication failed (" + e.Reason + "): " + e.Description
}

// Challenge returns the WWW-Authenticate value for this rejection.
// resourceMetadataURL is the RFC 9728 metadata URL of the protected resource.
func (e *Error) Challenge(resourceMetadataURL string) string {
	var b strings.Builder
	b.Grow(128 + len(resourceMetadataURL) + len(e.Description))
	b.WriteString(`Bearer realm="catalogd", resource_metadata=`)
	writeQuoted(&b, resourceMetadataURL)
	b.WriteString(`, scope="` + Scope + `"`)
	if e.Code != "" {
		b.WriteString(", error=")
		writeQuoted(&b, e.Code)
		if e.Description != "" {
			b.WriteString(", error_description=")
			writeQuoted(&b, e.Description)
		}
	}
	return b.String()
}

// writeQuoted writes s as an RFC 9110 quoted-string. Control characters are
// replaced by a space because they cannot appear in a header field at all.
func writeQuoted(b *strings.Builder, s string) {
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20 || c == 0x7f:
			b.WriteByte(' ')
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
}
