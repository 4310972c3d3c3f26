package server

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// RequestIDHeader carries the id that ties a request to its access-log line.
const RequestIDHeader = "X-Request-Id"

// recorder is the ResponseWriter every request is answered through: it
// notes what the access log and the metrics report. Route handlers fill in
// the route; authentication fills in the client.
type recorder struct {
	http.ResponseWriter
	status   int
	bytes    int64
	writeErr error // the first write that failed: the client got less than the status promised
	route    *routeMetrics
	clientID string
}

func (rec *recorder) WriteHeader(status int) {
	if rec.status == 0 && status >= 200 {
		rec.status = status
	}
	rec.ResponseWriter.WriteHeader(status)
}

func (rec *recorder) Write(b []byte) (int, error) {
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	n, err := rec.ResponseWriter.Write(b)
	rec.bytes += int64(n)
	if err != nil && rec.writeErr == nil {
		rec.writeErr = err
	}
	return n, err
}

// Flush lets streamed answers (MCP) through.
func (rec *recorder) Flush() {
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	http.NewResponseController(rec.ResponseWriter).Flush()
}

// Unwrap gives http.ResponseController the connection underneath.
func (rec *recorder) Unwrap() http.ResponseWriter { return rec.ResponseWriter }

var recorders = sync.Pool{New: func() any { return new(recorder) }}

// observe answers r, then counts it and writes its access-log
// line: method, route, path, status, bytes, duration, client id and request
// id, and the error when the answer could not be written whole (the write
// timeout, a client gone). The query is never logged: it may hold an
// access_token.
func (s *Server) observe(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	id := requestID(firstHeader(r.Header, RequestIDHeader))
	w.Header()[RequestIDHeader] = []string{id}

	rec := recorders.Get().(*recorder)
	*rec = recorder{ResponseWriter: w, route: s.unmatched}
	defer func() {
		*rec = recorder{}
		recorders.Put(rec)
	}()
	s.dispatch(rec, r)

	elapsed := time.Since(start)
	status := rec.status
	if status == 0 {
		status = http.StatusOK
	}
	rec.route.observe(status, elapsed, rec.writeErr != nil)
	s.logAccess(&accessLine{
		at:        start,
		method:    r.Method,
		route:     rec.route.name,
		path:      r.URL.Path,
		status:    status,
		bytes:     rec.bytes,
		elapsed:   elapsed,
		clientID:  rec.clientID,
		requestID: id,
		remote:    r.RemoteAddr,
		writeErr:  rec.writeErr,
	})
}

// named marks the requests h answers as route name in metrics and logs.
func (s *Server) named(name string, h http.Handler) http.Handler {
	rm := s.metrics.route(name)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if rec, ok := w.(*recorder); ok {
			rec.route = rm
		}
		h.ServeHTTP(w, r)
	})
}

// setClientID records who a request came from, for its access-log line.
func setClientID(w http.ResponseWriter, clientID string) {
	if rec, ok := w.(*recorder); ok {
		rec.clientID = clientID
	}
}

// firstHeader is h.Get for a key already in canonical form, which Get
// would otherwise canonicalize again on every request.
func firstHeader(h http.Header, canonicalKey string) string {
	if v := h[canonicalKey]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// maxRequestIDLen bounds a client's X-Request-Id; longer ones are replaced.
const maxRequestIDLen = 128

// requestID keeps a client's request id when it is short and printable
// ASCII, so that it cannot forge log lines, and otherwise makes one.
func requestID(given string) string {
	if given != "" && len(given) <= maxRequestIDLen && printableASCII(given) {
		return given
	}
	return newRequestID()
}

func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// Request ids are a random per-process prefix and a counter: unique across
// replicas by chance, and cheaper than reading randomness per request.
var (
	requestIDPrefix = func() string {
		b := make([]byte, 6)
		rand.Read(b)
		return hex.EncodeToString(b) + "-"
	}()
	requestCounter atomic.Uint64
)

func newRequestID() string {
	var b [32]byte // the prefix's 13 bytes and at most 13 digits
	id := append(b[:0], requestIDPrefix...)
	return string(strconv.AppendUint(id, requestCounter.Add(1), 36))
}
