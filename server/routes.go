package server

import (
	"net/http"

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
	s.get(r, api+"/catalog/sets", s.handleListSets())
	s.get(r, api+"/catalog/sets/:code/cards", s.handleListSetCards())
	s.get(r, api+"/catalog/cards/*cardId", s.handleGetCard())
	s.get(r, api+"/catalog/search", s.handleSearch())
	s.get(r, api+"/openapi.yaml", handleOpenAPI())
	return r
}

// get registers h for GET and HEAD; net/http drops the body of a HEAD.
func (s *Server) get(r *httprouter.Router, path string, h http.Handler) {
	r.Handler(http.MethodGet, path, h)
	r.Handler(http.MethodHead, path, h)
}
