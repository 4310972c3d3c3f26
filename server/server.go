// Package server answers the partner API (docs/CONTRACT.md, REST) and its MCP
// interface over HTTP, straight from the catalogue file.
package server

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/url"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/catalogd/catalogd/catalog/store"
	"github.com/catalogd/catalogd/server/auth"
	"github.com/julienschmidt/httprouter"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"
)

// Config is what a Server needs.
type Config struct {
	// Catalog is the catalogue to answer from.
	Catalog *store.Live
	// BaseURL is the public URL of the API, version segment included
	// (http://127.0.0.1:8080/api/v1); routes are mounted under its path.
	BaseURL string
	// Logger receives errors; nil discards.
	Logger *slog.Logger
	// AccessLog receives one line of JSON per request, in the shape of
	// slog's JSON handler with the message "request"; nil writes none. Each
	// line comes in one Write, which may keep it a moment before writing
	// it (logbuf.Writer.Batched).
	AccessLog io.Writer
	// AccessLogPolicy chooses the requests AccessLog gets a line for:
	// every one, by default.
	AccessLogPolicy AccessLogPolicy

	// Auth verifies the bearer token of every catalogue request. It is
	// required: catalogd never serves the catalogue unauthenticated.
	Auth Authenticator
	// Audience is the audience tokens carry, {BaseURL}/mcp by default; the
	// protected resource metadata is served at its path.
	Audience string
	// AuthorizationServers are announced in the protected resource metadata.
	AuthorizationServers []string
	// DevIssuer, when set, serves its JWKS, discovery document and token
	// endpoint at the server's origin (serve --dev).
	DevIssuer *auth.DevIssuer
	// Metrics receives the request and authentication series; nil keeps
	// them unexported.
	Metrics *Metrics
	// RateLimit, when on, gives every client id its own request budget.
	RateLimit RateLimit
	// AnswerCache bounds, in bytes, the cache of recent answers of
	// listSetCards, search, autocompleteNames and listChanges: 0 means
	// DefaultAnswerCache, a negative value caches nothing.
	AnswerCache int64
	// MaxDownloads bounds the exports sent at once, each of which holds
	// about 2 MB while it is sent; 0 means DefaultMaxDownloads. A client
	// may have a quarter of them (rounded up). One more is answered 503.
	MaxDownloads int
	// MaxClientRequests bounds the requests one client (a token's client
	// id) has in flight, over every connection and stream; one more is
	// answered 429. 0 means DefaultMaxClientRequests.
	MaxClientRequests int
}

// DefaultAnswerCache is the answer cache's bound when Config leaves it 0.
const DefaultAnswerCache = 16 << 20

// DefaultMaxDownloads is the exports sent at once when Config leaves
// MaxDownloads 0: some 32 MB of buffers, and more than one processor
// compresses at once.
const DefaultMaxDownloads = 16

// Authenticator checks the Authorization header of a request; its errors
// are *auth.Error.
type Authenticator interface {
	Verify(ctx context.Context, authorizationHeader string) (auth.Principal, error)
}

// Server is the HTTP face of catalogd.
type Server struct {
	catalog *store.Live
	auth    Authenticator
	// resourceMetadata is the URL of the protected resource metadata that
	// every 401 points to.
	resourceMetadata string
	audience         *url.URL
	authServers      []string
	dev              *auth.DevIssuer
	baseURL          *url.URL
	basePath         string // the path of BaseURL without a trailing slash
	log              *slog.Logger
	accessLog        io.Writer
	accessLogFilter  *accessLogFilter
	router           *httprouter.Router
	mcp              *mcp.Server
	metrics          *Metrics
	gzip             func(http.Handler) http.HandlerFunc
	limits           *limiters    // nil without a rate limit
	answers          *answerCache // nil when answers are not cached
	// downloads counts the exports being sent (handleExport).
	downloads *downloads
	// inFlight counts each client's requests in flight.
	inFlight   *clientRequests
	requestIDs requestIDs
	// generation is what the server keeps of the catalogue being served
	// (state).
	generation atomic.Pointer[generation]
	// bodies and lines recycle the buffers of answers and of access-log
	// lines: one of each per request would otherwise be garbage.
	bodies sync.Pool
	lines  sync.Pool
}

// New builds a Server from cfg.
func New(cfg Config) (*Server, error) {
	if cfg.Catalog == nil {
		return nil, errors.New("server: no catalogue")
	}
	base, err := url.Parse(cfg.BaseURL)
	if err != nil || base.Scheme == "" || base.Host == "" {
		return nil, fmt.Errorf("server: base URL %q: want an absolute URL such as http://127.0.0.1:8080/api/v1", cfg.BaseURL)
	}
	if base.RawQuery != "" || base.Fragment != "" {
		return nil, fmt.Errorf("server: base URL %q: no query or fragment allowed", cfg.BaseURL)
	}
	if cfg.Auth == nil {
		return nil, errors.New("server: no authenticator: the catalogue is never served without authentication")
	}
	if cfg.Audience == "" {
		cfg.Audience = strings.TrimRight(cfg.BaseURL, "/") + "/mcp"
	}
	audience, err := url.Parse(cfg.Audience)
	if err != nil || audience.Scheme == "" || audience.Host == "" {
		return nil, fmt.Errorf("server: audience %q: want an absolute URL", cfg.Audience)
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Server{
		catalog:  cfg.Catalog,
		auth:     cfg.Auth,
		audience: audience,
		dev:      cfg.DevIssuer,
		resourceMetadata: (&url.URL{Scheme: base.Scheme, Host: base.Host,
			Path: metadataPath + strings.TrimRight(audience.Path, "/")}).String(),
		authServers:     cfg.AuthorizationServers,
		baseURL:         base,
		basePath:        strings.TrimRight(base.EscapedPath(), "/"),
		log:             log,
		accessLog:       cfg.AccessLog,
		accessLogFilter: newAccessLogFilter(cfg.AccessLogPolicy),
		requestIDs:      newRequestIDs(),
	}
	s.bodies.New = func() any { b := make([]byte, 0, 16<<10); return &b }
	s.lines.New = func() any { b := make([]byte, 0, 512); return &b }
	s.metrics = cfg.Metrics
	if s.metrics == nil {
		if s.metrics, err = NewMetrics(prometheus.NewRegistry(), cfg.Catalog); err != nil {
			return nil, err
		}
	}
	if cfg.AnswerCache == 0 {
		cfg.AnswerCache = DefaultAnswerCache
	}
	s.answers = newAnswerCache(cfg.AnswerCache, cfg.Catalog, s.metrics)
	if err := s.limitClients(cfg); err != nil {
		return nil, err
	}
	if s.gzip, err = newGzip(); err != nil {
		return nil, err
	}
	s.mcp = s.newMCP()
	docs, err := s.docsFiles()
	if err != nil {
		return nil, err
	}
	s.router = s.routes(docs)
	return s, nil
}

// limitClients sets up what bounds each client's share: its downloads,
// its requests in flight and, when on, its rate.
func (s *Server) limitClients(cfg Config) error {
	downloads, inFlight := cmp.Or(cfg.MaxDownloads, DefaultMaxDownloads), cmp.Or(cfg.MaxClientRequests, DefaultMaxClientRequests)
	if downloads < 0 {
		return fmt.Errorf("server: %d downloads at once: want 1 or more", downloads)
	}
	if inFlight < 0 {
		return fmt.Errorf("server: %d requests in flight per client: want 1 or more", inFlight)
	}
	s.downloads, s.inFlight = newDownloads(downloads), newClientRequests(inFlight)
	if cfg.RateLimit.On() {
		if cfg.RateLimit.Burst < 1 || math.IsInf(cfg.RateLimit.PerSecond, 0) || math.IsNaN(cfg.RateLimit.PerSecond) {
			return fmt.Errorf("server: rate limit %v per second with bursts of %d: want a finite rate and a burst of at least 1", cfg.RateLimit.PerSecond, cfg.RateLimit.Burst)
		}
		s.limits = newLimiters(cfg.RateLimit)
	}
	return nil
}

// ServeHTTP routes r on its escaped path, so that an id holding a
// percent-encoded "/" stays one path segment and a literal "%" stays
// itself; handlers unescape their parameters. Each route's handler is
// wrapped in route.serve, the middleware of every request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// The path as sent: EscapedPath gives up a RawPath that holds bytes a
	// client should have encoded (UTF-8, "|") and escapes the decoded
	// path again, which turns an encoded "/" of an id into a separator.
	escaped := r.URL.RawPath
	if escaped == "" {
		escaped = r.URL.EscapedPath()
	}
	if escaped != r.URL.Path {
		r2 := *r
		u := *r.URL
		u.Path, u.RawPath = escaped, ""
		r2.URL = &u
		r = &r2
	}
	if (strings.HasSuffix(escaped, "/") || strings.Contains(escaped, "//")) && !s.inPrintedNumber(escaped) {
		// An empty segment is in no route's path, though a parameter
		// would match it: 404 whatever the token (docs/CONTRACT.md,
		// Parameters).
		s.router.NotFound.ServeHTTP(w, r)
		return
	}
	s.router.ServeHTTP(w, r)
}

// inPrintedNumber reports whether the empty segments of path lie in the
// printed number of getSetCardsByNumber, the rest of the path after
// /catalog/sets/{code}/cards/, where a "/" sent as it is belongs to the
// number (025/ as 025%2F; docs/CONTRACT.md, Lookups).
func (s *Server) inPrintedNumber(path string) bool {
	rest, ok := strings.CutPrefix(path, s.basePath+setsPath+"/")
	if !ok {
		return false
	}
	code, number, ok := strings.Cut(rest, "/cards/")
	return ok && code != "" && !strings.Contains(code, "/") && strings.Trim(number, "/") != ""
}

// route is one entry of the HTTP surface (routes.go): its name in metrics
// and access logs, whether it takes a bearer token, and its handler.
type route struct {
	s       *Server
	metrics *routeMetrics
	authed  bool
	handle  httprouter.Handle
	cost    func(*http.Request) int // what a request takes from the rate limit; nil: 1
}

func (rt *route) requestCost(r *http.Request) int {
	if rt.cost == nil {
		return 1
	}
	return rt.cost(r)
}

// serve is the middleware of every request, in order: a request id, a
// recorder of what is written, the bearer token and the rate limit (on
// catalogue routes), the handler, then, deferred, recovery from a panic
// and the request's metrics and access-log line (record). Authentication
// runs before anything looks at the parameters, so a request without a
// token is a 401 whatever else is wrong with it (docs/CONTRACT.md,
// Parameters).
func (rt *route) serve(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	s := rt.s
	start := time.Now()
	id := s.requestIDs.keep(firstHeader(r.Header, RequestIDHeader))
	w.Header()[RequestIDHeader] = []string{id}
	rec := &recorder{ResponseWriter: w, head: r.Method == http.MethodHead}
	defer rt.record(r, rec, start, id)
	// Some answers are written from the catalogue file's own mapped bytes
	// (the list of sets): in a file cut short under serve, a read of them
	// faults, and a fault is then a panic that record answers, not the
	// end of the process (docs/RELIABILITY.md).
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	if rt.authed {
		p, err := s.auth.Verify(r.Context(), firstHeader(r.Header, "Authorization"))
		if err != nil {
			s.writeUnauthorized(rec, err)
			return
		}
		rec.clientID = p.ClientID
		// In flight first: a request refused for the client's requests
		// in flight takes nothing from its budget, and its 429 says
		// nothing of the budget.
		if !s.inFlight.acquire(rec, p.ClientID) {
			return
		}
		defer s.inFlight.release(p.ClientID)
		if s.limits != nil && !s.limits.allow(rec, p.ClientID, rt.requestCost(r)) {
			return
		}
	}
	rt.handle(rec, r, ps)
}

// recorder is the ResponseWriter every request is answered through: it
// notes what the access log and the metrics report.
type recorder struct {
	http.ResponseWriter
	status   int
	bytes    int64
	writeErr error  // the first write that failed: the client got less than the status promised
	clientID string // who the bearer token names; "" before authentication
	head     bool   // a HEAD: net/http drops what the handler writes, and none of it is sent
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
	if !rec.head {
		rec.bytes += int64(n)
	}
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

// errAnswerAborted is the access log's error of an answer a panic cut
// short, or stopped before it began.
var errAnswerAborted = errors.New("the handler panicked; the answer was cut short")

// record ends every request (route.serve defers it). A handler that
// panicked is answered 500 first, or, when its answer had begun, cut short
// (http.ErrAbortHandler, once the request is recorded): a problem would
// be appended to the answer's bytes. Then the request is counted in the
// route's metrics and its access-log line written: method, route, path,
// status, bytes, duration, client id and request id, and the error when the
// answer could not be written whole (the write timeout, a client gone). The
// query is never logged: it may hold an access_token.
func (rt *route) record(r *http.Request, rec *recorder, start time.Time, requestID string) {
	s := rt.s
	if v := recover(); v != nil {
		aborted := v == http.ErrAbortHandler
		if !aborted {
			s.log.ErrorContext(r.Context(), "panic serving request", slog.String("path", r.URL.Path), slog.Any("panic", v))
		}
		if rec.status == 0 && !aborted {
			writeProblem(rec, http.StatusInternalServerError, "the server could not answer; the error was logged")
		} else {
			if rec.status == 0 { // aborted before a byte: the failure it is
				rec.status = http.StatusInternalServerError
			}
			if rec.writeErr == nil {
				rec.writeErr = errAnswerAborted
			}
			defer panic(http.ErrAbortHandler)
		}
	}
	elapsed := time.Since(start)
	status := rec.status
	if status == 0 {
		status = http.StatusOK
	}
	rt.metrics.observe(status, elapsed, rec.writeErr != nil)
	if s.accessLog == nil {
		return
	}
	if !s.accessLogFilter.writes(status, elapsed, rec.writeErr != nil) {
		s.metrics.accessLogSkipped.Inc()
		return
	}
	s.metrics.accessLogWritten.Inc()
	l := accessLine{
		at:        start,
		method:    r.Method,
		route:     rt.metrics.name,
		path:      r.URL.Path,
		status:    status,
		bytes:     rec.bytes,
		elapsed:   elapsed,
		clientID:  rec.clientID,
		requestID: requestID,
		remote:    r.RemoteAddr,
		writeErr:  rec.writeErr,
	}
	buf := s.lines.Get().(*[]byte)
	*buf = l.appendJSON((*buf)[:0])
	s.accessLog.Write(*buf)
	if cap(*buf) <= 64<<10 {
		s.lines.Put(buf)
	}
}

// ServeHTTP serves the requests the router answers itself (no such
// resource, a method not allowed, OPTIONS), which have no parameters.
func (rt *route) ServeHTTP(w http.ResponseWriter, r *http.Request) { rt.serve(w, r, nil) }

// generation is what the server keeps of one catalogue: it lasts as long
// as that catalogue is served, and one swapped in starts with its own.
type generation struct {
	db          *store.DB
	answers     *answerSet // nil without an answer cache
	setsGzipMu  sync.Mutex
	setsGzip    atomic.Pointer[[]byte]
	exportGzips exportGzips
}

// state returns the server's state of db: the current one's, made by the
// first request on it; a request still on a replaced catalogue gets a
// state of its own that nothing keeps.
func (s *Server) state(db *store.DB) *generation {
	cur := s.generation.Load()
	if cur != nil && cur.db == db {
		return cur
	}
	g := &generation{db: db, answers: s.answers.newSet()}
	if db != s.catalog.Current() || s.generation.CompareAndSwap(cur, g) {
		return g
	}
	if cur = s.generation.Load(); cur != nil && cur.db == db {
		return cur // made by a request at the same time
	}
	return g
}
