package server

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/julienschmidt/httprouter"
)

// handleListSets answers listSets: every set of every zone, newest first. A
// zone parameter is ignored on this route (docs/CONTRACT.md, Endpoints).
// The list is written at import and grows with the catalogue: it is written
// from where it lies in the file, not copied per request, and compressed
// once per catalogue.
func (s *Server) handleListSets(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	if err := noParameters(r); err != nil {
		s.writeError(w, r, err)
		return
	}
	db, release := s.catalog.Acquire()
	defer release()
	parts, _, err := setsAnswer(db)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	st := s.state(db)
	writeAnswer(w, r, etag(db, r), func() []byte { return st.setsGzipped(parts) }, parts...)
}

// handleListSetCards answers listSetCards: one page of the cards of a set,
// in printed-number order.
func (s *Server) handleListSetCards(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	db, release := s.catalog.Acquire()
	defer release()
	if a := s.cached(db, r); a != nil {
		a.write(w, r)
		return
	}
	code, err := pathParameter(ps, "code")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	q, err := parseQuery(r.URL.RawQuery)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	page := q.int("page", 1, 1, maxPage)
	pageSize := q.int("pageSize", defaultPageSize, 1, maxPageSize)
	if err := q.err(); err != nil {
		s.writeError(w, r, err)
		return
	}
	buf := s.body()
	defer s.recycle(buf)
	*buf, _, _, err = appendSetCards(*buf, db, code, page, pageSize)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeAndKeep(w, r, db, *buf)
}

// handleGetCard answers getCard. The id is a catch-all, so an id holding a
// "/" resolves whether the client encoded it or not.
func (s *Server) handleGetCard(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	id, err := cardParameter(r, ps)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	db, release := s.catalog.Acquire()
	defer release()
	buf := s.body()
	defer s.recycle(buf)
	*buf, err = db.AppendCard(append(*buf, `{"data":`...), id)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	*buf = append(*buf, '}')
	writeAnswer(w, r, etag(db, r), nil, *buf)
}

// handleSearch answers searchCards: the cards whose folded name contains
// every term, or whose printed number equals it, in printed-number order.
func (s *Server) handleSearch(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	db, release := s.catalog.Acquire()
	defer release()
	if a := s.cached(db, r); a != nil {
		a.write(w, r)
		return
	}
	q, err := parseQuery(r.URL.RawQuery)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	sq := searchParams(q)
	if err := q.err(); err != nil {
		s.writeError(w, r, err)
		return
	}
	buf := s.body()
	defer s.recycle(buf)
	*buf, _, err = appendSearch(*buf, db, sq)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeAndKeep(w, r, db, *buf)
}

// handleListChanges answers listChanges: one page of what changed from a
// generation to the active one.
func (s *Server) handleListChanges(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	db, release := s.catalog.Acquire()
	defer release()
	if a := s.cached(db, r); a != nil {
		a.write(w, r)
		return
	}
	cq, err := changesQuery(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	buf := s.body()
	defer s.recycle(buf)
	*buf, err = appendChanges(*buf, db, cq)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeAndKeep(w, r, db, *buf)
}

// body returns an empty buffer for an answer; recycle hands it back.
func (s *Server) body() *[]byte {
	b := s.bodies.Get().(*[]byte)
	*b = (*b)[:0]
	return b
}

func (s *Server) recycle(b *[]byte) {
	if cap(*b) <= 1<<20 { // let an outsized buffer go
		s.bodies.Put(b)
	}
}

// noParameters checks the query of a route that takes no parameters: only
// that it can be decoded, for unknown parameters are ignored.
func noParameters(r *http.Request) error {
	q, err := parseQuery(r.URL.RawQuery)
	if err != nil {
		return err
	}
	return q.err()
}

// cardParameter returns the card id of getCard, from the catch-all parameter (the
// rest of the path, "/" included), and checks the query.
func cardParameter(r *http.Request, ps httprouter.Params) (string, error) {
	id, err := pathParameter(ps, "cardId")
	if err != nil {
		return "", err
	}
	if id == "" {
		return "", paramErrors{{Parameter: "cardId", Detail: "must not be empty"}}
	}
	return id, noParameters(r)
}

// pathParameter returns a route parameter, unescaped: the router matched
// the escaped path (Server.ServeHTTP). A catch-all's value starts with the
// "/" before it, which is not part of the parameter.
func pathParameter(ps httprouter.Params, name string) (string, error) {
	raw := ps.ByName(name)
	if name == "cardId" {
		raw = strings.TrimPrefix(raw, "/")
	}
	v, err := url.PathUnescape(raw)
	if err != nil {
		return "", paramErrors{{Parameter: name, Detail: "is not a valid percent-encoded path segment"}}
	}
	return v, nil
}

func handleNotFound(w http.ResponseWriter, r *http.Request) {
	writeProblem(w, http.StatusNotFound, "no such resource: "+r.URL.Path)
}

func handleMethodNotAllowed(w http.ResponseWriter, r *http.Request) {
	// The router has set Allow.
	writeProblem(w, http.StatusMethodNotAllowed, fmt.Sprintf("method %s is not allowed here; allowed: %s", r.Method, w.Header().Get("Allow")))
}
