package server

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/catalogd/catalogd/catalog/store"
	"github.com/catalogd/catalogd/server/op"
)

// problem is an RFC 9457 problem details body. Errors lists each bad query
// parameter of a 400.
type problem struct {
	Type   string          `json:"type"`
	Title  string          `json:"title"`
	Status int             `json:"status"`
	Detail string          `json:"detail"`
	Errors []op.ParamError `json:"errors,omitempty"`
}

// writeProblem writes a problem+json response.
func writeProblem(w http.ResponseWriter, status int, detail string, params ...op.ParamError) {
	body, err := json.Marshal(problem{
		Type:   "about:blank",
		Title:  http.StatusText(status),
		Status: status,
		Detail: detail,
		Errors: params,
	})
	if err != nil {
		body = []byte(`{"type":"about:blank","title":"Internal Server Error","status":500,"detail":"the error could not be rendered"}`)
		status = http.StatusInternalServerError
	}
	h := w.Header()
	h.Set("Content-Type", "application/problem+json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	h.Set("Cache-Control", "no-store")
	h.Del("ETag")
	w.WriteHeader(status)
	w.Write(body)
}

// writeError maps an error to its status and writes it as a problem: an
// operation's *op.Error by its kind, anything else as a 500 that logs the
// cause and tells the client nothing internal. It is the one place REST
// answers an error of an operation; refusals before an operation runs (no
// route, a method, the rate and in-flight limits, a body too large, a
// panic) write their own problem with writeProblem.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	var e *op.Error
	if errors.As(err, &e) {
		if status, ok := problemStatus[e.Kind]; ok {
			if e.Kind == op.NotYet {
				w.Header().Set("Retry-After", strconv.Itoa(notYetRetry))
			}
			writeProblem(w, status, e.Detail, e.Params...)
			return
		}
	}
	if errors.Is(err, store.ErrDamaged) {
		s.log.ErrorContext(r.Context(), "catalogue file damaged", slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.Any("error", err))
		writeProblem(w, http.StatusInternalServerError, damagedDetail)
		return
	}
	s.log.ErrorContext(r.Context(), "request failed", slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.Any("error", err))
	writeProblem(w, http.StatusInternalServerError, "the server could not answer; the error was logged")
}

// damagedDetail is what a request that read a damaged page of the
// catalogue file is told (docs/CONTRACT.md, Errors): the operator's log
// line has the page.
const damagedDetail = "the catalogue file is damaged where this answer is stored; the error was logged, and the operator imports the catalogue again"

// problemStatus is the status of each kind of op.Error.
var problemStatus = map[op.Kind]int{
	op.Invalid:  http.StatusBadRequest,
	op.NotFound: http.StatusNotFound,
	op.Gone:     http.StatusGone,
	op.NotYet:   http.StatusServiceUnavailable,
}

// notYetRetry is the Retry-After, in seconds, of a list of changes from a
// generation newer than the one served: serve looks for a new catalogue
// every second and switches to it in well under one more.
const notYetRetry = 2
