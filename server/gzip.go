package server

import (
	"compress/gzip"
	"net/http"

	"github.com/klauspost/compress/gzhttp"
)

// gzipETagSuffix marks the strong ETag of a compressed answer, which is a
// different representation from the plain one (RFC 9110 section 8.8.3).
const gzipETagSuffix = "-gzip"

// gzipMinSize is the smallest answer worth compressing: below about a
// kilobyte the gzip header and the CPU cost outweigh the bytes saved.
const gzipMinSize = 1024

// newGzip returns the middleware that compresses answers for clients that
// accept gzip. Only gzip: it is what every partner's HTTP stack decodes.
func newGzip() (func(http.Handler) http.HandlerFunc, error) {
	return gzhttp.NewWrapper(
		gzhttp.EnableZstd(false),
		gzhttp.MinSize(gzipMinSize),
		gzhttp.CompressionLevel(gzip.BestSpeed),
		gzhttp.SuffixETag(gzipETagSuffix),
	)
}
