package server

import (
	"net/http"
	"strings"

	"github.com/catalogd/catalogd/server/auth"

	"github.com/julienschmidt/httprouter"
)

// routes lists the whole HTTP surface. Each route has the name it carries
// in metrics and access logs.
func (s *Server) routes(docs map[string]*staticFile) *httprouter.Router {
	r := httprouter.New()
	r.RedirectTrailingSlash = false
	r.RedirectFixedPath = false
	r.HandleMethodNotAllowed = true
	r.HandleOPTIONS = true
	r.NotFound = s.named("notFound", http.HandlerFunc(handleNotFound))
	r.MethodNotAllowed = s.named("methodNotAllowed", http.HandlerFunc(handleMethodNotAllowed))
	r.PanicHandler = s.handlePanic

	api := s.basePath
	// The catalogue's answers are compressed for clients that accept it, by
	// the handlers, which keep them compressed (writeCached); their
	// 401s and problems are too small to gain.
	s.get(r, "listSets", api+setsPath, s.authenticated(s.handleListSets()))
	s.get(r, "listSetCards", api+setsPath+"/:code"+cardsOfSetSuffix, s.authenticated(s.handleListSetCards()))
	s.get(r, "getCard", api+cardsPath+"/*cardId", s.authenticated(s.handleGetCard()))
	s.get(r, "search", api+"/catalog/search", s.authenticated(s.handleSearch()))
	// The export is streamed and compressed by its handler, which serves
	// ranges of the compressed bytes too.
	s.get(r, "exportCatalog", api+"/catalog/export", s.authenticated(s.handleExport()))
	s.get(r, "listChanges", api+"/catalog/changes", s.authenticated(s.handleListChanges()))
	// Stateless MCP takes POST only; the router answers other methods 405.
	r.Handler(http.MethodPost, api+"/mcp", s.named("mcp", s.authenticated(s.gzip(s.handleMCP()))))

	// Probes and discovery need no token.
	s.get(r, "healthz", "/healthz", handleHealthz())
	s.get(r, "readyz", "/readyz", s.handleReadyz())
	s.get(r, "openapi", api+"/openapi.yaml", s.gzip(handleOpenAPI()))
	// The API reference page and its files (docsFiles), read without a token.
	for path, file := range docs {
		s.get(r, "docs", api+path, file)
	}
	metadata := auth.MetadataHandler(s.audience.String(), s.authServers)
	s.public(r, "metadata", metadataPath, metadata)
	if p := strings.TrimRight(s.audience.EscapedPath(), "/"); p != "" {
		s.public(r, "metadata", metadataPath+p, metadata)
	}
	if s.dev != nil {
		s.public(r, "jwks", "/.well-known/jwks.json", s.dev.JWKSHandler())
		s.public(r, "discovery", "/.well-known/openid-configuration", s.dev.OpenIDConfigurationHandler())
		s.public(r, "discovery", "/.well-known/oauth-authorization-server", s.dev.OpenIDConfigurationHandler())
		r.Handler(http.MethodPost, "/oauth/token", s.named("token", s.dev.TokenHandler()))
	}
	return r
}

// public registers a handler that answers its own methods (GET, HEAD and
// OPTIONS for CORS preflight).
func (s *Server) public(r *httprouter.Router, name, path string, h http.Handler) {
	s.get(r, name, path, h)
	r.Handler(http.MethodOptions, path, s.named(name, h))
}

// The paths of the catalogue routes under the base path.
const (
	setsPath         = "/catalog/sets"
	cardsOfSetSuffix = "/cards"
	cardsPath        = "/catalog/cards"
)

// get registers h for GET and HEAD; net/http drops the body of a HEAD.
// Handlers read their parameters from the path (Server.pathParam).
func (s *Server) get(r *httprouter.Router, name, path string, h http.Handler) {
	h = s.named(name, h)
	handle := func(w http.ResponseWriter, r *http.Request, _ httprouter.Params) { h.ServeHTTP(w, r) }
	r.Handle(http.MethodGet, path, handle)
	r.Handle(http.MethodHead, path, handle)
}
