package server

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/catalogd/catalogd/catalog"
	"github.com/catalogd/catalogd/server/op"
	"github.com/julienschmidt/httprouter"
	"github.com/klauspost/compress/flate"
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
	prepareConditions(r.Header, valid.tag(), tag, size)
	http.ServeContent(out, r, "", time.Time{}, body)
}

// prepareConditions readies the conditional and range header fields of a
// request for the representation of size bytes tagged tag (plainTag
// untouched, else its gzip variant) for http.ServeContent, which would
// otherwise answer:
//   - an If-None-Match naming the other representation's tag with a 200,
//     where the API's other answers take either tag (docs/CONTRACT.md,
//     Caching); and only its first line, where a list may be split across
//     lines;
//   - several ranges with multipart/byteranges, the compressed parts
//     under a Content-Encoding that is not the multipart body's, each range
//     compressing its chunk again: a request of many small ranges would
//     cost seconds of CPU. A download resumes with one range, so several
//     get the whole representation, as RFC 9110 section 14.2 allows;
//   - a Range it cannot parse, or of another unit, with a 416, where
//     section 14.2 has it ignored: the whole representation;
//   - "bytes=-0" with a 206 of no bytes, where it is unsatisfiable
//     (section 14.1.3): a 416, through a range that starts at the end.
func prepareConditions(h http.Header, plainTag, tag string, size int64) {
	if inm := ifNoneMatch(h); inm != "" {
		if _, ok := etagListMatch(inm, plainTag); ok {
			inm = tag
		}
		h["If-None-Match"] = []string{inm}
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
	detail := "the request's preconditions do not hold for the current export"
	if status == http.StatusRequestedRangeNotSatisfiable {
		detail = "the range is past the end of the export, whose length Content-Range gives; download it again from the start"
	}
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

// The compressed export is one gzip member whose deflate stream is made of
// chunks compressed independently: each chunk of exportChunk bytes of the
// plain export is compressed by a fresh compressor and ends with a flush,
// the last with the final block. Its bytes depend only on the plain export,
// so they are the same on every request and every replica of a version,
// which a strong ETag and a resumed download need; and a range is served by
// compressing from the chunk it starts in, not from the start. The sizes of
// the chunks, with the trailer's checksum, are learnt once per catalogue
// and zone: by the first download, which sends the chunks as they come, or
// by compressing the whole export first for a range that comes before any
// download.
const (
	exportChunk = 512 << 10
	exportLevel = flate.BestSpeed
)

// gzipHeader is a gzip member header without a name or time, made by an
// unknown OS (RFC 1952): fixed, so that the bytes depend on the content
// alone.
var gzipHeader = []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff}

// gzipLayout is where each chunk of a compressed export lies.
type gzipLayout struct {
	ends  []int64 // the end of each chunk in the compressed stream
	crc   uint32  // of the plain export
	plain int64   // its size
	size  int64   // of the compressed stream
}

// exportGzips holds the layouts of a catalogue's compressed exports, by
// zone index plus one (0 for every zone).
type exportGzips struct {
	slots [4]gzipSlot
}

// gzipSlot is the layout of one compressed export, once known: learnt by
// the first download that sent the whole export (streamGzipExport), or
// measured for a request that cannot go without it (a range).
type gzipSlot struct {
	layout      atomic.Pointer[gzipLayout]
	measureOnce sync.Once
	err         error
}

// exportGzip returns the slot of db's compressed export of zone.
func (s *Server) exportGzip(db *catalog.DB, zone string) *gzipSlot {
	return &s.state(db).exportGzips.slots[catalog.ZoneIndex(zone)+1]
}

// known returns the layout, or nil while it is not known.
func (g *gzipSlot) known() *gzipLayout { return g.layout.Load() }

// measure returns the layout, compressing the export to learn it unless
// it is known.
func (g *gzipSlot) measure(export *catalog.Export) (*gzipLayout, error) {
	g.measureOnce.Do(func() {
		if g.known() != nil {
			return
		}
		l, err := measureGzip(export)
		if err != nil {
			g.err = err
			return
		}
		g.layout.CompareAndSwap(nil, l)
	})
	if l := g.known(); l != nil {
		return l, nil
	}
	return nil, g.err
}

// measureGzip compresses the export, counting the bytes of each chunk.
func measureGzip(export *catalog.Export) (*gzipLayout, error) {
	plain, err := export.Open()
	if err != nil {
		return nil, err
	}
	defer plain.Close()
	stream := &gzipStream{plain: plain, size: export.Size()}
	if _, err := io.Copy(io.Discard, stream); err != nil {
		return nil, err
	}
	return &stream.layout, nil
}

// streamGzipExport answers a GET of the compressed export whose layout is
// not known yet: the whole export, compressed as it is sent, with no
// length and no ranges, so that its first byte goes at once at any size
// (a full compression of ten million cards takes seconds). Its bytes are
// those of every later download, which the layout it learns serves with a
// length and ranges. plainTag is the plain representation's ETag.
func streamGzipExport(out *exportWriter, r *http.Request, slot *gzipSlot, plain io.ReadSeeker, size int64, plainTag string) {
	if inm := ifNoneMatch(r.Header); inm != "" {
		if _, ok := etagListMatch(inm, plainTag); ok {
			out.WriteHeader(http.StatusNotModified)
			return
		}
		if _, ok := etagListMatch(inm, gzipTag(plainTag)); ok {
			out.WriteHeader(http.StatusNotModified)
			return
		}
	}
	out.WriteHeader(http.StatusOK)
	if out.problem {
		return
	}
	stream := &gzipStream{plain: plain, size: size}
	if _, err := out.ReadFrom(stream); err == nil && stream.done {
		slot.layout.CompareAndSwap(nil, &stream.layout)
	}
}

// streamable reports whether r may be answered with the whole compressed
// export as it is made: a GET with no range and no precondition but
// If-None-Match.
func streamable(r *http.Request) bool {
	h := r.Header
	return r.Method == http.MethodGet && len(h["Range"]) == 0 && len(h["If-Match"]) == 0 && len(h["If-Unmodified-Since"]) == 0
}

// gzipStream reads the compressed export from its start, learning its
// layout.
type gzipStream struct {
	plain  io.ReadSeeker
	size   int64
	c      *chunkCompressor
	next   int64  // the chunk to compress next
	buf    []byte // what is left to read of the part made last
	layout gzipLayout
	done   bool // the trailer is made: the layout is whole

	trailer [8]byte
}

func (g *gzipStream) Read(p []byte) (int, error) {
	for len(g.buf) == 0 {
		switch {
		case g.c == nil:
			g.c = newChunkCompressor()
			g.layout.plain, g.layout.size = g.size, int64(len(gzipHeader))
			g.buf = gzipHeader
		case g.next*exportChunk < g.size:
			chunk, err := g.c.compress(g.plain, g.size, g.next)
			if err != nil {
				return 0, err
			}
			g.layout.crc = crc32.Update(g.layout.crc, crc32.IEEETable, g.c.plain)
			g.layout.size += int64(len(chunk))
			g.layout.ends = append(g.layout.ends, g.layout.size)
			g.next++
			g.buf = chunk
		case !g.done:
			binary.LittleEndian.PutUint32(g.trailer[:4], g.layout.crc)
			binary.LittleEndian.PutUint32(g.trailer[4:], uint32(g.size))
			g.layout.size += 8
			g.done = true
			g.buf = g.trailer[:]
		default:
			return 0, io.EOF
		}
	}
	n := copy(p, g.buf)
	g.buf = g.buf[n:]
	return n, nil
}

// chunkCompressor compresses chunks of a plain export, with buffers reused
// from one chunk to the next.
type chunkCompressor struct {
	zw    *flate.Writer
	plain []byte // the chunk last compressed
	out   bytes.Buffer
}

func newChunkCompressor() *chunkCompressor {
	zw, _ := flate.NewWriter(nil, exportLevel) // a valid level has no error
	return &chunkCompressor{zw: zw, plain: make([]byte, 0, exportChunk)}
}

// compress returns chunk i of the compressed stream of plain, whose size is
// size. The result is valid until the next call.
func (c *chunkCompressor) compress(plain io.ReadSeeker, size, i int64) ([]byte, error) {
	start := i * exportChunk
	n := min(exportChunk, size-start)
	if _, err := plain.Seek(start, io.SeekStart); err != nil {
		return nil, err
	}
	c.plain = c.plain[:n]
	if _, err := io.ReadFull(plain, c.plain); err != nil {
		return nil, fmt.Errorf("export: read chunk %d: %w", i, err)
	}
	c.out.Reset()
	c.zw.Reset(&c.out)
	c.zw.Write(c.plain) // a bytes.Buffer does not fail
	if start+n == size {
		c.zw.Close()
	} else {
		c.zw.Flush()
	}
	return c.out.Bytes(), nil
}

// gzipExportReader reads the compressed export; it is an io.ReadSeeker.
type gzipExportReader struct {
	plain  io.ReadSeeker
	layout *gzipLayout
	off    int64

	c       *chunkCompressor
	chunk   []byte // the compressed chunk loaded, which starts at chunkAt
	chunkAt int64
	trailer [8]byte
}

func (g *gzipExportReader) Read(p []byte) (int, error) {
	l := g.layout
	if g.off >= l.size {
		return 0, io.EOF
	}
	n := 0
	for n < len(p) && g.off < l.size {
		var src []byte
		switch {
		case g.off < int64(len(gzipHeader)):
			src = gzipHeader[g.off:]
		case g.off >= l.size-8:
			binary.LittleEndian.PutUint32(g.trailer[:4], l.crc)
			binary.LittleEndian.PutUint32(g.trailer[4:], uint32(l.plain))
			src = g.trailer[g.off-(l.size-8):]
		default:
			chunk, err := g.load()
			if err != nil {
				return n, err
			}
			src = chunk
		}
		m := copy(p[n:], src)
		n += m
		g.off += int64(m)
	}
	return n, nil
}

// load returns the rest of the compressed chunk that holds g.off,
// compressing it unless it is loaded.
func (g *gzipExportReader) load() ([]byte, error) {
	if g.chunk != nil && g.off >= g.chunkAt && g.off < g.chunkAt+int64(len(g.chunk)) {
		return g.chunk[g.off-g.chunkAt:], nil
	}
	l := g.layout
	i := sort.Search(len(l.ends), func(i int) bool { return l.ends[i] > g.off })
	if g.c == nil {
		g.c = newChunkCompressor()
	}
	chunk, err := g.c.compress(g.plain, l.plain, int64(i))
	if err != nil {
		return nil, err
	}
	g.chunkAt = int64(len(gzipHeader))
	if i > 0 {
		g.chunkAt = l.ends[i-1]
	}
	if g.chunkAt+int64(len(chunk)) != l.ends[i] {
		return nil, errors.New("export: a compressed chunk differs from its measure")
	}
	g.chunk = chunk
	return g.chunk[g.off-g.chunkAt:], nil
}

func (g *gzipExportReader) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		offset += g.off
	case io.SeekEnd:
		offset += g.layout.size
	default:
		return g.off, fmt.Errorf("export: seek: whence %d", whence)
	}
	if offset < 0 {
		return g.off, fmt.Errorf("export: seek to %d, before the start", offset)
	}
	g.off = offset
	return offset, nil
}
