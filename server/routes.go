package server

import (
	"net"
	"net/http"
	"strings"

	"github.com/catalogd/catalogd/server/auth"
	"github.com/catalogd/catalogd/server/op"

	"github.com/julienschmidt/httprouter"
)

// routes lists the whole HTTP surface. Each route has the name it carries
// in metrics and access logs, and every request goes through route.serve.
func (s *Server) routes(docs map[string]http.Handler) *httprouter.Router {
	r := httprouter.New()
	r.RedirectTrailingSlash = false
	r.RedirectFixedPath = false
	r.HandleMethodNotAllowed = true
	r.HandleOPTIONS = true
	r.NotFound = s.route("notFound", false, handler(http.HandlerFunc(handleNotFound)))
	r.MethodNotAllowed = s.route("methodNotAllowed", false, handler(http.HandlerFunc(handleMethodNotAllowed)))
	// OPTIONS on a route that does not take it itself: the router has set
	// Allow, and the answer has no body.
	r.GlobalOPTIONS = s.route("other", false, func(http.ResponseWriter, *http.Request, httprouter.Params) {})

	api := s.basePath
	// The catalogue, behind a bearer token. Its answers are compressed by
	// writeAnswer; the export compresses its own stream.
	s.get(r, "listSets", api+setsPath, true, s.handleListSets)
	s.get(r, "listSetCards", api+setsPath+"/:code/cards", true, handleOp(s, op.ListSetCards, true))
	s.get(r, "getSetCardsByNumber", api+setsPath+"/:code/cards/*number", true, handleOp(s, op.GetSetCardsByNumber, false))
	// An id may hold a "/", encoded or not: the rest of the path is the id.
	s.get(r, "getCard", api+"/catalog/cards/*cardId", true, handleOp(s, op.GetCard, false))
	s.get(r, "getCards", api+"/catalog/cards", true, handleOp(s, op.GetCards, false))
	s.get(r, "search", api+"/catalog/search", true, handleOp(s, op.SearchCards, true))
	s.get(r, "autocompleteNames", api+"/catalog/autocomplete", true, handleOp(s, op.AutocompleteNames, true))
	s.get(r, "exportCatalog", api+"/catalog/export", true, s.handleExport)
	s.get(r, "listChanges", api+"/catalog/changes", true, handleOp(s, op.ListChanges, true))
	// Stateless MCP takes POST only; the router answers other methods 405.
	// Its answers are the SDK's, JSON or a stream of events, so they are
	// compressed as they are written (Server.gzip), where every other
	// route compresses a whole answer once (writeAnswer, staticFile).
	r.Handle(http.MethodPost, api+"/mcp", s.route("mcp", true, handler(s.gzip(s.handleMCP()))).serve)

	// Probes and discovery need no token.
	s.get(r, "healthz", "/healthz", false, handler(handleHealthz()))
	s.get(r, "readyz", "/readyz", false, handler(s.handleReadyz()))
	s.get(r, "openapi", api+"/openapi.yaml", false, handler(newOpenAPIFile()))
	// The API reference page and its files (docsFiles), read without a token.
	for path, file := range docs {
		s.get(r, "docs", api+path, false, handler(file))
	}
	metadata := handler(auth.MetadataHandler(s.audience.String(), s.authServers))
	s.public(r, "metadata", metadataPath, metadata)
	if p := strings.TrimRight(s.audience.EscapedPath(), "/"); p != "" {
		s.public(r, "metadata", metadataPath+p, metadata)
	}
	if s.dev != nil {
		discovery := handler(s.dev.OpenIDConfigurationHandler())
		s.public(r, "jwks", "/.well-known/jwks.json", handler(s.dev.JWKSHandler()))
		s.public(r, "discovery", "/.well-known/openid-configuration", discovery)
		s.public(r, "discovery", "/.well-known/oauth-authorization-server", discovery)
		r.Handle(http.MethodPost, "/oauth/token", s.route("token", false, handler(s.devHostsOnly(s.dev.TokenHandler()))).serve)
	}
	return r
}

// devHostsOnly serves h, which hands out the dev server's token, only to
// requests for a loopback host or the base URL's, and answers others 421:
// the dev server gives its token to whoever asks, so a web page whose name
// an attacker points at 127.0.0.1 (DNS rebinding) could ask too.
func (s *Server) devHostsOnly(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, _, err := net.SplitHostPort(r.Host)
		if err != nil {
			host = r.Host
		}
		// An empty Host is HTTP/1.0's, which no browser sends.
		if host != "" && !auth.LoopbackHost(host) && !strings.EqualFold(strings.TrimSuffix(host, "."), s.baseURL.Hostname()) {
			writeProblem(w, http.StatusMisdirectedRequest, "serve --dev gives its token to requests for a loopback host only (127.0.0.1, [::1], localhost) or its --base-url's")
			return
		}
		h.ServeHTTP(w, r)
	})
}

// setsPath is the path of listSets under the base path.
const setsPath = "/catalog/sets"

// route returns the route named name, which takes a bearer token when
// authed, around h.
func (s *Server) route(name string, authed bool, h httprouter.Handle) *route {
	return &route{s: s, metrics: s.metrics.route(name), authed: authed, handle: h, cost: requestCost(name)}
}

// get registers h for GET and HEAD; net/http drops the body of a HEAD.
func (s *Server) get(r *httprouter.Router, name, path string, authed bool, h httprouter.Handle) {
	serve := s.route(name, authed, h).serve
	r.Handle(http.MethodGet, path, serve)
	r.Handle(http.MethodHead, path, serve)
}

// public registers a handler that answers its own methods (GET, HEAD and
// OPTIONS for CORS preflight).
func (s *Server) public(r *httprouter.Router, name, path string, h httprouter.Handle) {
	s.get(r, name, path, false, h)
	r.Handle(http.MethodOptions, path, s.route(name, false, h).serve)
}

// handler adapts a net/http handler, which takes no route parameters.
func handler(h http.Handler) httprouter.Handle {
	return func(w http.ResponseWriter, r *http.Request, _ httprouter.Params) { h.ServeHTTP(w, r) }
}
