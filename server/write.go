package server

import (
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"

	"github.com/catalogd/catalogd/catalog/store"
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

// etag returns the validators of the answer to r from db. Its ETag is
// strong: a catalogue generation never changes, so the same request to the
// same generation always gets the same bytes.
func etag(db *store.DB, r *http.Request) *validators {
	var kb [256]byte // on the stack for all but outsized requests
	return validatorsOf(db, answerKey(kb[:0], r))
}

// validatorsOf returns the validators of the answer from db to the request
// key (answerKey).
func validatorsOf(db *store.DB, key []byte) *validators {
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

// jsonContentType is shared by every answer; header values are never
// modified in place, only replaced.
var jsonContentType = []string{"application/json"}

// AutoLengthMax is the largest body net/http gives a Content-Length of its
// own: it holds that much before it sends the header, and a handler that
// returns by then gets the length written without a header-map entry (no
// allocation, nothing to copy or sort). 2 KB is net/http's buffer; its
// documentation promises "a few KB". Longer bodies declare their length, or
// net/http would send them chunked.
const AutoLengthMax = 2048

// writeAnswer writes the 200 of a catalogue request whose validators are
// valid and whose body is parts, or a 304 or 412 when the request's
// preconditions say so (preconditionsHold). The body is compressed when
// the client takes gzip and it is large enough to gain (compressible):
// zipped returns it compressed when that is kept somewhere (the list of
// sets, a cached answer), and is nil otherwise. The body was built before
// the preconditions are looked at: "*" matches only an answer that exists,
// and a card or set that does not is a 404. A compressible body varies
// with Accept-Encoding, and its 304 carries the Vary its 200 would (RFC
// 9110 section 15.4.5); a smaller one is the same bytes for every client,
// so neither says Vary.
func writeAnswer(w http.ResponseWriter, r *http.Request, valid *validators, zipped func() []byte, parts ...[]byte) {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	h := w.Header()
	h["Etag"] = valid[0:1:1]
	h[GenerationHeader] = valid[1:2:2]
	h["Cache-Control"] = privateCache
	gzipped := compressible(n)
	if gzipped {
		varyOnAcceptEncoding(h)
		gzipped = acceptsGzip(r)
	}
	tag := valid[0]
	if gzipped {
		// The compressed body is another representation, with a tag of
		// its own.
		tag = gzipTag(tag)
		h["Etag"] = []string{tag}
	}
	if !preconditionsHold(w, r, tag) {
		return
	}
	if !gzipped {
		writeBody(w, n, r.ProtoMajor == 2, parts...)
		return
	}
	var body []byte
	if zipped != nil {
		body = zipped()
	} else {
		body = gzipBytes(parts...)
	}
	h["Content-Encoding"] = gzipEncoding
	writeBody(w, len(body), false, body)
}

// preconditionsHold evaluates r's If-Match and If-None-Match against tag,
// the ETag of the representation its 200 would send, in the order of RFC
// 9110 section 13.2.2: when one fails it answers, 412 or 304, and reports
// false. Only the representation's own tag matches (section 13.1): the
// plain answer's tag does not revalidate the compressed one, for a cache
// that holds both would serve the one the client did not ask for.
func preconditionsHold(w http.ResponseWriter, r *http.Request, tag string) bool {
	if im := listHeader(r.Header, "If-Match"); im != "" && !etagListHas(im, tag, true) {
		writeProblem(w, http.StatusPreconditionFailed, preconditionFailed(tag))
		return false
	}
	if inm := listHeader(r.Header, "If-None-Match"); inm != "" && etagListHas(inm, tag, false) {
		w.WriteHeader(http.StatusNotModified)
		return false
	}
	return true
}

// h2Piece is the most an answer writes at once over HTTP/2, where the
// connection's goroutine copies a larger write; a smaller one is copied
// into the stream's buffer by the handler's. The list of sets is written
// from the catalogue file's mapped bytes, and a fault copying them is a
// panic route.serve answers only in the handler's goroutine.
const h2Piece = 2048

// writeBody writes a 200 whose JSON body is the parts, n bytes in all,
// in pieces of h2Piece when inPieces (HTTP/2).
func writeBody(w http.ResponseWriter, n int, inPieces bool, parts ...[]byte) {
	h := w.Header()
	h["Content-Type"] = jsonContentType
	if n > AutoLengthMax {
		h["Content-Length"] = []string{strconv.Itoa(n)}
	}
	w.WriteHeader(http.StatusOK)
	for _, p := range parts {
		for inPieces && len(p) > h2Piece {
			w.Write(p[:h2Piece])
			p = p[h2Piece:]
		}
		w.Write(p)
	}
}

// answerKey appends the key of r's answer, which its ETag and the answer
// cache are made from: its escaped path (which Server.ServeHTTP leaves in
// r.URL.Path) and raw query.
func answerKey(b []byte, r *http.Request) []byte {
	b = append(b, r.URL.Path...)
	b = append(b, '?')
	return append(b, r.URL.RawQuery...)
}

// preconditionFailed is the detail of a 412: If-Match named none of tag.
func preconditionFailed(tag string) string {
	return "If-Match names no tag of this answer, which is now " + tag +
		": the catalogue was imported again since the tag was read, or the tag is the other representation's (plain or gzip, as Accept-Encoding asks)"
}

// listHeader returns the list that h's field named key (in canonical
// form) holds, which a client may split across several lines (RFC 9110
// section 5.3).
func listHeader(h http.Header, key string) string {
	v := h[key]
	if len(v) > 1 {
		return strings.Join(v, ",")
	}
	return firstHeader(h, key)
}

// etagListHas reports whether a list of entity tags names tag, or is "*",
// which names any representation that exists (RFC 9110 section 13.1).
// If-None-Match compares weakly, ignoring W/ prefixes; If-Match strongly
// (strong), where a weak tag names nothing.
func etagListHas(list, tag string, strong bool) bool {
	for list != "" {
		var candidate string
		candidate, list, _ = strings.Cut(list, ",")
		candidate = strings.TrimSpace(candidate)
		if !strong {
			candidate = strings.TrimPrefix(candidate, "W/")
		}
		if candidate == "*" || candidate == tag {
			return true
		}
	}
	return false
}
