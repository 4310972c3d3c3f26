package server

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/catalogd/catalogd/internal/logbuf"
)

// BenchmarkHandlers prices each route of the partner API through the whole
// Server as serve runs it (access log batched, metrics, token cache, gzip
// wrapper), on the sample catalogue, with a response writer that keeps
// nothing: the allocations counted are the server's own. "cached" answers
// from the answer cache after the first call, as a repeated request is;
// "uncached" reads the catalogue every time; "gzip" is "cached" for a
// client that accepts gzip, as most HTTP clients do by default.
func BenchmarkHandlers(b *testing.B) {
	logs := logbuf.New(io.Discard, 100*time.Millisecond)
	b.Cleanup(func() { logs.Close() })
	for _, mode := range []struct {
		name, acceptEncoding string
		bytes                int64
	}{{"cached", "", 0}, {"uncached", "", -1}, {"gzip", "gzip", 0}} {
		f := newFixtureWith(b, func(c *Config) { c.AccessLog, c.AnswerCache = logs.Batched(), mode.bytes })
		b.Run(mode.name, func(b *testing.B) { benchmarkRoutes(b, f, mode.acceptEncoding) })
	}
}

func benchmarkRoutes(b *testing.B, f *fixture, acceptEncoding string) {
	for _, bc := range []struct{ name, target string }{
		{"listSets", "/catalog/sets"},
		{"listSetCards", "/catalog/sets/SV1a/cards?pageSize=50"},
		{"getCard", "/catalog/cards/jp-SV1a-001"},
		{"search", "/catalog/search?q=%E3%83%94%E3%82%AB%E3%83%81%E3%83%A5%E3%82%A6"},
		{"searchNumber", "/catalog/search?q=001"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			req := httptest.NewRequest(http.MethodGet, f.base+bc.target, nil)
			req.Header.Set("Authorization", "Bearer "+f.token)
			if acceptEncoding != "" {
				req.Header.Set("Accept-Encoding", acceptEncoding)
			}
			w := &discardWriter{header: http.Header{}}
			f.srv.ServeHTTP(w, req) // fills the token cache
			if w.status != http.StatusOK {
				b.Fatalf("status %d", w.status)
			}
			b.SetBytes(w.bytes)
			b.ReportAllocs()
			for b.Loop() {
				clear(w.header)
				w.status, w.bytes = 0, 0
				f.srv.ServeHTTP(w, req)
			}
			if w.status != http.StatusOK {
				b.Fatalf("status %d", w.status)
			}
		})
	}
}

// discardWriter is a ResponseWriter that keeps only the status and the
// number of bytes, as a connection writing to the network would.
type discardWriter struct {
	header http.Header
	status int
	bytes  int64
}

func (w *discardWriter) Header() http.Header { return w.header }

func (w *discardWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}

func (w *discardWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	w.bytes += int64(len(p))
	return len(p), nil
}
