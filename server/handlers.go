package server

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/catalogd/catalogd/server/op"
	"github.com/julienschmidt/httprouter"
)

// handleOp answers the operation o over REST, in three steps: its
// parameters, one call into the operation, its answer or its error. A
// kept operation's answers go through the answer cache, which is looked up
// before anything is parsed: a cached answer was built for the same path
// and query, so its parameters were checked then.
func handleOp[R any](s *Server, o op.Operation[R], keep bool) httprouter.Handle {
	return func(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
		db, release := s.catalog.Acquire()
		defer release()
		if keep {
			if a := s.cached(db, r); a != nil {
				a.write(w, r)
				return
			}
		}
		p, err := restParams(r, ps)
		var req R
		if err == nil {
			req, err = o.Parse(p)
		}
		if err == nil {
			buf := s.body()
			defer s.recycle(buf)
			var a op.Answer
			if a, err = o.Answer(*buf, db, req); err == nil {
				*buf = a.Body // the buffer it grew into, for the next answer
				if keep {
					s.writeAndKeep(w, r, db, a.Body)
				} else {
					writeAnswer(w, r, etag(db, r), nil, a.Body)
				}
				return
			}
		}
		if op.FromCatalogue(err) {
			w.Header().Set(GenerationHeader, db.Generation())
		}
		s.writeError(w, r, err)
	}
}

// handleListSets answers listSets: every set of every zone, newest first.
// The list is written at import and grows with the catalogue: it is
// written from where it lies in the file, not copied per request, and
// compressed once per catalogue. It takes no parameter: a zone, if sent,
// is ignored like any unknown parameter (docs/CONTRACT.md, Endpoints), so
// only the query string's decoding is checked.
func (s *Server) handleListSets(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	if _, err := restParams(r, ps); err != nil {
		s.writeError(w, r, err)
		return
	}
	db, release := s.catalog.Acquire()
	defer release()
	parts, err := op.SetsParts(db, op.ListSetsRequest{})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	st := s.state(db)
	writeAnswer(w, r, etag(db, r), func() []byte { return st.setsGzipped(parts) }, parts...)
}

// restParams decodes the parameters of r. The router matched the escaped
// path (Server.ServeHTTP), so a path parameter may hold an encoded "/"; a
// catch-all's value (cardId, number) starts with the "/" before it, which
// is not part of the parameter, and no other parameter can start with one.
func restParams(r *http.Request, ps httprouter.Params) (op.Params, error) {
	var p op.Params
	for i := range min(len(ps), len(p.Path)) {
		v, err := url.PathUnescape(strings.TrimPrefix(ps[i].Value, "/"))
		if err != nil {
			return p, op.InvalidWith([]op.ParamError{{Parameter: ps[i].Key, Detail: "is not a valid percent-encoded path segment"}}, nil)
		}
		p.Path[i] = op.PathParam{Name: ps[i].Key, Value: v}
	}
	var err error
	p.Values, err = op.DecodeQuery(r.URL.RawQuery)
	return p, err
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

func handleNotFound(w http.ResponseWriter, r *http.Request) {
	writeProblem(w, http.StatusNotFound, "no such resource: "+r.URL.Path)
}

func handleMethodNotAllowed(w http.ResponseWriter, r *http.Request) {
	// The router has set Allow.
	writeProblem(w, http.StatusMethodNotAllowed, fmt.Sprintf("method %s is not allowed here; allowed: %s", r.Method, w.Header().Get("Allow")))
}
