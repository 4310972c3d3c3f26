package server

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/catalogd/catalogd/catalog"
	"github.com/catalogd/catalogd/catalog/store"
	"github.com/catalogd/catalogd/importer"
)

var (
	realOnce sync.Once
	realPath string
	realErr  error
)

// realCatalogue imports testdata/catalogue-real.json.gz, the whole real
// catalogue, with the shipped name groups (data/names.json), once for the
// package: its compressed export spans many chunks.
func realCatalogue(t testing.TB) string {
	t.Helper()
	db := sampleCatalogue(t) // makes sampleDir, removed by TestMain
	realOnce.Do(func() {
		realPath = filepath.Join(filepath.Dir(db), "real.db")
		_, realErr = importer.Import(context.Background(), importer.Config{DB: realPath, Inputs: []string{"../testdata/catalogue-real.json.gz", "../data/names.json"}})
	})
	if realErr != nil {
		t.Fatalf("real catalogue: %v", realErr)
	}
	return realPath
}

// raw sends a GET with the token and the headers, and returns the answer
// as sent: a compressed body stays compressed.
func (f *fixture) raw(target string, header ...string) *response {
	f.t.Helper()
	req, err := http.NewRequest(http.MethodGet, f.base+target, nil)
	if err != nil {
		f.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+f.token)
	req.Header.Set("Accept-Encoding", "identity")
	given := map[string]bool{}
	for i := 0; i+1 < len(header); i += 2 {
		// A field given twice is sent on two lines.
		if given[header[i]] {
			req.Header.Add(header[i], header[i+1])
		} else {
			req.Header.Set(header[i], header[i+1])
		}
		given[header[i]] = true
	}
	resp, err := f.http.Client().Do(req)
	if err != nil {
		f.t.Fatalf("GET %s: %v", target, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		f.t.Fatalf("GET %s: read body: %v", target, err)
	}
	return &response{status: resp.StatusCode, header: resp.Header, body: body}
}

// interrupted starts a download and drops the connection after n bytes of
// the body, as a network failure would; it returns the bytes received and
// the response's ETag.
func (f *fixture) interrupted(target string, n int, header ...string) ([]byte, string) {
	f.t.Helper()
	req, err := http.NewRequest(http.MethodGet, f.base+target, nil)
	if err != nil {
		f.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+f.token)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	// A client of its own, so that the dropped connection is not reused.
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	defer client.CloseIdleConnections()
	resp, err := client.Do(req)
	if err != nil {
		f.t.Fatalf("GET %s: %v", target, err)
	}
	if resp.StatusCode != http.StatusOK {
		f.t.Fatalf("GET %s: status %d", target, resp.StatusCode)
	}
	got := make([]byte, n)
	if _, err := io.ReadFull(resp.Body, got); err != nil {
		f.t.Fatalf("GET %s: read %d bytes: %v", target, n, err)
	}
	resp.Body.Close() // before the end: the transport drops the connection
	return got, resp.Header.Get("ETag")
}

// gunzipOne decompresses one gzip member, the whole body: a second
// member would be left unread and fail the comparison.
func gunzipOne(t testing.TB, b []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("not gzip: %v", err)
	}
	zr.Multistream(false)
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("gzip does not decompress: %v", err)
	}
	return out
}

// importBytes imports a downloaded export into a new catalogue file.
func importBytes(t testing.TB, snapshot []byte, name string) string {
	t.Helper()
	dir := t.TempDir()
	in := filepath.Join(dir, name)
	if err := os.WriteFile(in, snapshot, 0o600); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "catalog.db")
	if _, err := importer.Import(context.Background(), importer.Config{DB: db, Inputs: []string{in}}); err != nil {
		t.Fatalf("import the export: %v", err)
	}
	return db
}

// exportedIDs reads the ids of the sets and cards of an export.
func exportedIDs(t testing.TB, export []byte) (sets, cards []string) {
	t.Helper()
	var snap struct {
		Sets  []struct{ ID string } `json:"sets"`
		Cards []struct{ ID string } `json:"cards"`
	}
	if err := json.Unmarshal(export, &snap); err != nil {
		t.Fatalf("export is not a snapshot: %v", err)
	}
	for _, s := range snap.Sets {
		sets = append(sets, s.ID)
	}
	for _, c := range snap.Cards {
		cards = append(cards, c.ID)
	}
	return sets, cards
}

// sampleRequests is a sample of the requests of every endpoint over the
// sets and cards of an export: every 29th set's first pages, every 401st
// card, and searches, with zone when not "".
func sampleRequests(sets, cards []string, zone string) []string {
	var reqs []string
	for i := 0; i < len(sets); i += 29 {
		p := "/catalog/sets/" + url.PathEscape(sets[i]) + "/cards"
		reqs = append(reqs, p, p+"?page=2&pageSize=7", p+"?pageSize=200")
	}
	for i := 0; i < len(cards); i += 401 {
		reqs = append(reqs, "/catalog/cards/"+url.PathEscape(cards[i]))
	}
	z := ""
	if zone != "" {
		z = "&zone=" + zone
	}
	// The last two find cards by their name groups alone (妙蛙 is
	// Bulbasaur's Chinese name) and by romanized forms (fushigi).
	for _, q := range []string{"pikachu", "ピカチュウ", "charizard 4", "皮卡丘", "妙蛙", "fushigi"} {
		reqs = append(reqs, "/catalog/search?limit=100&q="+url.QueryEscape(q)+z)
	}
	return reqs
}

// sameAnswers fails unless a and b answer every request with the same
// status and bytes. (The other tests check answers against the OpenAPI
// document; here only the bytes matter.)
func sameAnswers(t *testing.T, a, b *fixture, reqs []string) {
	t.Helper()
	for _, target := range reqs {
		ra, rb := a.raw(target), b.raw(target)
		if ra.status != rb.status || !bytes.Equal(ra.body, rb.body) {
			t.Errorf("GET %s: the original answers %d %.200s\nthe copy answers %d %.200s", target, ra.status, ra.body, rb.status, rb.body)
		}
	}
}

func TestExportRoundTrip(t *testing.T) {
	orig := newFixtureAt(t, realCatalogue(t), nil)

	plain := orig.raw("/catalog/export")
	plain.wantStatus(t, http.StatusOK)
	if ct := plain.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
	if g := plain.header.Get(GenerationHeader); g != orig.live.Current().Generation() {
		t.Errorf("Catalog-Generation %q, want %q", g, orig.live.Current().Generation())
	}
	compressed := orig.raw("/catalog/export", "Accept-Encoding", "gzip")
	compressed.wantStatus(t, http.StatusOK)
	if ce := compressed.header.Get("Content-Encoding"); ce != "gzip" {
		t.Fatalf("Content-Encoding %q, want gzip", ce)
	}
	if len(compressed.body) >= len(plain.body)/3 {
		t.Errorf("compressed export is %d bytes of %d", len(compressed.body), len(plain.body))
	}
	if !bytes.Equal(gunzipOne(t, compressed.body), plain.body) {
		t.Fatal("the compressed export does not decompress to the plain one")
	}

	sets, cards := exportedIDs(t, plain.body)
	if len(sets) != 564 || len(cards) != 43811 {
		t.Fatalf("export holds %d sets and %d cards, want 564 and 43811", len(sets), len(cards))
	}
	// The compressed download decompresses to the plain one, byte for
	// byte, so one import of it stands for both: it is the compressed one,
	// which the import must also recognise.
	reqs := append(sampleRequests(sets, cards, ""), "/catalog/sets", "/catalog/sets/SV8/cards", "/catalog/export?zone=jp")
	cp := newFixtureAt(t, importBytes(t, compressed.body, "export.json.gz"), nil)
	sameAnswers(t, orig, cp, reqs)
	if again := cp.raw("/catalog/export"); !bytes.Equal(again.body, plain.body) {
		t.Error("the copy's export differs from the original's")
	}
	if again := cp.raw("/catalog/export", "Accept-Encoding", "gzip"); !bytes.Equal(again.body, compressed.body) {
		t.Error("the copy's compressed export differs from the original's")
	}

	t.Run("zone", func(t *testing.T) {
		chn := orig.raw("/catalog/export?zone=chn", "Accept-Encoding", "gzip")
		chn.wantStatus(t, http.StatusOK)
		zsets, zcards := exportedIDs(t, gunzipOne(t, chn.body))
		if len(zsets) != 146 || len(zcards) != 7484 {
			t.Fatalf("chn export holds %d sets and %d cards, want 146 and 7484", len(zsets), len(zcards))
		}
		cp := newFixtureAt(t, importBytes(t, chn.body, "chn.json.gz"), nil)
		sameAnswers(t, orig, cp, append(sampleRequests(zsets, zcards, "chn"), "/catalog/export?zone=chn"))
		// The copy holds the chn zone alone: its list of sets is the
		// original's chn sets.
		var all, copied struct{ Data []catalog.Set }
		orig.get("/catalog/sets").json(t, &all)
		cp.get("/catalog/sets").json(t, &copied)
		var want []catalog.Set
		for _, s := range all.Data {
			if s.Zone == "chn" {
				want = append(want, s)
			}
		}
		if fmt.Sprint(want) != fmt.Sprint(copied.Data) {
			t.Errorf("the chn copy lists %d sets, want the original's %d chn sets in order", len(copied.Data), len(want))
		}
		cp.get("/catalog/cards/intl-base1-4").wantStatus(t, http.StatusNotFound)
	})
}

func TestExportResume(t *testing.T) {
	f := newFixtureAt(t, realCatalogue(t), nil)
	for _, enc := range []string{"identity", "gzip"} {
		t.Run(enc, func(t *testing.T) {
			whole := f.raw("/catalog/export", "Accept-Encoding", enc)
			whole.wantStatus(t, http.StatusOK)
			if enc == "gzip" {
				// The first compressed download of a catalogue is sent as it
				// is compressed, without a length; the next ones, the same
				// bytes, with it and with ranges.
				if cl := whole.header.Get("Content-Length"); cl != "" {
					t.Errorf("the first compressed download has Content-Length %s, want it sent as compressed", cl)
				}
				first := whole
				whole = f.raw("/catalog/export", "Accept-Encoding", enc)
				whole.wantStatus(t, http.StatusOK)
				if !bytes.Equal(first.body, whole.body) || first.header.Get("ETag") != whole.header.Get("ETag") {
					t.Fatal("the first compressed download differs from the next")
				}
			}
			tag := whole.header.Get("ETag")
			if ar := whole.header.Get("Accept-Ranges"); ar != "bytes" {
				t.Errorf("Accept-Ranges %q", ar)
			}
			if cl := whole.header.Get("Content-Length"); cl != strconv.Itoa(len(whole.body)) {
				t.Errorf("Content-Length %s for %d bytes", cl, len(whole.body))
			}
			size := len(whole.body)
			// Cut in the first compressed chunk, past several, and one
			// byte before the end.
			for _, cut := range []int{1000, size/2 + 17, size - 1} {
				got, firstTag := f.interrupted("/catalog/export", cut, "Accept-Encoding", enc)
				if firstTag != tag {
					t.Fatalf("ETag %s, then %s", tag, firstTag)
				}
				rest := f.raw("/catalog/export", "Accept-Encoding", enc, "Range", fmt.Sprintf("bytes=%d-", cut), "If-Range", tag)
				rest.wantStatus(t, http.StatusPartialContent)
				if cr, want := rest.header.Get("Content-Range"), fmt.Sprintf("bytes %d-%d/%d", cut, size-1, size); cr != want {
					t.Errorf("Content-Range %q, want %q", cr, want)
				}
				if !bytes.Equal(append(got, rest.body...), whole.body) {
					t.Errorf("cut at %d: the resumed download differs from the whole one", cut)
				}
			}
			// A range in the middle, as a parallel downloader asks.
			mid := f.raw("/catalog/export", "Accept-Encoding", enc, "Range", fmt.Sprintf("bytes=%d-%d", size/3, size/3+99999))
			mid.wantStatus(t, http.StatusPartialContent)
			if !bytes.Equal(mid.body, whole.body[size/3:size/3+100000]) {
				t.Error("a middle range differs from those bytes of the whole")
			}

			bad := f.raw("/catalog/export", "Accept-Encoding", enc, "Range", fmt.Sprintf("bytes=%d-", size))
			bad.wantStatus(t, http.StatusRequestedRangeNotSatisfiable)
			if cr, want := bad.header.Get("Content-Range"), fmt.Sprintf("bytes */%d", size); cr != want {
				t.Errorf("416 Content-Range %q, want %q", cr, want)
			}
			if ct := bad.header.Get("Content-Type"); ct != "application/problem+json" {
				t.Errorf("416 Content-Type %q", ct)
			}

			notModified := f.raw("/catalog/export", "Accept-Encoding", enc, "If-None-Match", tag)
			notModified.wantStatus(t, http.StatusNotModified)

			// A stale If-Range gets the whole representation.
			stale := f.raw("/catalog/export", "Accept-Encoding", enc, "Range", "bytes=1000-", "If-Range", `"an-older-generation"`)
			stale.wantStatus(t, http.StatusOK)
			if !bytes.Equal(stale.body, whole.body) {
				t.Error("a stale If-Range did not get the whole export")
			}
		})
	}
}

// TestExportRangesAndTags sends the range and conditional requests that
// http.ServeContent alone would answer unlike the rest of the API or
// RFC 9110: several ranges, ranges it cannot parse, an empty suffix, the
// other representation's tag, a list of tags on two lines.
func TestExportRangesAndTags(t *testing.T) {
	f := newFixture(t)
	for _, enc := range []string{"identity", "gzip"} {
		t.Run(enc, func(t *testing.T) {
			whole := f.raw("/catalog/export", "Accept-Encoding", enc)
			whole.wantStatus(t, http.StatusOK)
			size := len(whole.body)
			for _, r := range []string{"bytes=0-1,5-6", "bytes=0-1, 0-1", "bytes=99999999999999999999-5", "bytes=,", "items=0-5", "bytes=abc", "bytes=10-5", "bytes=-", "bytes=", "bytes=1-2-3", "bytes=+1-2", "bytes 0-5"} {
				got := f.raw("/catalog/export", "Accept-Encoding", enc, "Range", r)
				got.wantStatus(t, http.StatusOK)
				if !bytes.Equal(got.body, whole.body) || got.header.Get("Content-Range") != "" {
					t.Errorf("Range %q: %d bytes, Content-Range %q; want the whole export", r, len(got.body), got.header.Get("Content-Range"))
				}
			}
			for r, want := range map[string]string{
				"Bytes=5-9":                    fmt.Sprintf("bytes 5-9/%d", size),
				"bytes= 5 - 9":                 fmt.Sprintf("bytes 5-9/%d", size),
				"bytes=0-99999999999999999999": fmt.Sprintf("bytes 0-%d/%d", size-1, size),
				"bytes=-99999999999999999999":  fmt.Sprintf("bytes 0-%d/%d", size-1, size),
				"bytes=-10":                    fmt.Sprintf("bytes %d-%d/%d", size-10, size-1, size),
				"bytes=5-9,":                   fmt.Sprintf("bytes 5-9/%d", size),
				"bytes=, 5-9":                  fmt.Sprintf("bytes 5-9/%d", size),
			} {
				got := f.raw("/catalog/export", "Accept-Encoding", enc, "Range", r)
				got.wantStatus(t, http.StatusPartialContent)
				var first, last int
				if cr := got.header.Get("Content-Range"); cr != want {
					t.Errorf("Range %q: Content-Range %q, want %q", r, cr, want)
				} else if _, err := fmt.Sscanf(cr, "bytes %d-%d/", &first, &last); err != nil || !bytes.Equal(got.body, whole.body[first:last+1]) {
					t.Errorf("Range %q: the body is not those bytes of the whole (%v)", r, err)
				}
			}
			for _, r := range []string{"bytes=-0", "bytes=99999999999999999999-", fmt.Sprintf("bytes=%d-", size)} {
				got := f.raw("/catalog/export", "Accept-Encoding", enc, "Range", r)
				got.wantStatus(t, http.StatusRequestedRangeNotSatisfiable)
				if cr, want := got.header.Get("Content-Range"), fmt.Sprintf("bytes */%d", size); cr != want {
					t.Errorf("Range %q: 416 Content-Range %q, want %q", r, cr, want)
				}
				if ce := got.header.Get("Content-Encoding"); ce != "" {
					t.Errorf("Range %q: 416 with Content-Encoding %q, a plain problem", r, ce)
				}
			}

			tag := whole.header.Get("ETag")
			other := gzipTag(tag) // the other representation's tag
			if plain := strings.TrimSuffix(tag, `-gzip"`); plain != tag {
				other = plain + `"`
			}
			for _, inm := range [][]string{{tag}, {`W/` + tag}, {`"other"`, tag}, {other, tag}} {
				header := []string{"Accept-Encoding", enc}
				for _, v := range inm {
					header = append(header, "If-None-Match", v)
				}
				got := f.raw("/catalog/export", header...)
				got.wantStatus(t, http.StatusNotModified)
				if got.header.Get("ETag") != tag {
					t.Errorf("If-None-Match %q: 304 with ETag %q, want %q", inm, got.header.Get("ETag"), tag)
				}
			}
			// Only the representation's own tag revalidates it (RFC 9110
			// section 13.1.2).
			for _, inm := range []string{`"other"`, other} {
				if got := f.raw("/catalog/export", "Accept-Encoding", enc, "If-None-Match", inm); got.status != http.StatusOK || got.header.Get("ETag") != tag {
					t.Errorf("If-None-Match %s: %d, ETag %q; want 200 of %s", inm, got.status, got.header.Get("ETag"), tag)
				}
			}
			// If-Match compares strongly, a list split across lines too.
			for _, im := range [][]string{{tag}, {"*"}, {`"other"`, tag}} {
				header := []string{"Accept-Encoding", enc}
				for _, v := range im {
					header = append(header, "If-Match", v)
				}
				if got := f.raw("/catalog/export", header...); got.status != http.StatusOK {
					t.Errorf("If-Match %q: %d, want 200", im, got.status)
				}
			}
			for _, im := range []string{other, "W/" + tag} {
				got := f.raw("/catalog/export", "Accept-Encoding", enc, "If-Match", im)
				got.wantStatus(t, http.StatusPreconditionFailed)
				if got.header.Get("Content-Type") != "application/problem+json" || got.header.Get("Content-Encoding") != "" {
					t.Errorf("If-Match %s: 412 of %q, Content-Encoding %q; want a plain problem", im, got.header.Get("Content-Type"), got.header.Get("Content-Encoding"))
				}
			}
		})
	}
}

// TestExportResumeAcrossImports swaps a new catalogue in between the
// interrupted download and its resumption: If-Range then sends the whole
// new export.
func TestExportResumeAcrossImports(t *testing.T) {
	f := newFixtureAt(t, realCatalogue(t), nil)
	for _, enc := range []string{"identity", "gzip"} {
		got, tag := f.interrupted("/catalog/export", 5000, "Accept-Encoding", enc)
		if len(got) != 5000 {
			t.Fatal("short read")
		}
		next, err := store.Open(sampleCatalogue(t))
		if err != nil {
			t.Fatal(err)
		}
		old := f.live.Current()
		f.live.Swap(next)
		rest := f.raw("/catalog/export", "Accept-Encoding", enc, "Range", "bytes=5000-", "If-Range", tag)
		rest.wantStatus(t, http.StatusOK)
		fresh := f.raw("/catalog/export", "Accept-Encoding", enc)
		if !bytes.Equal(rest.body, fresh.body) || rest.header.Get("ETag") != fresh.header.Get("ETag") || rest.header.Get("ETag") == tag {
			t.Errorf("%s: after a new import, If-Range got %d bytes tagged %s, want the whole new export tagged %s", enc, len(rest.body), rest.header.Get("ETag"), fresh.header.Get("ETag"))
		}
		if g := rest.header.Get(GenerationHeader); g != next.Generation() {
			t.Errorf("Catalog-Generation %q, want %q", g, next.Generation())
		}
		back, err := store.Open(old.Path())
		if err != nil {
			t.Fatal(err)
		}
		f.live.Swap(back)
	}
}

func TestExportParameters(t *testing.T) {
	f := newFixture(t)
	r := f.get("/catalog/export?zone=mars")
	r.wantStatus(t, http.StatusBadRequest)
	if !strings.Contains(string(r.body), `"parameter":"zone"`) {
		t.Errorf("400 does not name zone: %s", r.body)
	}
	for _, zone := range []string{"", "?zone=chn"} {
		f.get("/catalog/export"+zone).wantStatus(t, http.StatusOK) // checked against the OpenAPI document
		f.do(http.MethodGet, "/catalog/export"+zone, "Accept-Encoding", "gzip").wantStatus(t, http.StatusOK)
	}
	head := f.do(http.MethodHead, "/catalog/export")
	head.wantStatus(t, http.StatusOK)
	if len(head.body) != 0 || head.header.Get("Content-Length") == "" {
		t.Errorf("HEAD: %d bytes of body, Content-Length %q", len(head.body), head.header.Get("Content-Length"))
	}
	f.token = ""
	f.get("/catalog/export").wantStatus(t, http.StatusUnauthorized)
}

// TestExportDownloadsAtOnce holds as many downloads as the server sends at
// once, two clients' that read nothing: one more is a 503 with
// Retry-After, for a third client as for one of the two, which may have
// one download at once; HEAD, a 304 and the other routes are answered as
// before; once a held download ends, a new one is sent whole.
func TestExportDownloadsAtOnce(t *testing.T) {
	f := newFixtureAt(t, realCatalogue(t), func(c *Config) { c.MaxDownloads = 2 })
	whole := f.raw("/catalog/export")
	whole.wantStatus(t, http.StatusOK)
	tag := whole.header.Get("ETag")

	u, err := url.Parse(f.base)
	if err != nil {
		t.Fatal(err)
	}
	var held []net.Conn
	for _, token := range []string{f.token, clientToken(t, f, "partner-2")} {
		conn, err := net.Dial("tcp", u.Host)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		conn.(*net.TCPConn).SetReadBuffer(4096)
		// 14 MB, more than the sockets' buffers hold: the handler waits
		// to write, holding its slot, once the header is out.
		fmt.Fprintf(conn, "GET %s/catalog/export HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nAccept-Encoding: identity\r\n\r\n", u.Path, u.Host, token)
		status, err := bufio.NewReader(conn).ReadString('\n')
		if err != nil || !strings.Contains(status, " 200 ") {
			t.Fatalf("held download: %q, %v", status, err)
		}
		held = append(held, conn)
	}

	third := "Bearer " + clientToken(t, f, "partner-3")
	for _, enc := range []string{"identity", "gzip"} {
		busy := f.do(http.MethodGet, "/catalog/export", "Accept-Encoding", enc, "Authorization", third)
		busy.wantStatus(t, http.StatusServiceUnavailable)
		if ra := busy.header.Get("Retry-After"); ra != strconv.Itoa(downloadRetry) {
			t.Errorf("%s: Retry-After %q", enc, ra)
		}
		if ct, ce := busy.header.Get("Content-Type"), busy.header.Get("Content-Encoding"); ct != "application/problem+json" || ce != "" {
			t.Errorf("%s: Content-Type %q, Content-Encoding %q: want a plain problem", enc, ct, ce)
		}
		if g := busy.header.Get(GenerationHeader); g != "" {
			t.Errorf("%s: a refused download names generation %s", enc, g)
		}
		var p problem
		busy.json(t, &p)
		if p.Status != http.StatusServiceUnavailable || !strings.Contains(p.Detail, "(2)") {
			t.Errorf("%s: problem %+v", enc, p)
		}
	}
	// The first client has its one download already.
	busy := f.raw("/catalog/export", "Range", "bytes=100-")
	busy.wantStatus(t, http.StatusServiceUnavailable)
	if cr := busy.header.Get("Content-Range"); cr != "" {
		t.Errorf("a refused range has Content-Range %q", cr)
	}
	var p problem
	busy.json(t, &p)
	if !strings.Contains(p.Detail, `client "partner-1"`) || !strings.Contains(p.Detail, "(1)") {
		t.Errorf("the client's second download: problem %+v, want it to name the client and its limit", p)
	}
	if head := f.do(http.MethodHead, "/catalog/export"); head.status != http.StatusOK || head.header.Get("Content-Length") != strconv.Itoa(len(whole.body)) {
		t.Errorf("HEAD while the downloads are held: %d, Content-Length %q", head.status, head.header.Get("Content-Length"))
	}
	f.raw("/catalog/export", "If-None-Match", tag).wantStatus(t, http.StatusNotModified)
	f.get("/catalog/sets").wantStatus(t, http.StatusOK)

	// A client that goes away gives its slot back.
	held[0].Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		r := f.raw("/catalog/export")
		if r.status == http.StatusOK {
			if !bytes.Equal(r.body, whole.body) {
				t.Fatal("the download after a slot came free differs from the first")
			}
			break
		}
		if r.status != http.StatusServiceUnavailable || time.Now().After(deadline) {
			t.Fatalf("after a held download ended: %d %s", r.status, r.body)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// The first compressed download of a catalogue is sent as it is
// compressed, at once, without a length or ranges; its bytes are those of
// every later download, on this server or another, so a download cut short
// resumes with a range, and a range, a HEAD or an If-None-Match that comes
// first is answered as before.
func TestExportFirstDownloadStreams(t *testing.T) {
	path := realCatalogue(t)
	plain := newFixtureAt(t, path, nil).raw("/catalog/export")
	plain.wantStatus(t, http.StatusOK)
	gunzip := func(b []byte) []byte {
		t.Helper()
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		out, err := io.ReadAll(zr)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}

	f := newFixtureAt(t, path, nil)
	first := f.raw("/catalog/export", "Accept-Encoding", "gzip")
	first.wantStatus(t, http.StatusOK)
	if h := first.header; h.Get("Content-Encoding") != "gzip" || h.Get("Content-Length") != "" || h.Get("Accept-Ranges") != "" {
		t.Errorf("first download: Content-Encoding %q, Content-Length %q, Accept-Ranges %q; want gzip sent as it is compressed",
			h.Get("Content-Encoding"), h.Get("Content-Length"), h.Get("Accept-Ranges"))
	}
	if !bytes.Equal(gunzip(first.body), plain.body) {
		t.Fatal("the first compressed download is not the export")
	}
	tag := first.header.Get("ETag")
	next := f.raw("/catalog/export", "Accept-Encoding", "gzip")
	if next.header.Get("Content-Length") != strconv.Itoa(len(first.body)) || next.header.Get("ETag") != tag || !bytes.Equal(next.body, first.body) {
		t.Errorf("the next download: Content-Length %q, ETag %q; want %d bytes, the first's, tagged %s",
			next.header.Get("Content-Length"), next.header.Get("ETag"), len(first.body), tag)
	}

	// On another server, a download cut short resumes with a range.
	g := newFixtureAt(t, path, nil)
	got, cutTag := g.interrupted("/catalog/export", 5000, "Accept-Encoding", "gzip")
	rest := g.raw("/catalog/export", "Accept-Encoding", "gzip", "Range", "bytes=5000-", "If-Range", cutTag)
	rest.wantStatus(t, http.StatusPartialContent)
	if cutTag != tag || !bytes.Equal(append(got, rest.body...), first.body) {
		t.Errorf("a resumed download (ETag %s) differs from the first server's (%s)", cutTag, tag)
	}

	// A range first is served, the layout measured first; a GET naming
	// the tag first is a 304.
	h := newFixtureAt(t, path, nil)
	mid := h.raw("/catalog/export", "Accept-Encoding", "gzip", "Range", "bytes=100000-199999")
	mid.wantStatus(t, http.StatusPartialContent)
	if !bytes.Equal(mid.body, first.body[100000:200000]) {
		t.Error("a range first differs from those bytes of the first download")
	}
	i := newFixtureAt(t, path, nil)
	if r := i.raw("/catalog/export", "Accept-Encoding", "gzip", "If-None-Match", tag); r.status != http.StatusNotModified || r.header.Get("ETag") != tag {
		t.Errorf("If-None-Match %s first: %d, ETag %q; want 304 naming it", tag, r.status, r.header.Get("ETag"))
	}
	// The plain representation's tag does not revalidate the compressed
	// one (RFC 9110 section 13.1.2).
	if r := i.raw("/catalog/export", "Accept-Encoding", "gzip", "If-None-Match", plain.header.Get("ETag")); r.status != http.StatusOK || r.header.Get("ETag") != tag {
		t.Errorf("If-None-Match of the plain tag from a client that takes gzip: %d, ETag %q; want 200 of %s", r.status, r.header.Get("ETag"), tag)
	}
}
