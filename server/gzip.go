package server

import (
	"bytes"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/klauspost/compress/gzhttp"
	"github.com/klauspost/compress/gzhttp/writer/gzkp"
	"github.com/klauspost/compress/gzip"
)

// gzipETagSuffix marks the strong ETag of a compressed answer, which is a
// different representation from the plain one (RFC 9110 section 8.8.3).
// It names the compressed bytes too: when they change for the same plain
// ones (TestCompressedBytesArePinned), so does the suffix (-gzip2).
const gzipETagSuffix = "-gzip"

// varyAcceptEncoding is shared by every answer; header values are never
// modified in place, only replaced or appended to (which copies a full
// slice).
var varyAcceptEncoding = []string{"Accept-Encoding"}

// varyOnAcceptEncoding adds Accept-Encoding to h's Vary.
func varyOnAcceptEncoding(h http.Header) {
	if h["Vary"] == nil {
		h["Vary"] = varyAcceptEncoding
	} else {
		h.Add("Vary", "Accept-Encoding")
	}
}

// gzipMinSize is the smallest answer worth compressing: below about a
// kilobyte the gzip header and the CPU cost outweigh the bytes saved.
const gzipMinSize = 1024

// compressible reports whether an answer of n bytes is compressed for
// clients that take gzip, and so varies with Accept-Encoding.
func compressible(n int) bool { return n >= gzipMinSize }

// newGzip returns the middleware that compresses answers for clients that
// accept gzip. Only gzip: it is what every partner's HTTP stack decodes.
func newGzip() (func(http.Handler) http.HandlerFunc, error) {
	wrap, err := gzhttp.NewWrapper(
		gzhttp.EnableZstd(false),
		gzhttp.MinSize(gzipMinSize),
		gzhttp.CompressionLevel(gzip.BestSpeed),
		gzhttp.SuffixETag(gzipETagSuffix),
	)
	if err != nil {
		return nil, err
	}
	return func(h http.Handler) http.HandlerFunc {
		compressing := wrap(h)
		return func(w http.ResponseWriter, r *http.Request) {
			// A request that takes no gzip gets the plain answer: the
			// wrapper would only negotiate that at a cost, per request, of
			// a response writer and a header scan. One that takes it is
			// told so in the one form the wrapper reads alike, so that
			// whether an answer is compressed follows one rule,
			// acceptsGzip's, on every route.
			if _, ok := r.Header["Accept-Encoding"]; !ok || !acceptsGzip(r) {
				varyOnAcceptEncoding(w.Header())
				h.ServeHTTP(w, r)
				return
			}
			r.Header["Accept-Encoding"] = gzipEncoding
			compressing(w, r)
		}
	}, nil
}

// The catalogue's answers are not compressed by the middleware but by
// writeAnswer: the answer cache keeps the compressed body with the plain
// one, and the list of sets is compressed once per catalogue. Compressing
// 17 KB of cards costs more than ten times what serving them from the cache
// does, and a partner's HTTP client asks for gzip by default.

// gzipEncoding is the Content-Encoding value of compressed answers.
var gzipEncoding = []string{"gzip"}

// acceptsGzip reports whether r takes a gzip answer: an Accept-Encoding
// (its lines read as one list) naming gzip, or x-gzip (RFC 9110 section
// 8.4.1.3), with a q-value above 0; and not a HEAD, which is answered as
// a client that takes no gzip would be, as the compression middleware
// answers it (for a bug of nginx it cites: golang.org/issue/5522). A
// q-value that reads as no finite number (NaN, inf, 1e400) refuses gzip.
func acceptsGzip(r *http.Request) bool {
	if r.Method == http.MethodHead {
		return false
	}
	return gzipQValue(listHeader(r.Header, "Accept-Encoding")) > 0
}

// gzipQValue returns the q-value the Accept-Encoding value ae gives gzip
// (or x-gzip, whichever it names first), 0 when it names neither or a
// malformed one.
func gzipQValue(ae string) float64 {
	for ae != "" {
		var coding string
		coding, ae, _ = strings.Cut(ae, ",")
		name, params, _ := strings.Cut(coding, ";")
		if name = strings.TrimSpace(name); !strings.EqualFold(name, "gzip") && !strings.EqualFold(name, "x-gzip") {
			continue
		}
		q := 1.0
		for params != "" {
			var param string
			param, params, _ = strings.Cut(params, ";")
			param = strings.TrimSpace(param)
			if len(param) >= 2 && strings.EqualFold(param[:2], "q=") {
				v, err := strconv.ParseFloat(param[2:], 64)
				if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
					return 0
				}
				q = min(max(v, 0), 1)
			}
		}
		return q
	}
	return 0
}

// encodedAnswer is the compressed representation of an answer.
type encodedAnswer struct {
	etag []string // the plain tag with gzipETagSuffix
	body []byte
}

// encodeGzip compresses the answer whose plain tag is tag.
func encodeGzip(tag string, body []byte) *encodedAnswer {
	return &encodedAnswer{etag: []string{gzipTag(tag)}, body: gzipBytes(body)}
}

// gzipTag is the tag of the compressed representation of the answer whose
// plain tag is tag: the suffix goes inside the closing quote.
func gzipTag(tag string) string { return tag[:len(tag)-1] + gzipETagSuffix + `"` }

// gzipBytes compresses the parts as one body. The bytes depend only on the
// parts: every replica gives the same ones under the same strong tag.
func gzipBytes(parts ...[]byte) []byte {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	var out bytes.Buffer
	out.Grow(n/4 + 64)
	// From the pool the compression middleware uses too: a gzip.Writer
	// holds several hundred KB.
	zw := gzkp.NewWriter(&out, gzip.BestSpeed)
	for _, p := range parts {
		zw.Write(p) // a bytes.Buffer does not fail
	}
	zw.Close()
	// The buffer may have doubled past the output; what is kept is counted
	// by its length (answer cache), so keep no more.
	return bytes.Clone(out.Bytes())
}

// setsGzipped returns the compressed list of sets of g's catalogue, whose
// answer is parts. It is compressed once per catalogue, by the first
// request that asks, which the others wait for: it can be a megabyte, too
// much to compress per request.
func (g *generation) setsGzipped(parts [][]byte) []byte {
	if z := g.setsGzip.Load(); z != nil {
		return *z
	}
	// Not a sync.Once: the parts are the file's mapped bytes, and a fault
	// reading them (route.serve) must leave the next request to try again,
	// not a Once spent on nothing.
	g.setsGzipMu.Lock()
	defer g.setsGzipMu.Unlock()
	if z := g.setsGzip.Load(); z != nil {
		return *z
	}
	z := gzipBytes(parts...)
	g.setsGzip.Store(&z)
	return z
}
