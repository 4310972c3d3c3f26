package server

import (
	"errors"
	"net/http"

	"github.com/catalogd/catalogd/server/auth"
)

// metadataPath is where RFC 9728 puts protected resource metadata; the
// audience's path follows it.
const metadataPath = "/.well-known/oauth-protected-resource"

// authenticated lets a request through to h only with a valid token, and,
// with a rate limit, only within its client's budget. It runs before
// anything looks at the parameters, so a request without a token is a 401
// whatever else is wrong with it (docs/CONTRACT.md, Parameters).
func (s *Server) authenticated(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := s.auth.Verify(r.Context(), firstHeader(r.Header, "Authorization"))
		if err != nil {
			s.writeUnauthorized(w, err)
			return
		}
		setClientID(w, p.ClientID)
		if s.limits != nil && !s.limits.allow(w, p.ClientID) {
			return
		}
		h.ServeHTTP(w, r)
	})
}

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
