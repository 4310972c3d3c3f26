package server

import (
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"strings"

	"github.com/catalogd/catalogd/catalog"
)

// GenerationHeader names the catalogue generation that answered, so that a
// partner can tell which import a response came from.
const GenerationHeader = "Catalog-Generation"

// etag is the strong validator of an answer: a catalogue generation never
// changes, so the same request to the same generation always gets the same
// bytes. The request is its escaped path and raw query.
func etag(db *catalog.DB, r *http.Request) string {
	gen := db.Generation()
	h := sha256.New()
	h.Write([]byte(r.URL.EscapedPath()))
	h.Write([]byte{'?'})
	h.Write([]byte(r.URL.RawQuery))
	var sum [sha256.Size]byte
	b := make([]byte, 0, len(gen)+2+24)
	b = append(b, '"')
	b = append(b, gen...)
	b = append(b, '.')
	b = base64.RawURLEncoding.AppendEncode(b, h.Sum(sum[:0])[:16])
	b = append(b, '"')
	return string(b)
}

// notModified answers 304 when the request's If-None-Match names tag, and
// otherwise sets the validators a 200 carries.
func notModified(w http.ResponseWriter, r *http.Request, db *catalog.DB, tag string) bool {
	h := w.Header()
	h.Set("ETag", tag)
	// Only the partner's own cache may keep an answer: it was given to a token.
	h.Set("Cache-Control", "private")
	h.Set(GenerationHeader, db.Generation())
	inm := r.Header.Get("If-None-Match")
	if inm == "" {
		return false
	}
	matched, ok := etagListMatch(inm, tag)
	if !ok {
		return false
	}
	// A 304 names the representation the client holds: the compressed
	// one's tag carries the gzip suffix.
	h.Set("ETag", matched)
	w.WriteHeader(http.StatusNotModified)
	return true
}

// etagListMatch returns the entry of an If-None-Match list that names tag,
// as tag itself or as its compressed variant. GET and HEAD compare weakly
// (RFC 9110 section 13.1.2), so W/ prefixes are ignored.
func etagListMatch(list, tag string) (string, bool) {
	for list != "" {
		var candidate string
		candidate, list, _ = strings.Cut(list, ",")
		candidate = strings.TrimPrefix(strings.TrimSpace(candidate), "W/")
		switch {
		case candidate == "*" || candidate == tag:
			return tag, true
		case isGzipVariant(candidate, tag):
			return candidate, true
		}
	}
	return "", false
}

// isGzipVariant reports whether candidate is tag with the gzip suffix
// inside its closing quote, as the compression middleware writes it.
func isGzipVariant(candidate, tag string) bool {
	body := tag[:len(tag)-1] // without the closing quote
	return len(candidate) == len(tag)+len(gzipETagSuffix) &&
		strings.HasPrefix(candidate, body) &&
		candidate[len(body):] == gzipETagSuffix+`"`
}
