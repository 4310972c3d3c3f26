package server

import (
	"compress/gzip"
	"net/http"

	"github.com/klauspost/compress/gzhttp"
)

// gzipETagSuffix marks the strong ETag of a compressed answer, which is a
// different representation from the plain one (RFC 9110 section 8.8.3).
const gzipETagSuffix = "-gzip"

// varyAcceptEncoding is shared by every answer; header values are never
// modified in place, only replaced or appended to (which copies a full
// slice).
var varyAcceptEncoding = []string{"Accept-Encoding"}

// gzipMinSize is the smallest answer worth compressing: below about a
// kilobyte the gzip header and the CPU cost outweigh the bytes saved.
const gzipMinSize = 1024

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
			// A request that accepts no encoding gets the plain answer:
			// the wrapper would only negotiate that at a cost, per request,
			// of a response writer and a header scan.
			if _, ok := r.Header["Accept-Encoding"]; !ok {
				if h := w.Header(); h["Vary"] == nil {
					h["Vary"] = varyAcceptEncoding
				} else {
					h.Add("Vary", "Accept-Encoding")
				}
				h.ServeHTTP(w, r)
				return
			}
			compressing(w, r)
		}
	}, nil
}
