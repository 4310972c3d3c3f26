package server

import (
	"context"
	"errors"
	"net/http"

	"github.com/catalogd/catalogd/server/auth"
)

// metadataPath is where RFC 9728 puts protected resource metadata; the
// audience's path follows it.
const metadataPath = "/.well-known/oauth-protected-resource"

// writeUnauthorized answers 401 with the Bearer challenge of
// docs/CONTRACT.md, Authentication, and a problem body.
func (s *Server) writeUnauthorized(w http.ResponseWriter, err error) {
	var ae *auth.Error
	if !errors.As(err, &ae) {
		ae = &auth.Error{Status: http.StatusUnauthorized, Code: auth.CodeInvalidToken, Description: "the token could not be verified", Reason: "error"}
	}
	s.metrics.authFailures.WithLabelValues(ae.Reason).Inc()
	w.Header().Set("WWW-Authenticate", ae.Challenge(s.resourceMetadata))
	detail := "this endpoint needs a bearer token with the scope " + auth.Scope
	if ae.Code != "" && ae.Description != "" {
		detail = ae.Description
	}
	writeProblem(w, http.StatusUnauthorized, detail)
}

// clientKey is the context key of the client id a verified token names.
type clientKey struct{}

// withClient returns ctx carrying the client id of the request's token, so
// that what answers the request knows its caller without verifying the
// token again.
func withClient(ctx context.Context, clientID string) context.Context {
	return context.WithValue(ctx, clientKey{}, clientID)
}

// clientOf returns the client id of the request whose context ctx is; ""
// when it carried no token.
func clientOf(ctx context.Context) string {
	id, _ := ctx.Value(clientKey{}).(string)
	return id
}
