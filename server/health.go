package server

import (
	"net/http"
	"strconv"
)

// readiness is what an Authenticator may also report: whether it can verify
// tokens yet (the identity provider's keys are loaded).
type readiness interface{ Ready() bool }

// handleHealthz answers whether the process is alive: it answers at all.
func handleHealthz() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeStatus(w, http.StatusOK, `{"status":"ok"}`)
	})
}

// handleReadyz answers whether requests can succeed: a catalogue is open
// (always, once a Server exists) and tokens can be verified. A load balancer
// sends no traffic to a replica that is not ready.
func (s *Server) handleReadyz() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if rd, ok := s.auth.(readiness); ok && !rd.Ready() {
			writeStatus(w, http.StatusServiceUnavailable,
				`{"status":"unavailable","detail":"the identity provider's signing keys are not loaded yet"}`)
			return
		}
		db, release := s.catalog.Acquire()
		gen := db.Generation()
		release()
		writeStatus(w, http.StatusOK, `{"status":"ok","generation":`+strconv.Quote(gen)+`}`)
	})
}

func writeStatus(w http.ResponseWriter, status int, body string) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write([]byte(body))
}
