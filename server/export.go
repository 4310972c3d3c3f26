package server

import (
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/catalogd/catalogd/server/op"
	"github.com/julienschmidt/httprouter"
)

// handleExport answers exportCatalog: the whole catalogue, or one zone, as
// a snapshot catalogd import reads back (docs/CONTRACT.md, Partner sync).
// The body streams from the catalogue file, so a download holds a buffer
// whatever the catalogue's size. net/http's ServeContent does the
// conditional and range requests (If-None-Match, Range, If-Range, 416) over
// a reader that can start anywhere.
func (s *Server) handleExport(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	p, err := restParams(r, ps)
	var req op.ExportRequest
	if err == nil {
		req, err = op.ParseExport(p)
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	zone := req.Zone
	db, release := s.catalog.Acquire()
	defer release()
	export, err := db.Export(zone)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	plain, err := export.Open()
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	defer plain.Close()

	valid := validatorsOf(db, []byte("exportCatalog?zone="+zone))
	h := w.Header()
	h["Content-Type"] = jsonContentType
	h["Cache-Control"] = privateCache
	h[GenerationHeader] = valid[1:2:2]
	varyOnAcceptEncoding(h)
	var body io.ReadSeeker = plain
	// The client whose downloads are counted, whose token route.serve
	// verified.
	client := clientOf(w)
	out := &exportWriter{ResponseWriter: w, rc: http.NewResponseController(w), downloads: s.downloads, client: client, head: r.Method == http.MethodHead}
	defer out.release()
	tag := valid.tag()
	if acceptsGzip(r) {
		slot := s.exportGzip(db, zone)
		layout := slot.known()
		if layout == nil && streamable(r) {
			// The first download of this export sends it as it is
			// compressed, at once, and learns its layout on the way.
			h["Content-Encoding"] = gzipEncoding
			h["Etag"] = []string{gzipTag(tag)}
			streamGzipExport(out, r, slot, plain, export.Size(), tag)
			return
		}
		if layout == nil {
			// A range or a precondition: the layout first.
			if layout, err = slot.measure(export); err != nil {
				s.writeError(w, r, err)
				return
			}
		}
		body = &gzipExportReader{plain: plain, layout: layout}
		out.encodedSize = layout.size
		tag = gzipTag(tag)
		h["Content-Encoding"] = gzipEncoding
	}
	h["Etag"] = []string{tag}
	size := export.Size()
	if out.encodedSize > 0 {
		size = out.encodedSize
	}
	prepareConditions(r.Header, size)
	http.ServeContent(out, r, "", time.Time{}, body)
}

// prepareConditions readies the conditional and range header fields of a
// request for the representation of size bytes for http.ServeContent,
// which would otherwise answer:
//   - an If-None-Match or If-Match list split across lines by its first
//     line alone, where RFC 9110 section 5.3 has the lines read as one
//     list;
//   - several ranges with multipart/byteranges, the compressed parts
//     under a Content-Encoding that is not the multipart body's, each range
//     compressing its chunk again: a request of many small ranges would
//     cost seconds of CPU. A download resumes with one range, so several
//     get the whole representation, as RFC 9110 section 14.2 allows;
//   - a Range it cannot parse, or of another unit, with a 416, where
//     section 14.2 has it ignored: the whole representation;
//   - "bytes=-0" with a 206 of no bytes, where it is unsatisfiable
//     (section 14.1.3): a 416, through a range that starts at the end.
//
// ServeContent compares the tags with the representation's own, as the
// API's other answers do (preconditionsHold).
func prepareConditions(h http.Header, size int64) {
	for _, key := range [...]string{"If-Match", "If-None-Match"} {
		if len(h[key]) > 1 {
			h[key] = []string{listHeader(h, key)}
		}
	}
	if v := h["Range"]; len(v) > 0 {
		if spec, ok := singleByteRange(v, size); ok {
			h["Range"] = []string{spec}
		} else {
			delete(h, "Range")
		}
	}
}

// singleByteRange returns a Range field's values as one range of bytes
// that ServeContent reads as RFC 9110 section 14.1 does, when they are one
// valid range; a range past the end of size bytes stays past it.
func singleByteRange(v []string, size int64) (string, bool) {
	if len(v) != 1 {
		return "", false
	}
	unit, specs, ok := strings.Cut(v[0], "=")
	if !ok || !strings.EqualFold(strings.TrimSpace(unit), "bytes") {
		return "", false
	}
	// A list may hold empty elements (RFC 9110 section 5.6.1).
	spec, n := "", 0
	for s := range strings.SplitSeq(specs, ",") {
		if s = strings.TrimSpace(s); s != "" {
			spec, n = s, n+1
		}
	}
	if n != 1 {
		return "", false
	}
	first, last, ok := strings.Cut(spec, "-")
	first, last = strings.TrimSpace(first), strings.TrimSpace(last)
	if !ok || first == "" && last == "" || first != "" && !digits(first) || last != "" && !digits(last) {
		return "", false
	}
	from, fromErr := strconv.ParseInt(first, 10, 64)
	to, toErr := strconv.ParseInt(last, 10, 64)
	switch {
	case first == "": // the last bytes
		if toErr != nil { // more than there are
			return "bytes=0-", true
		}
		if to == 0 {
			return "bytes=" + strconv.FormatInt(size, 10) + "-", true
		}
		return "bytes=-" + last, true
	case fromErr != nil && last != "" && toErr == nil: // the last byte before the first
		return "", false
	case fromErr != nil: // past any end
		return "bytes=" + strconv.FormatInt(size, 10) + "-", true
	case last == "" || toErr != nil: // to the end
		return "bytes=" + first + "-", true
	case to < from:
		return "", false
	}
	return "bytes=" + first + "-" + last, true
}

// digits reports whether s is one or more decimal digits.
func digits(s string) bool {
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

// exportStall is how long a download may make no progress before the
// connection is dropped. An export takes longer than the server's write
// timeout, which bounds whole answers; the deadline moves with each write
// instead.
const exportStall = 30 * time.Second

// exportWriter moves the connection's write deadline forward on each
// write, turns the plain-text errors of ServeContent (416, 412) into
// problems like every other error of the API, and counts itself among the
// downloads being sent while it sends a body.
type exportWriter struct {
	http.ResponseWriter
	rc      *http.ResponseController
	problem bool // a problem was written: drop ServeContent's text and body

	// downloads counts the exports being sent, of client among them; head
	// is a HEAD request, which sends no body; holds is whether this one is
	// counted.
	downloads *downloads
	client    string
	head      bool
	holds     bool

	// encodedSize is the length of the compressed representation, when it
	// is the one sent: ServeContent gives no Content-Length to an encoded
	// body, and a download's progress and resumption want one.
	encodedSize int64
}

// downloadRetry is the Retry-After of a download refused for want of a
// slot: about what a download of a small catalogue takes.
const downloadRetry = 10

func (w *exportWriter) WriteHeader(status int) {
	if status < 300 && !w.head {
		// A body follows, with the buffers it needs, if they are to be had.
		why, ok := w.downloads.take(w.client)
		if !ok {
			w.refuse(why)
			return
		}
		w.holds = true
	}
	if status < 400 {
		if w.encodedSize > 0 {
			setEncodedLength(w.Header(), status, w.encodedSize)
		}
		w.ResponseWriter.WriteHeader(status)
		return
	}
	detail := preconditionFailed(w.Header().Get("Etag"))
	if status == http.StatusRequestedRangeNotSatisfiable {
		detail = "the range is past the end of the export, whose length Content-Range gives; download it again from the start"
	}
	// The problem is plain JSON, whatever the representation asked.
	w.Header().Del("Content-Encoding")
	w.problem = true
	writeProblem(w.ResponseWriter, status, detail)
}

// refuse answers a download that is not to be sent now with a 503: the
// client retries once one of those being sent has ended.
func (w *exportWriter) refuse(why string) {
	h := w.Header()
	h.Del("Content-Encoding")
	h.Del("Content-Range")
	h.Del("Accept-Ranges")
	h.Del(GenerationHeader) // no generation answered
	h.Set("Retry-After", strconv.Itoa(downloadRetry))
	w.problem = true
	writeProblem(w.ResponseWriter, http.StatusServiceUnavailable, fmt.Sprintf("%s; retry after %d s", why, downloadRetry))
}

// release ends the count of this download, once the handler is done.
func (w *exportWriter) release() {
	if w.holds {
		w.downloads.release(w.client)
		w.holds = false
	}
}

// downloads counts the exports being sent, in all and by client. Each
// holds buffers while it is sent, so the server sends at most max at
// once; and a client may have a quarter of them, so that one that reads
// slowly, or downloads many ranges at once, cannot keep every other
// partner's download waiting.
type downloads struct {
	max, perClient int

	mu       sync.Mutex
	sending  int
	byClient map[string]int
}

func newDownloads(limit int) *downloads {
	return &downloads{max: limit, perClient: (limit + 3) / 4, byClient: make(map[string]int)}
}

// take counts a download of client, or says why it is not to be sent now.
func (d *downloads) take(client string) (why string, ok bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	switch {
	case d.byClient[client] >= d.perClient:
		return fmt.Sprintf("client %q is already downloading as many exports as a client may at once (%d)", client, d.perClient), false
	case d.sending >= d.max:
		return fmt.Sprintf("this server is sending as many downloads as it sends at once (%d)", d.max), false
	}
	d.sending++
	d.byClient[client]++
	return "", true
}

func (d *downloads) release(client string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.sending--
	if d.byClient[client]--; d.byClient[client] == 0 {
		delete(d.byClient, client)
	}
}

func (w *exportWriter) Write(p []byte) (int, error) {
	if w.problem {
		return len(p), nil
	}
	// Not every connection has deadlines; then the server's own limits
	// apply.
	_ = w.rc.SetWriteDeadline(time.Now().Add(exportStall))
	return w.ResponseWriter.Write(p)
}

// setEncodedLength sets the Content-Length of a 200 or of a single range
// of a compressed body of size bytes.
func setEncodedLength(h http.Header, status int, size int64) {
	switch status {
	case http.StatusOK:
		h.Set("Content-Length", strconv.FormatInt(size, 10))
	case http.StatusPartialContent:
		var first, last, total int64
		if _, err := fmt.Sscanf(h.Get("Content-Range"), "bytes %d-%d/%d", &first, &last, &total); err == nil {
			h.Set("Content-Length", strconv.FormatInt(last-first+1, 10))
		}
	}
}

// exportWrite is the size of the writes of a download: io.Copy, which
// ServeContent sends the body through, would write 32 KiB at a time, and
// each write is a send on the connection, whose cost in the kernel falls
// with its size (docs/BENCHMARKS.md, "Export").
const exportWrite = 256 << 10

// ReadFrom sends r in writes of exportWrite bytes. After a problem it
// reads nothing: the compressed body would be compressed to be dropped.
func (w *exportWriter) ReadFrom(r io.Reader) (int64, error) {
	if w.problem {
		return 0, nil
	}
	return io.CopyBuffer(writeOnly{w}, r, make([]byte, exportWrite))
}

// writeOnly hides every method but Write, so that io.CopyBuffer uses its
// buffer rather than call ReadFrom again.
type writeOnly struct{ io.Writer }

func (w *exportWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
