package server

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/julienschmidt/httprouter"
)

// handleListSets answers listSets: every set of every zone, newest first. A
// zone parameter is ignored on this route (spec section 4.1).
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
		db, release := s.catalog.Acquire()
		defer release()
		if notModified(w, r, db, etag(db, r)) {
			return
		}
		buf := s.getBuf()
		defer s.putBuf(buf)
		b := append(*buf, `{"data":`...)
		b = append(b, db.SetsJSON("")...)
		b = append(b, '}')
		*buf = b
		writeJSON(w, b)
	})
}

// handleListSetCards answers listSetCards: one page of the cards of a set,
// in printed-number order.
func (s *Server) handleListSetCards() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		code, err := pathParam(r, "code")
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

		db, release := s.catalog.Acquire()
		defer release()
		if notModified(w, r, db, etag(db, r)) {
			return
		}
		buf := s.getBuf()
		defer s.putBuf(buf)
		b := append(*buf, `{"data":[`...)
		n := 0
		_, total, err := db.SetCards(code, page, pageSize, func(card []byte) {
			if n > 0 {
				b = append(b, ',')
			}
			b = append(b, card...)
			n++
		})
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		b = append(b, `],"meta":{"page":`...)
		b = strconv.AppendInt(b, page, 10)
		b = append(b, `,"pageSize":`...)
		b = strconv.AppendInt(b, pageSize, 10)
		b = append(b, `,"total":`...)
		b = strconv.AppendInt(b, total, 10)
		b = append(b, `}}`...)
		*buf = b
		writeJSON(w, b)
	})
}

// handleGetCard answers getCard. The id is a catch-all, so an id holding a
// "/" resolves whether the client encoded it or not.
func (s *Server) handleGetCard() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, err := pathParam(r, "cardId")
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		id = strings.TrimPrefix(id, "/")
		if id == "" {
			s.writeError(w, r, paramErrors{{Parameter: "cardId", Detail: "must not be empty"}})
			return
		}
		q, err := parseQuery(r.URL.RawQuery)
		if err == nil {
			err = q.err()
		}
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		db, release := s.catalog.Acquire()
		defer release()
		if notModified(w, r, db, etag(db, r)) {
			return
		}
		buf := s.getBuf()
		defer s.putBuf(buf)
		b := append(*buf, `{"data":`...)
		b, err = db.AppendCard(b, id)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		b = append(b, '}')
		*buf = b
		writeJSON(w, b)
	})
}

// pathParam returns a route parameter, unescaped (the router matched the
// escaped path).
func pathParam(r *http.Request, name string) (string, error) {
	raw := httprouter.ParamsFromContext(r.Context()).ByName(name)
	v, err := url.PathUnescape(raw)
	if err != nil {
		return "", paramErrors{{Parameter: name, Detail: "is not a valid percent-encoded path segment"}}
	}
	return v, nil
}

// writeJSON writes a 200 with a JSON body.
func writeJSON(w http.ResponseWriter, body []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	w.Write(body)
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
