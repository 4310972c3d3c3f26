package server

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/catalogd/catalogd/catalog"
)

// problem is an RFC 9457 problem details body. Errors lists each bad query
// parameter of a 400.
type problem struct {
	Type   string       `json:"type"`
	Title  string       `json:"title"`
	Status int          `json:"status"`
	Detail string       `json:"detail"`
	Errors []paramError `json:"errors,omitempty"`
}

// paramError is one invalid query parameter.
type paramError struct {
	Parameter string `json:"parameter"`
	Detail    string `json:"detail"`
}

// paramErrors is every invalid parameter of one request.
type paramErrors []paramError

func (e paramErrors) Error() string {
	if len(e) == 1 {
		return e[0].Parameter + ": " + e[0].Detail
	}
	return strconv.Itoa(len(e)) + " invalid query parameters"
}

// writeProblem writes a problem+json response.
func writeProblem(w http.ResponseWriter, status int, detail string, params ...paramError) {
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

// writeError maps an error to its status and writes it as a problem. A 500
// logs the cause and tells the client nothing internal.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	var params paramErrors
	switch {
	case errors.As(err, &params):
		// "parameter", not "query parameter": a path segment can be the bad one.
		detail := "invalid parameters"
		if len(params) == 1 {
			detail = "invalid parameter " + params[0].Parameter + ": " + params[0].Detail
		}
		writeProblem(w, http.StatusBadRequest, detail, params...)
	case errors.Is(err, catalog.ErrOutsideHistory):
		writeProblem(w, http.StatusGone, err.Error()+", which holds the changes of its last imports only: download /catalog/export and sync from its Catalog-Generation")
	case errors.Is(err, catalog.ErrNotFound):
		writeProblem(w, http.StatusNotFound, err.Error()+" in the active catalogue")
	default:
		s.log.ErrorContext(r.Context(), "request failed", slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.Any("error", err))
		writeProblem(w, http.StatusInternalServerError, "the server could not answer; the error was logged")
	}
}
