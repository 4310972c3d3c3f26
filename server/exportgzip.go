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
	"sync"
	"sync/atomic"

	"github.com/catalogd/catalogd/catalog"
	"github.com/catalogd/catalogd/catalog/store"
	"github.com/klauspost/compress/flate"
)

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
func (s *Server) exportGzip(db *store.DB, zone string) *gzipSlot {
	return &s.state(db).exportGzips.slots[catalog.ZoneIndex(zone)+1]
}

// known returns the layout, or nil while it is not known.
func (g *gzipSlot) known() *gzipLayout { return g.layout.Load() }

// measure returns the layout, compressing the export to learn it unless
// it is known.
func (g *gzipSlot) measure(export *store.Export) (*gzipLayout, error) {
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
	if g.err == nil {
		// The Once was spent by a panic, which route.serve answered, and
		// measured nothing: a fault on the file's map is an error of the
		// export's reads, but a bug would panic.
		return nil, errors.New("export: the compressed export could not be measured; the error was logged")
	}
	return nil, g.err
}

// measureGzip compresses the export, counting the bytes of each chunk.
func measureGzip(export *store.Export) (*gzipLayout, error) {
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
	if inm := listHeader(r.Header, "If-None-Match"); inm != "" && etagListHas(inm, gzipTag(plainTag), false) {
		out.WriteHeader(http.StatusNotModified)
		return
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
	off, err := store.SeekOffset(g.off, g.layout.size, offset, whence)
	g.off = off
	return off, err
}
