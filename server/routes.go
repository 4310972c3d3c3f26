package server

import (
	"net/http"
	"strings"

	"github.com/catalogd/catalogd/server/auth"

	"github.com/julienschmidt/httprouter"
)

// routes lists the whole HTTP surface.
func (s *Server) routes() *httprouter.Router {
	r := httprouter.New()
	r.RedirectTrailingSlash = false
	r.RedirectFixedPath = false
	r.HandleMethodNotAllowed = true
	r.HandleOPTIONS = true
	r.NotFound = http.HandlerFunc(handleNotFound)
	r.MethodNotAllowed = http.HandlerFunc(handleMethodNotAllowed)
	r.PanicHandler = s.handlePanic

	api := s.basePath
	s.get(r, api+"/catalog/sets", s.authenticated(s.handleListSets()))
	s.get(r, api+"/catalog/sets/:code/cards", s.authenticated(s.handleListSetCards()))
	s.get(r, api+"/catalog/cards/*cardId", s.authenticated(s.handleGetCard()))
	s.get(r, api+"/catalog/search", s.authenticated(s.handleSearch()))
	// Stateless MCP takes POST only; the router answers other methods 405.
	r.Handler(http.MethodPost, api+"/mcp", s.authenticated(s.handleMCP()))

	// Probes and discovery need no token.
	s.get(r, "/healthz", handleHealthz())
	s.get(r, "/readyz", s.handleReadyz())
	s.get(r, api+"/openapi.yaml", handleOpenAPI())
	metadata := auth.MetadataHandler(s.audience.String(), s.authServers)
	s.public(r, metadataPath, metadata)
	if p := strings.TrimRight(s.audience.EscapedPath(), "/"); p != "" {
		s.public(r, metadataPath+p, metadata)
	}
	if s.dev != nil {
		s.public(r, "/.well-known/jwks.json", s.dev.JWKSHandler())
		s.public(r, "/.well-known/openid-configuration", s.dev.OpenIDConfigurationHandler())
		s.public(r, "/.well-known/oauth-authorization-server", s.dev.OpenIDConfigurationHandler())
		r.Handler(http.MethodPost, "/oauth/token", s.dev.TokenHandler())
	}
	return r
}

// public registers a handler that answers its own methods (GET, HEAD and
// OPTIONS for CORS preflight).
func (s *Server) public(r *httprouter.Router, path string, h http.Handler) {
	s.get(r, path, h)
	r.Handler(http.MethodOptions, path, h)
}

// get registers h for GET and HEAD; net/http drops the body of a HEAD.
func (s *Server) get(r *httprouter.Router, path string, h http.Handler) {
	r.Handler(http.MethodGet, path, h)
	r.Handler(http.MethodHead, path, h)
}
