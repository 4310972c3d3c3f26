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

// validators are the values of an answer's ETag and Catalog-Generation
// headers. The header slices point into the array, which is never modified:
// setting both costs one allocation, and none for a cached answer, whose
// validators are made once.
type validators [2]string

// tag is the answer's ETag.
func (v *validators) tag() string { return v[0] }

// etag returns the validators of an answer. Its ETag is strong: a catalogue
// generation never changes, so the same request to the same generation
// always gets the same bytes. The request is its escaped path and raw query
// (answerKey).
func etag(db *catalog.DB, key []byte) *validators {
	sum := sha256.Sum256(key)
	var out [128]byte // on the stack
	t := append(out[:0], '"')
	t = append(t, db.Generation()...)
	t = append(t, '.')
	t = base64.RawURLEncoding.AppendEncode(t, sum[:16])
	t = append(t, '"')
	return &validators{string(t), db.Generation()}
}

// privateCache is the Cache-Control of every answer: only the partner's own
// cache may keep it, for it was given to a token.
var privateCache = []string{"private"}

// notModified answers 304 when the request's If-None-Match names the
// answer's tag, and otherwise sets the validators a 200 carries. A body of
// size bytes that is compressible (gzipMinSize) varies with
// Accept-Encoding, and its 304 carries the Vary its 200 would (RFC 9110
// section 15.4.5); a smaller one is the same bytes for every client, so
// neither says Vary.
func notModified(w http.ResponseWriter, r *http.Request, v *validators, size int) bool {
	h := w.Header()
	h["Etag"] = v[0:1:1]
	h[GenerationHeader] = v[1:2:2]
	h["Cache-Control"] = privateCache
	if compressible(size) {
		varyOnAcceptEncoding(h)
	}
	inm := firstHeader(r.Header, "If-None-Match")
	if inm == "" {
		return false
	}
	matched, ok := etagListMatch(inm, v.tag())
	if !ok {
		return false
	}
	// A 304 names the representation the client holds: the compressed
	// one's tag carries the gzip suffix.
	h["Etag"] = []string{matched}
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
// inside its closing quote, as gzipTag and the compression middleware
// write it.
func isGzipVariant(candidate, tag string) bool {
	body := tag[:len(tag)-1] // without the closing quote
	return len(candidate) == len(tag)+len(gzipETagSuffix) &&
		strings.HasPrefix(candidate, body) &&
		candidate[len(body):] == gzipETagSuffix+`"`
}
