// Package server answers the partner API (spec section 4) and its MCP
// interface over HTTP, straight from the catalogue file.
package server

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/catalogd/catalogd/catalog"
	"github.com/julienschmidt/httprouter"
)

// Config is what a Server needs.
type Config struct {
	// Catalog is the catalogue to answer from.
	Catalog *catalog.Live
	// BaseURL is the public URL of the API, version segment included
	// (http://127.0.0.1:8080/api/v1); routes are mounted under its path.
	BaseURL string
	// Logger receives errors and, later, access logs; nil discards.
	Logger *slog.Logger
}

// Server is the HTTP face of catalogd.
type Server struct {
	catalog  *catalog.Live
	baseURL  *url.URL
	basePath string // the path of BaseURL without a trailing slash
	log      *slog.Logger
	router   *httprouter.Router
	bufs     sync.Pool
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
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Server{
		catalog:  cfg.Catalog,
		baseURL:  base,
		basePath: strings.TrimRight(base.EscapedPath(), "/"),
		log:      log,
	}
	s.bufs.New = func() any { b := make([]byte, 0, 16<<10); return &b }
	s.router = s.routes()
	return s, nil
}

// ServeHTTP routes on the escaped path, so that an id holding a
// percent-encoded "/" stays one path segment and a literal "%" stays
// itself; handlers unescape their parameters.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
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
