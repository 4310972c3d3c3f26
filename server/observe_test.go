package server

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// logFixture is a fixture whose server logs JSON into a buffer.
func logFixture(t *testing.T) (*fixture, *syncBuffer) {
	var logs syncBuffer
	f := newFixtureWith(t, func(c *Config) {
		c.Logger = slog.New(slog.NewJSONHandler(&logs, nil))
		c.AccessLog = &logs
	})
	return f, &logs
}

// accessLines returns the access-log lines written so far.
func accessLines(t *testing.T, logs *syncBuffer) []map[string]any {
	t.Helper()
	var lines []map[string]any
	s := bufio.NewScanner(strings.NewReader(logs.String()))
	for s.Scan() {
		var line map[string]any
		if err := json.Unmarshal(s.Bytes(), &line); err != nil {
			t.Fatalf("log line is not JSON: %v\n%s", err, s.Text())
		}
		if line["msg"] == "request" {
			lines = append(lines, line)
		}
	}
	return lines
}

func TestAccessLogLine(t *testing.T) {
	f, logs := logFixture(t)
	r := f.do(http.MethodGet, "/catalog/cards/jp-SV1a-001", RequestIDHeader, "partner-req-42")
	r.wantStatus(t, http.StatusOK)
	if got := r.header.Get(RequestIDHeader); got != "partner-req-42" {
		t.Errorf("X-Request-Id %q, want the client's", got)
	}
	lines := accessLines(t, logs)
	if len(lines) != 1 {
		t.Fatalf("%d access-log lines, want 1:\n%s", len(lines), logs.String())
	}
	line := lines[0]
	want := map[string]any{
		"level": "INFO", "method": "GET", "route": "getCard", "path": testBasePath + "/catalog/cards/jp-SV1a-001",
		"status": float64(200), "bytes": float64(len(r.body)), "client_id": "partner-1", "request_id": "partner-req-42",
	}
	for k, v := range want {
		if line[k] != v {
			t.Errorf("access log %s = %v (%T), want %v", k, line[k], line[k], v)
		}
	}
	if d, ok := line["duration_ms"].(float64); !ok || d < 0 {
		t.Errorf("access log duration_ms = %v", line["duration_ms"])
	}
	for _, k := range []string{"time", "remote"} {
		if line[k] == nil {
			t.Errorf("access log has no %s", k)
		}
	}

	// A HEAD sends no body, whatever the handler wrote.
	for _, target := range []string{"/catalog/cards/jp-SV1a-001", "/catalog/search?q=pikachu", "/catalog/sets"} {
		f.do(http.MethodHead, target).wantStatus(t, http.StatusOK)
		lines := accessLines(t, logs)
		if last := lines[len(lines)-1]; last["method"] != "HEAD" || last["bytes"] != float64(0) {
			t.Errorf("HEAD %s: access log method %v, bytes %v; want HEAD, 0", target, last["method"], last["bytes"])
		}
	}
}

func TestAccessLogRoutesAndRequestIDs(t *testing.T) {
	f, logs := logFixture(t)
	ids := map[string]bool{}
	for _, c := range []struct {
		method, target, route string
		status                int
		header                []string
	}{
		{"GET", "/catalog/sets", "listSets", 200, nil},
		{"GET", "/catalog/sets/SV1a/cards?pageSize=5", "listSetCards", 200, nil},
		{"GET", "/catalog/search?q=pikachu", "search", 200, nil},
		{"GET", "/catalog/cards/nope", "getCard", 404, nil},
		{"GET", "/catalog/sets", "listSets", 401, []string{"Authorization", ""}},
		{"DELETE", "/catalog/sets", "methodNotAllowed", 405, nil},
		{"GET", "/nowhere", "notFound", 404, nil},
		// Ids a client could forge log lines with, or flood them with, are replaced.
		{"GET", "/catalog/sets", "listSets", 200, []string{RequestIDHeader, "a b"}},
		{"GET", "/catalog/sets", "listSets", 200, []string{RequestIDHeader, strings.Repeat("x", maxRequestIDLen+1)}},
	} {
		r := f.do(c.method, c.target, c.header...)
		if r.status != c.status {
			t.Fatalf("%s %s: status %d, want %d", c.method, c.target, r.status, c.status)
		}
		id := r.header.Get(RequestIDHeader)
		if id == "" || ids[id] || len(id) > maxRequestIDLen || !printableASCII(id) {
			t.Errorf("%s %s: request id %q is not a fresh id of our own", c.method, c.target, id)
		}
		ids[id] = true
		lines := accessLines(t, logs)
		last := lines[len(lines)-1]
		if last["route"] != c.route || last["status"] != float64(c.status) || last["request_id"] != id {
			t.Errorf("%s %s: logged route %v status %v id %v, want %s %d %s", c.method, c.target, last["route"], last["status"], last["request_id"], c.route, c.status, id)
		}
		if wantClient := c.status != 401 && c.route != "notFound" && c.route != "methodNotAllowed"; (last["client_id"] != "") != wantClient {
			t.Errorf("%s %s: client_id %q", c.method, c.target, last["client_id"])
		}
	}
}

// TestNoTokenInLogs sends tokens every way a client can, valid and not,
// and looks for them, and their signatures, in everything the server logged.
func TestNoTokenInLogs(t *testing.T) {
	f, logs := logFixture(t)
	forged := f.token[:strings.LastIndexByte(f.token, '.')] + ".c2lnbmF0dXJl"
	for _, tok := range []string{f.token, forged} {
		f.do(http.MethodGet, "/catalog/sets", "Authorization", "Bearer "+tok)
		f.do(http.MethodGet, "/catalog/sets?access_token="+tok, "Authorization", "")
		f.do(http.MethodGet, "/catalog/cards/jp-SV1a-001?access_token="+tok)
		f.do(http.MethodGet, "/catalog/search?q=pikachu", "Authorization", "Basic "+tok)
	}
	out := logs.String()
	if len(accessLines(t, logs)) != 8 {
		t.Fatalf("want 8 access-log lines:\n%s", out)
	}
	for _, tok := range []string{f.token, forged} {
		for _, part := range strings.Split(tok, ".") {
			if strings.Contains(out, part) {
				t.Fatalf("a token part %q appears in the log:\n%s", part, out)
			}
		}
	}
	if strings.Contains(out, "access_token") {
		t.Errorf("the query string was logged:\n%s", out)
	}
}

func TestMetricsSeries(t *testing.T) {
	reg := prometheus.NewRegistry()
	var metrics *Metrics
	f := newFixtureWith(t, func(c *Config) { metrics = recordMetrics(t, reg, c) })
	f.get("/catalog/cards/jp-SV1a-001").wantStatus(t, 200)
	f.get("/catalog/cards/jp-SV1a-001").wantStatus(t, 200)
	f.get("/catalog/cards/nope").wantStatus(t, 404)
	f.do(http.MethodGet, "/catalog/sets", "Authorization", "").wantStatus(t, 401)
	f.do(http.MethodGet, "/catalog/sets", "Authorization", "Bearer not.a.jwt").wantStatus(t, 401)
	f.do(http.MethodGet, "/catalog/sets", "Authorization", "Bearer not.a.jwt").wantStatus(t, 401)
	metrics.Reloaded(true)
	metrics.Reloaded(false)
	metrics.Reloaded(false)

	page := scrape(t, reg)
	info := f.live.Current().Info()
	want := []string{
		`catalogd_http_requests_total{route="getCard",status="200"} 2`,
		`catalogd_http_requests_total{route="getCard",status="404"} 1`,
		`catalogd_http_requests_total{route="listSets",status="401"} 3`,
		`catalogd_http_request_duration_seconds_count{route="getCard"} 3`,
		`catalogd_auth_failures_total{reason="missing"} 1`,
		`catalogd_auth_failures_total{reason="malformed"} 2`,
		`catalogd_catalog_reloads_total{result="success"} 1`,
		`catalogd_catalog_reloads_total{result="failure"} 2`,
		`catalogd_catalog_info{generation="` + info.Generation + `"} 1`,
	}
	for _, z := range info.Zones {
		want = append(want,
			`catalogd_catalog_sets{zone="`+z.Zone+`"} `+strconv.FormatInt(z.Sets, 10),
			`catalogd_catalog_cards{zone="`+z.Zone+`"} `+strconv.FormatInt(z.Cards, 10))
	}
	wantSeries(t, page, want...)
	for _, re := range []string{
		`(?m)^catalogd_http_request_duration_seconds_bucket\{route="getCard",le="0\.005"\} \d+$`,
		`(?m)^catalogd_catalog_imported_timestamp_seconds \d\.\d+e\+09$`,
		`(?m)^catalogd_catalog_age_seconds \d`,
	} {
		if !regexp.MustCompile(re).MatchString(page) {
			t.Errorf("metrics lack a line matching %s", re)
		}
	}
	if t.Failed() {
		t.Logf("metrics page:\n%s", page)
	}
}

// gzipGet asks for target accepting gzip, without the transport's
// transparent decompression, and returns the raw answer.
func gzipGet(t *testing.T, f *fixture, target string, header ...string) *response {
	t.Helper()
	return f.do(http.MethodGet, target, append([]string{"Accept-Encoding", "gzip"}, header...)...)
}

func gunzip(t *testing.T, b []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("body is not gzip: %v", err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("gzip body: %v", err)
	}
	return out
}

func TestGzipQValue(t *testing.T) {
	for _, c := range []struct {
		ae   string
		want float64
	}{
		{"gzip", 1},
		{"GZip", 1},
		{"gzip, deflate, br", 1},
		{"br;q=1.0, gzip;q=0.8, *;q=0.1", 0.8},
		{" deflate , gzip ; q=0.5 ", 0.5},
		{"gzip;level=1;q=0.2", 0.2},
		{"gzip;Q=0.3", 0.3},
		{"gzip;q=2", 1},
		{"gzip;q=0", 0},
		{"gzip;q=0.000", 0},
		{"gzip;q=-1", 0},
		{"gzip;q=abc", 0},
		{"gzip;q=NaN", 0},
		{"gzip;q=inf", 0},
		{"gzip;q=-Infinity", 0},
		{"gzip;q=", 0},
		{"x-gzip", 1},
		{"X-Gzip;q=0.5, gzip", 0.5},
		{"br, x-gzip;q=0", 0},
		{"*", 0},
		{"identity", 0},
		{"", 0},
		{",,;", 0},
		{"gzipx", 0},
		{"deflate;q=0.5,gzip", 1},
	} {
		if got := gzipQValue(c.ae); got != c.want {
			t.Errorf("gzipQValue(%q) = %v, want %v", c.ae, got, c.want)
		}
	}
}

// TestGzip runs with the answer cache, which keeps compressed answers, and
// without it, when each is compressed per request.
func TestGzip(t *testing.T) {
	for _, mode := range []struct {
		name  string
		bytes int64
	}{{"cached", 0}, {"uncached", -1}} {
		t.Run(mode.name, func(t *testing.T) {
			f := newFixtureWith(t, func(c *Config) { c.AnswerCache = mode.bytes })
			testGzip(t, f)
		})
	}
}

func testGzip(t *testing.T, f *fixture) {
	for _, target := range []string{"/catalog/sets", "/catalog/sets/SV1a/cards?pageSize=50", "/catalog/search?q=ar&limit=50"} {
		plain := f.do(http.MethodGet, target, "Accept-Encoding", "identity")
		plain.wantStatus(t, http.StatusOK)
		if plain.header.Get("Content-Encoding") != "" || strings.Contains(plain.header.Get("ETag"), gzipETagSuffix) {
			t.Fatalf("%s without gzip: Content-Encoding %q, ETag %q", target, plain.header.Get("Content-Encoding"), plain.header.Get("ETag"))
		}
		zipped := gzipGet(t, f, target)
		zipped.wantStatus(t, http.StatusOK)
		if zipped.header.Get("Content-Encoding") != "gzip" {
			t.Fatalf("%s: Content-Encoding %q, want gzip", target, zipped.header.Get("Content-Encoding"))
		}
		if !strings.Contains(zipped.header.Get("Vary"), "Accept-Encoding") {
			t.Errorf("%s: Vary %q", target, zipped.header.Get("Vary"))
		}
		if len(zipped.body) >= len(plain.body) {
			t.Errorf("%s: gzip body %d bytes, plain %d", target, len(zipped.body), len(plain.body))
		}
		if got := gunzip(t, zipped.body); !bytes.Equal(got, plain.body) {
			t.Errorf("%s: the gzip body does not decompress to the plain one", target)
		}
		if got, want := zipped.header.Get("Content-Length"), strconv.Itoa(len(zipped.body)); got != want {
			t.Errorf("%s: gzip Content-Length %q, want %q", target, got, want)
		}
		// Asked again (from the cache, when there is one), the compressed
		// answer is the same bytes under the same tag: the tag is strong.
		again := gzipGet(t, f, target)
		if !bytes.Equal(again.body, zipped.body) || again.header.Get("ETag") != zipped.header.Get("ETag") {
			t.Errorf("%s: a second gzip answer differs (ETag %q, then %q)", target, zipped.header.Get("ETag"), again.header.Get("ETag"))
		}
		// A client that gives gzip a q-value of 0 refuses it; HEAD is never
		// compressed.
		for _, req := range []struct{ method, ae string }{{http.MethodGet, "gzip;q=0, identity"}, {http.MethodHead, "gzip"}} {
			r := f.do(req.method, target, "Accept-Encoding", req.ae)
			if r.status != http.StatusOK || r.header.Get("Content-Encoding") != "" || r.header.Get("ETag") != plain.header.Get("ETag") {
				t.Errorf("%s %s with Accept-Encoding %q: status %d, Content-Encoding %q, ETag %q", req.method, target, req.ae,
					r.status, r.header.Get("Content-Encoding"), r.header.Get("ETag"))
			}
		}
		// A client that names no encoding at all gets the plain answer,
		// and the same Vary, so that a shared cache keeps them apart.
		req := httptest.NewRequest(http.MethodGet, f.base+target, nil)
		req.Header.Set("Authorization", "Bearer "+f.token)
		bare := httptest.NewRecorder()
		f.srv.ServeHTTP(bare, req)
		if bare.Code != http.StatusOK || bare.Header().Get("Content-Encoding") != "" || !bytes.Equal(bare.Body.Bytes(), plain.body) ||
			bare.Header().Get("ETag") != plain.header.Get("ETag") || bare.Header().Get("Vary") != "Accept-Encoding" {
			t.Errorf("%s without Accept-Encoding: status %d, Content-Encoding %q, ETag %q, Vary %q, same body %v", target, bare.Code,
				bare.Header().Get("Content-Encoding"), bare.Header().Get("ETag"), bare.Header().Get("Vary"), bytes.Equal(bare.Body.Bytes(), plain.body))
		}
		// The compressed representation has a tag of its own, strong, and
		// revalidates to a 304 that names it. Each tag revalidates only its
		// own representation (RFC 9110 section 13.1.2): a cache that holds
		// both must not be told to serve the other.
		ptag, ztag := plain.header.Get("ETag"), zipped.header.Get("ETag")
		if ztag != strings.TrimSuffix(ptag, `"`)+gzipETagSuffix+`"` {
			t.Errorf("%s: gzip ETag %q, plain %q", target, ztag, ptag)
		}
		for _, inm := range []string{ztag, "W/" + ztag, ptag + ", " + ztag} {
			nm := gzipGet(t, f, target, "If-None-Match", inm)
			if nm.status != http.StatusNotModified || len(nm.body) != 0 || nm.header.Get("ETag") != ztag {
				t.Errorf("%s If-None-Match %s: status %d, %d bytes, ETag %q, want 304 %s", target, inm, nm.status, len(nm.body), nm.header.Get("ETag"), ztag)
			}
		}
		if r := gzipGet(t, f, target, "If-None-Match", ptag); r.status != http.StatusOK || r.header.Get("ETag") != ztag {
			t.Errorf("%s If-None-Match of the plain tag, taking gzip: status %d, ETag %q, want 200 %s", target, r.status, r.header.Get("ETag"), ztag)
		}
		for _, ae := range []string{"identity", "gzip;q=0"} {
			if r := f.do(http.MethodGet, target, "Accept-Encoding", ae, "If-None-Match", ztag); r.status != http.StatusOK || r.header.Get("ETag") != ptag {
				t.Errorf("%s If-None-Match of the gzip tag, Accept-Encoding %s: status %d, ETag %q, want 200 %s", target, ae, r.status, r.header.Get("ETag"), ptag)
			}
		}
		// Accept-Encoding's lines are one list, and x-gzip is gzip (RFC
		// 9110 sections 5.3 and 8.4.1.3).
		for _, ae := range [][]string{{"br", "gzip"}, {"x-gzip"}} {
			req := httptest.NewRequest(http.MethodGet, f.base+target, nil)
			req.Header.Set("Authorization", "Bearer "+f.token)
			req.Header["Accept-Encoding"] = ae
			got := httptest.NewRecorder()
			f.srv.ServeHTTP(got, req)
			if got.Code != http.StatusOK || got.Header().Get("Content-Encoding") != "gzip" || got.Header().Get("ETag") != ztag {
				t.Errorf("%s with Accept-Encoding %q: status %d, Content-Encoding %q, ETag %q", target, ae, got.Code, got.Header().Get("Content-Encoding"), got.Header().Get("ETag"))
			}
		}
	}
	// A single card is smaller than gzip is worth.
	small := gzipGet(t, f, "/catalog/cards/jp-SV1a-001")
	small.wantStatus(t, http.StatusOK)
	if small.header.Get("Content-Encoding") != "" || strings.Contains(small.header.Get("ETag"), gzipETagSuffix) {
		t.Errorf("a small card was compressed: Content-Encoding %q, ETag %q", small.header.Get("Content-Encoding"), small.header.Get("ETag"))
	}
	if !json.Valid(small.body) {
		t.Errorf("small card body: %s", small.body)
	}
}

// TestCutAnswerIsLoggedAndCounted has the write timeout cut an answer that
// its client does not read: the access-log line is a warning that names the
// error and says how many bytes went out, and the route's incomplete
// counter counts it. The status sent, 200, stays what the line reports.
func TestCutAnswerIsLoggedAndCounted(t *testing.T) {
	reg := prometheus.NewRegistry()
	var logs syncBuffer
	f := newFixtureWith(t, func(c *Config) {
		c.AccessLog = &logs
		recordMetrics(t, reg, c)
	})
	const target = "/catalog/sets/intl-swshp/cards?pageSize=200" // about 70 kB
	full := f.get(target)
	full.wantStatus(t, http.StatusOK)

	// A server of its own, with a write timeout; small socket buffers on
	// both ends make the answer block long before it is all sent.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: f.srv, WriteTimeout: 200 * time.Millisecond}
	go srv.Serve(smallSendBuffers{ln})
	t.Cleanup(func() { srv.Close() })
	dialer := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		var err error
		if cerr := c.Control(func(fd uintptr) {
			err = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, smallBuffer)
		}); cerr != nil {
			return cerr
		}
		return err
	}}
	conn, err := dialer.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := fmt.Fprintf(conn, "GET %s%s HTTP/1.1\r\nHost: catalogd\r\nAuthorization: Bearer %s\r\n\r\n", testBasePath, target, f.token); err != nil {
		t.Fatal(err)
	}

	// The client reads nothing; the server gives up at its write timeout.
	var lines []map[string]any
	for deadline := time.Now().Add(10 * time.Second); ; {
		if lines = accessLines(t, &logs); len(lines) == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d access-log lines after 10 s, want 2:\n%s", len(lines), logs.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if lines[0]["level"] != "INFO" || lines[0]["error"] != nil {
		t.Errorf("the whole answer's line: %v, want INFO without an error", lines[0])
	}
	cut := lines[1]
	if cut["level"] != "WARN" || cut["route"] != "listSetCards" || cut["status"] != float64(200) {
		t.Errorf("cut answer's line: %v, want a WARN of listSetCards with status 200", cut)
	}
	if e, _ := cut["error"].(string); !strings.HasPrefix(e, "write ") || !strings.Contains(e, "timeout") {
		t.Errorf("cut answer's error %q, want the write timeout", cut["error"])
	}
	if n, _ := cut["bytes"].(float64); n >= float64(len(full.body)) {
		t.Errorf("cut answer logged %v bytes, want fewer than the whole %d", cut["bytes"], len(full.body))
	}

	wantSeries(t, scrape(t, reg),
		`catalogd_http_responses_incomplete_total{route="listSetCards"} 1`,
		`catalogd_http_responses_incomplete_total{route="getCard"} 0`,
		`catalogd_http_requests_total{route="listSetCards",status="200"} 2`)
}

// smallBuffer is the socket buffer, in bytes, of TestCutAnswerIsLoggedAndCounted's
// connection; the kernel doubles it and rounds it up to its minimum.
const smallBuffer = 4096

// smallSendBuffers gives every accepted connection a small send buffer.
type smallSendBuffers struct{ net.Listener }

func (l smallSendBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	if err := c.(*net.TCPConn).SetWriteBuffer(smallBuffer); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// recordMetrics has the Server of c record its metrics in reg.
func recordMetrics(t *testing.T, reg *prometheus.Registry, c *Config) *Metrics {
	t.Helper()
	m, err := NewMetrics(reg, c.Catalog)
	if err != nil {
		t.Fatal(err)
	}
	c.Metrics = m
	return m
}

// wantSeries checks that a metrics page has each of the lines.
func wantSeries(t *testing.T, page string, lines ...string) {
	t.Helper()
	for _, line := range lines {
		if !strings.Contains(page, line+"\n") {
			t.Errorf("metrics lack %s", line)
		}
	}
}

// scrape reads reg's metrics page.
func scrape(t *testing.T, reg *prometheus.Registry) string {
	t.Helper()
	rec := httptest.NewRecorder()
	promhttp.HandlerFor(reg, promhttp.HandlerOpts{}).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("metrics: status %d: %s", rec.Code, rec.Body)
	}
	return rec.Body.String()
}
