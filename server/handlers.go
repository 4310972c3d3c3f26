package server

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/catalogd/catalogd/catalog"
)

// handleListSets answers listSets: every set of every zone, newest first. A
// zone parameter is ignored on this route (docs/CONTRACT.md, Endpoints).
func (s *Server) handleListSets() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q, err := parseQuery(r.URL.RawQuery)
		if err == nil {
			err = q.err()
		}
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		// The list is written at import and grows with the catalogue: it
		// is written from where it lies in the file, not copied per
		// request, and compressed once per catalogue.
		db, release := s.catalog.Acquire()
		defer release()
		var kb [256]byte // on the stack for all but outsized requests
		valid := etag(db, answerKey(kb[:0], r.URL.Path, r.URL.RawQuery))
		parts, n, err := setsAnswer(db)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		if notModified(w, r, valid, n) {
			return
		}
		if !writePlain(w, r, parts...) {
			writeGzip(w, &encodedAnswer{etag: []string{gzipTag(valid.tag())}, body: s.setsGzip(db, parts)})
		}
	})
}

// handleListSetCards answers listSetCards: one page of the cards of a set,
// in printed-number order.
func (s *Server) handleListSetCards() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.answer(w, r, func() (builder, error) {
			code, err := s.pathParam(r, "code")
			if err != nil {
				return nil, err
			}
			q, err := parseQuery(r.URL.RawQuery)
			if err != nil {
				return nil, err
			}
			page := q.int("page", 1, 1, maxPage)
			pageSize := q.int("pageSize", defaultPageSize, 1, maxPageSize)
			if err := q.err(); err != nil {
				return nil, err
			}
			return func(b []byte, db *catalog.DB) ([]byte, error) {
				b, _, _, err := appendSetCards(b, db, code, page, pageSize)
				return b, err
			}, nil
		})
	})
}

// handleGetCard answers getCard. The id is a catch-all, so an id holding a
// "/" resolves whether the client encoded it or not.
func (s *Server) handleGetCard() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.answer(w, r, func() (builder, error) {
			id, err := s.pathParam(r, "cardId")
			if err != nil {
				return nil, err
			}
			if id == "" {
				return nil, paramErrors{{Parameter: "cardId", Detail: "must not be empty"}}
			}
			q, err := parseQuery(r.URL.RawQuery)
			if err == nil {
				err = q.err()
			}
			if err != nil {
				return nil, err
			}
			return func(b []byte, db *catalog.DB) ([]byte, error) {
				return appendCard(b, db, id)
			}, nil
		})
	})
}

// builder appends the body of an answer from db.
type builder func(b []byte, db *catalog.DB) ([]byte, error)

// answer writes the 200 of r from the current catalogue, or a 304 when
// the client already holds it; from the answer cache when it can. Otherwise
// prepare checks the request's parameters and returns what builds the
// answer. A cached answer was built for the same path and query, so its
// parameters were checked then: a hit checks nothing again.
func (s *Server) answer(w http.ResponseWriter, r *http.Request, prepare func() (builder, error)) {
	db, release := s.catalog.Acquire()
	defer release()
	var kb [256]byte // on the stack for all but outsized requests
	key := answerKey(kb[:0], r.URL.Path, r.URL.RawQuery)
	st := s.state(db)
	if a := s.answers.get(db, st.answers, key); a != nil {
		if !notModified(w, r, &a.valid, len(a.body)) {
			writeCached(w, r, a)
		}
		return
	}
	build, err := prepare()
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	// Built before If-None-Match is looked at: "*" matches only an answer
	// that exists, and a card or set that does not is a 404; and a 304
	// carries the Vary its 200 would, which depends on the answer's size.
	buf := s.getBuf()
	defer s.putBuf(buf)
	b, err := build(*buf, db)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	*buf = b
	valid := etag(db, key)
	a := s.answers.put(db, st.answers, key, valid, b)
	if notModified(w, r, valid, len(b)) {
		return
	}
	if a != nil {
		writeCached(w, r, a)
		return
	}
	if !writePlain(w, r, b) {
		writeGzip(w, encodeGzip(valid.tag(), b))
	}
}

// writeCached writes the 200 of the cached answer a. Its compressed body is
// made on the first request that takes gzip, and cached with it.
func writeCached(w http.ResponseWriter, r *http.Request, a *cachedAnswer) {
	if !writePlain(w, r, a.body) {
		writeGzip(w, a.gzipped())
	}
}

// writePlain writes the 200 whose body is the parts unless the client takes
// gzip and the body is large enough to gain; it reports whether it did.
// notModified has set the validators and Vary.
func writePlain(w http.ResponseWriter, r *http.Request, parts ...[]byte) bool {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	if compressible(n) && acceptsGzip(r) {
		return false
	}
	writeJSON(w, parts...)
	return true
}

// writeGzip writes the 200 of a compressed answer.
func writeGzip(w http.ResponseWriter, z *encodedAnswer) {
	h := w.Header()
	h["Etag"] = z.etag
	h["Content-Encoding"] = gzipEncoding
	writeJSON(w, z.body)
}

// pathParam returns a route parameter, unescaped (the router matched the
// escaped path): the set code of listSetCards, or the card id of getCard
// (the rest of the path, "/" included). The routes are registered without
// httprouter's parameters, which would cost each request a context and a
// copy of the request, so the parameter is cut from the path the route
// matched.
func (s *Server) pathParam(r *http.Request, name string) (string, error) {
	var raw string
	switch name {
	case "code":
		raw = strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, s.setsPrefix), cardsOfSetSuffix)
	case "cardId":
		raw = strings.TrimPrefix(r.URL.Path, s.cardsPrefix)
	}
	v, err := url.PathUnescape(raw)
	if err != nil {
		return "", paramErrors{{Parameter: name, Detail: "is not a valid percent-encoded path segment"}}
	}
	return v, nil
}

// jsonContentType is shared by every answer; header values are never
// modified in place, only replaced.
var jsonContentType = []string{"application/json"}

// AutoLengthMax is the largest body net/http gives a Content-Length of its
// own: it holds that much before it sends the header, and a handler that
// returns by then gets the length written without a header-map entry (no
// allocation, nothing to copy or sort). 2 KB is net/http's buffer; its
// documentation promises "a few KB". Longer bodies declare their length, or
// net/http would send them chunked.
const AutoLengthMax = 2048

// writeJSON writes a 200 whose JSON body is the parts, in order, with its
// Content-Length.
func writeJSON(w http.ResponseWriter, parts ...[]byte) {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	h := w.Header()
	h["Content-Type"] = jsonContentType
	if n > AutoLengthMax {
		h["Content-Length"] = []string{strconv.Itoa(n)}
	}
	w.WriteHeader(http.StatusOK)
	for _, p := range parts {
		w.Write(p)
	}
}

func handleNotFound(w http.ResponseWriter, r *http.Request) {
	writeProblem(w, http.StatusNotFound, "no such resource: "+r.URL.Path)
}

func handleMethodNotAllowed(w http.ResponseWriter, r *http.Request) {
	// The router has set Allow.
	writeProblem(w, http.StatusMethodNotAllowed, fmt.Sprintf("method %s is not allowed here; allowed: %s", r.Method, w.Header().Get("Allow")))
}

func (s *Server) handlePanic(w http.ResponseWriter, r *http.Request, v any) {
	s.log.ErrorContext(r.Context(), "panic serving request", slog.String("path", r.URL.Path), slog.Any("panic", v))
	writeProblem(w, http.StatusInternalServerError, "the server could not answer; the error was logged")
}
