// Package server answers the partner API (docs/CONTRACT.md, REST) and its MCP
// interface over HTTP, straight from the catalogue file.
package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/catalogd/catalogd/catalog"
	"github.com/catalogd/catalogd/server/auth"
	"github.com/julienschmidt/httprouter"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"
)

// Config is what a Server needs.
type Config struct {
	// Catalog is the catalogue to answer from.
	Catalog *catalog.Live
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
	// AnswerCache bounds, in bytes, the cache of recent catalogue answers:
	// 0 means DefaultAnswerCache, a negative value caches nothing.
	AnswerCache int64
}

// DefaultAnswerCache is the answer cache's bound when Config leaves it 0.
const DefaultAnswerCache = 16 << 20

// Authenticator checks the Authorization header of a request; its errors
// are *auth.Error.
type Authenticator interface {
	Verify(ctx context.Context, authorizationHeader string) (auth.Principal, error)
}

// Server is the HTTP face of catalogd.
type Server struct {
	catalog *catalog.Live
	auth    Authenticator
	// resourceMetadata is the URL of the protected resource metadata that
	// every 401 points to.
	resourceMetadata string
	audience         *url.URL
	authServers      []string
	dev              *auth.DevIssuer
	baseURL          *url.URL
	basePath         string // the path of BaseURL without a trailing slash
	setsPrefix       string // of the escaped path of listSetCards, before the code
	cardsPrefix      string // of the escaped path of getCard, before the id
	log              *slog.Logger
	accessLog        io.Writer
	router           *httprouter.Router
	mcp              *mcp.Server
	metrics          *Metrics
	unmatched        *routeMetrics // requests no route claims
	gzip             func(http.Handler) http.HandlerFunc
	limits           *limiters    // nil without a rate limit
	answers          *answerCache // nil when answers are not cached
	bufs             sync.Pool
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
		authServers: cfg.AuthorizationServers,
		baseURL:     base,
		basePath:    strings.TrimRight(base.EscapedPath(), "/"),
		log:         log,
		accessLog:   cfg.AccessLog,
	}
	s.setsPrefix = s.basePath + setsPath + "/"
	s.cardsPrefix = s.basePath + cardsPath + "/"
	s.bufs.New = func() any { b := make([]byte, 0, 16<<10); return &b }
	s.metrics = cfg.Metrics
	if s.metrics == nil {
		if s.metrics, err = NewMetrics(prometheus.NewRegistry(), cfg.Catalog); err != nil {
			return nil, err
		}
	}
	s.unmatched = s.metrics.route("other")
	if cfg.AnswerCache == 0 {
		cfg.AnswerCache = DefaultAnswerCache
	}
	s.answers = newAnswerCache(cfg.AnswerCache, cfg.Catalog, s.metrics)
	if cfg.RateLimit.On() {
		if cfg.RateLimit.Burst < 1 || math.IsInf(cfg.RateLimit.PerSecond, 0) || math.IsNaN(cfg.RateLimit.PerSecond) {
			return nil, fmt.Errorf("server: rate limit %v per second with bursts of %d: want a finite rate and a burst of at least 1", cfg.RateLimit.PerSecond, cfg.RateLimit.Burst)
		}
		s.limits = newLimiters(cfg.RateLimit)
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

// ServeHTTP answers r and records it in the metrics and the access log.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.observe(w, r)
}

// dispatch routes on the escaped path, so that an id holding a
// percent-encoded "/" stays one path segment and a literal "%" stays
// itself; handlers unescape their parameters.
func (s *Server) dispatch(w http.ResponseWriter, r *http.Request) {
	if escaped := r.URL.EscapedPath(); escaped != r.URL.Path {
		r2 := *r
		u := *r.URL
		u.Path, u.RawPath = escaped, ""
		r2.URL = &u
		r = &r2
	}
	s.router.ServeHTTP(w, r)
}

// getBuf and putBuf recycle response buffers.
func (s *Server) getBuf() *[]byte { return s.bufs.Get().(*[]byte) }

func (s *Server) putBuf(b *[]byte) {
	if cap(*b) > 1<<20 {
		return // let an outsized buffer go
	}
	*b = (*b)[:0]
	s.bufs.Put(b)
}

// catalogueState is what the server computes from one catalogue and keeps
// with it (catalog.DB.Derived): it lasts as long as the catalogue, and a
// catalogue swapped in starts with its own.
type catalogueState struct {
	answers      *answerSet // nil without an answer cache
	setsGzipOnce sync.Once
	setsGzip     []byte
	exportGzips  exportGzips
}

// state returns the server's state of db.
func (s *Server) state(db *catalog.DB) *catalogueState {
	return db.Derived(func() any { return &catalogueState{answers: s.answers.newSet()} }).(*catalogueState)
}
