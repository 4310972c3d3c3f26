package server

import (
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

// clientOf returns the client id that the bearer token of the request
// answered through w names, "" when it carried none: route.serve keeps it
// in the recorder every handler writes through, so that what answers the
// request knows its caller without verifying the token again. (In the
// request's context it would cost every request a copy of the request and
// a context: two allocations and some 300 bytes.)
func clientOf(w http.ResponseWriter) string {
	for {
		switch x := w.(type) {
		case *recorder:
			return x.clientID
		case interface{ Unwrap() http.ResponseWriter }:
			w = x.Unwrap()
		default:
			return ""
		}
	}
}
