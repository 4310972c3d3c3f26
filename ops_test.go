package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// serveProcess is catalogd serve running as a child process.
type serveProcess struct {
	cmd    *exec.Cmd
	banner map[string]string // the dev banner's lines, by name
	api    string            // the API's base URL
	token  string            // the dev banner's token
	stderr *lockedBuffer
	exited chan error
}

// startServe starts serve --dev with args added and reads its banner.
func startServe(t *testing.T, args ...string) *serveProcess {
	t.Helper()
	return startServeEnv(t, nil, args...)
}

// startServeEnv is startServe with more environment variables.
func startServeEnv(t *testing.T, env []string, args ...string) *serveProcess {
	t.Helper()
	cmd := catalogdCommand(t, append([]string{"serve", "--dev", "--addr", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(cmd.Env, env...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &serveProcess{cmd: cmd, stderr: &lockedBuffer{}, exited: make(chan error, 1)}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		if t.Failed() {
			t.Logf("serve's log:\n%s", p.stderr.String())
		}
	})
	p.banner = readDevBanner(t, stdout)
	p.api, p.token = p.banner["API"], p.banner["token"]
	return p
}

// get sends a GET with the banner's token and returns the status, the
// generation header and the body.
func (p *serveProcess) get(client *http.Client, path string) (int, string, string, error) {
	req, err := http.NewRequest(http.MethodGet, p.api+path, nil)
	if err != nil {
		return 0, "", "", err
	}
	req.Header.Set("Authorization", "Bearer "+p.token)
	resp, err := client.Do(req)
	if err != nil {
		return 0, "", "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Catalog-Generation"), string(body), err
}

// dial opens a connection to serve for a test to write its request by
// hand, closed when the test ends, and returns the API's URL with it.
func (p *serveProcess) dial(t *testing.T) (net.Conn, *url.URL) {
	t.Helper()
	u, err := url.Parse(p.api)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn, u
}

// logged returns the first log line with msg, waiting up to timeout.
func (p *serveProcess) logged(t *testing.T, msg string, timeout time.Duration) map[string]any {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		s := bufio.NewScanner(strings.NewReader(p.stderr.String()))
		for s.Scan() {
			var line map[string]any
			if json.Unmarshal(s.Bytes(), &line) == nil && line["msg"] == msg {
				return line
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve did not log %q in %s", msg, timeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// metrics reads the page of serve's --metrics-addr.
func (p *serveProcess) metrics(t *testing.T) []byte {
	t.Helper()
	addr, _ := p.logged(t, "serving", 5*time.Second)["metrics_addr"].(string)
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	page, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return page
}

// stop sends SIGTERM and wants a clean exit.
func (p *serveProcess) stop(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-p.exited:
		if err != nil {
			t.Fatalf("serve after SIGTERM: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not exit after SIGTERM")
	}
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// TestServeReloadsImportsUnderLoad runs the real binary under a steady
// request loop while catalogd import replaces the catalogue three times:
// every request must succeed, and each new catalogue must answer within 2
// seconds of its import (docs/CONTRACT.md, Operations).
func TestServeReloadsImportsUnderLoad(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "catalog.db")
	first, _ := sampleVariant(t, dir, 0)
	importInto(t, db, first)
	p := startServe(t, "--db", db, "--metrics-addr", "127.0.0.1:0")

	// The load: a few clients on every catalogue route, without pause.
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		answered int
		failures []string
	)
	stop := make(chan struct{})
	paths := []string{"/catalog/sets", "/catalog/cards/jp-SV1a-001", "/catalog/sets/base1/cards?pageSize=20", "/catalog/search?q=pikachu"}
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			client := &http.Client{Transport: &http.Transport{}, Timeout: 10 * time.Second}
			for n := i; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				path := paths[n%len(paths)]
				status, _, body, err := p.get(client, path)
				mu.Lock()
				answered++
				if err != nil || status != http.StatusOK {
					failures = append(failures, fmt.Sprintf("%s: %d %v %.200s", path, status, err, body))
				}
				mu.Unlock()
			}
		}()
	}

	client := &http.Client{Timeout: 10 * time.Second}
	_, generation, _, err := p.get(client, "/catalog/sets")
	if err != nil {
		t.Fatal(err)
	}
	for n := 1; n <= 3; n++ {
		snapshot, name := sampleVariant(t, dir, n)
		if out, err := catalogdCommand(t, "import", "--db", db, snapshot).CombinedOutput(); err != nil {
			t.Fatalf("import %d: %v\n%s", n, err, out)
		}
		imported := time.Now()
		for {
			status, gen, body, err := p.get(client, "/catalog/sets")
			if err == nil && status == http.StatusOK && strings.Contains(body, name) {
				if gen == generation {
					t.Fatalf("import %d: new data under the old generation %s", n, gen)
				}
				generation = gen
				break
			}
			if time.Since(imported) > 2*time.Second {
				t.Fatalf("import %d: not served 2 s after the import finished", n)
			}
			time.Sleep(10 * time.Millisecond)
		}
		t.Logf("import %d served %s after it finished", n, time.Since(imported).Round(time.Millisecond))
		// Let the loop run on the new catalogue, and the old one close.
		time.Sleep(200 * time.Millisecond)
	}
	close(stop)
	wg.Wait()
	if len(failures) > 0 {
		t.Fatalf("%d of %d requests failed during the reloads, first: %s", len(failures), answered, failures[0])
	}
	if answered < 100 {
		t.Fatalf("only %d requests were made during the reloads", answered)
	}
	t.Logf("%d requests, all 200", answered)

	// The metrics endpoint tells the same story.
	page := p.metrics(t)
	for _, want := range []string{
		`catalogd_catalog_reloads_total{result="success"} 3`,
		`catalogd_catalog_info{generation="` + generation + `"} 1`,
		`catalogd_http_requests_total{route="getCard",status="200"} `,
		`catalogd_catalog_cards{zone="jp"} `,
		`go_goroutines `,
		`process_resident_memory_bytes `,
	} {
		if !bytes.Contains(page, []byte(want)) {
			t.Errorf("metrics lack %s", want)
		}
	}

	// SIGHUP reopens on demand.
	if err := p.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	p.logged(t, "catalogue unchanged", 5*time.Second)

	p.stop(t)
	// Thousands of requests with a token, and never the token in the log.
	if log := p.stderr.String(); strings.Contains(log, p.token[strings.LastIndexByte(p.token, '.')+1:]) {
		t.Error("the token's signature appears in the log")
	}
	if n := strings.Count(p.stderr.String(), `"msg":"request"`); n < answered {
		t.Errorf("%d access-log lines for %d requests", n, answered)
	}
}

// TestServeDrainsInFlightRequest sends SIGTERM while a request's body is
// still arriving: serve stops accepting connections, finishes that request,
// then exits 0.
func TestServeDrainsInFlightRequest(t *testing.T) {
	p := startServe(t, "--db", filepath.Join(t.TempDir(), "catalog.db"))
	conn, u := p.dial(t)
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"drain-test","version":"1"}}}`
	half := len(body) / 2
	// Expect: 100-continue has the server say when the handler starts
	// reading the body.
	fmt.Fprintf(conn, "POST %s/mcp HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: %d\r\nExpect: 100-continue\r\n\r\n",
		u.Path, u.Host, p.token, len(body))
	conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	br := bufio.NewReader(conn)
	if cont, err := http.ReadResponse(br, nil); err != nil {
		t.Fatalf("the request's headers: %v, want 100 Continue once the handler reads the body", err)
	} else if cont.StatusCode != http.StatusContinue {
		t.Fatalf("the request's headers: %d, want 100 Continue once the handler reads the body", cont.StatusCode)
	}
	// The server is now reading the body inside the handler.
	io.WriteString(conn, body[:half])

	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	p.logged(t, "shutting down: finishing requests in flight", 5*time.Second)
	// Draining: no new connections, and the process waits for ours.
	deadline := time.Now().Add(5 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", u.Host, time.Second)
		if err != nil {
			break
		}
		c.Close()
		if time.Now().After(deadline) {
			t.Fatal("serve still accepts connections after SIGTERM")
		}
		time.Sleep(20 * time.Millisecond)
	}
	select {
	case err := <-p.exited:
		t.Fatalf("serve exited with a request in flight: %v", err)
	case <-time.After(500 * time.Millisecond):
	}

	if _, err := io.WriteString(conn, body[half:]); err != nil {
		t.Fatal(err)
	}
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("the in-flight request got no answer: %v", err)
	}
	answer, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !bytes.Contains(answer, []byte(`"protocolVersion"`)) {
		t.Fatalf("the in-flight request: %d %s", resp.StatusCode, answer)
	}
	select {
	case err := <-p.exited:
		if err != nil {
			t.Fatalf("serve after draining: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not exit after its last request")
	}
	p.logged(t, "stopped", time.Second)
}

// serveHeldDownload starts serve on the real catalogue with a download of
// its export held by a client that reads nothing past the status line: 14
// MB, more than the sockets' buffers hold, so the handler waits to write,
// and each write would give it 30 s more. It returns once the status line
// has come, so that the handler is running.
func serveHeldDownload(t *testing.T, args ...string) *serveProcess {
	t.Helper()
	db := filepath.Join(t.TempDir(), "catalog.db")
	importRealCatalogue(t, db)
	p := startServe(t, append([]string{"--db", db}, args...)...)
	conn, u := p.dial(t)
	fmt.Fprintf(conn, "GET %s/catalog/export HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nAccept-Encoding: identity\r\n\r\n", u.Path, u.Host, p.token)
	conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	if status, err := bufio.NewReader(conn).ReadString('\n'); err != nil || !strings.Contains(status, " 200 ") {
		t.Fatalf("held download: %q, %v", status, err)
	}
	return p
}

// TestServeCutsDownloadsPastTheGrace sends SIGTERM while a client that
// reads nothing holds a download of the real catalogue's export: after
// the grace period (--shutdown-grace) serve closes that connection, says
// so, and exits 0, as a stop that was asked for.
func TestServeCutsDownloadsPastTheGrace(t *testing.T) {
	t.Parallel()
	const grace = 2 * time.Second
	p := serveHeldDownload(t, "--shutdown-grace", grace.String())

	stopped := time.Now()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-p.exited:
		if err != nil {
			t.Fatalf("serve with a download past the grace: %v", err)
		}
	case <-time.After(grace + 8*time.Second):
		t.Fatal("serve did not exit after its grace period")
	}
	if took := time.Since(stopped); took < grace {
		t.Errorf("serve exited %s after SIGTERM, before the download it held had its %s", took, grace)
	}
	// A duration reads as one in the log, not as nanoseconds.
	if line := p.logged(t, "requests still in flight after the grace period: closing their connections", time.Second); line["grace"] != grace.String() {
		t.Errorf("grace %v, want %q", line["grace"], grace.String())
	}
	p.logged(t, "stopped", time.Second)
}

// TestSecondSignalEndsServe sends SIGTERM twice in a moment, as timeout(1)
// may, while a download holds serve in its grace period, then SIGINT, as
// an operator who will not wait presses Ctrl-C again: the repeat is one
// stop, and the second signal ends the process at once.
func TestSecondSignalEndsServe(t *testing.T) {
	t.Parallel()
	p := serveHeldDownload(t)

	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	p.logged(t, "shutting down: finishing requests in flight", 5*time.Second)
	// The repeat, once the first is taken.
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-p.exited:
		t.Fatalf("serve exited with a download in flight: %v", err)
	case <-time.After(signalRepeat + 500*time.Millisecond):
	}
	if err := p.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-p.exited:
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			t.Fatalf("serve after a second signal: %v", err)
		}
		if ws, ok := exit.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGINT {
			t.Fatalf("serve after a second signal: %v, want the end SIGINT gives", err)
		}
	case <-time.After(defaultShutdownGrace / 2):
		t.Fatal("serve still runs after a second signal")
	}
}

// TestServeWithAStalledLog runs serve with its log going to a pipe that
// nobody reads, as a stalled journald or container runtime leaves it:
// requests are answered long after the pipe is full, and SIGTERM still
// stops the process.
func TestServeWithAStalledLog(t *testing.T) {
	t.Parallel()
	cmd := catalogdCommand(t, "serve", "--dev", "--addr", "127.0.0.1:0", "--db", filepath.Join(t.TempDir(), "catalog.db"))
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	unread, stderr, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer unread.Close()
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stderr.Close()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() { cmd.Process.Kill() })
	banner := readDevBanner(t, stdout)
	p := &serveProcess{api: banner["API"], token: banner["token"]}

	// A request's log line is some 250 bytes: the pipe's 64 KiB are full
	// after a few hundred, and most of these are answered after that.
	client := &http.Client{Timeout: 10 * time.Second}
	for i := range 1000 {
		status, _, body, err := p.get(client, "/catalog/sets")
		if err != nil || status != http.StatusOK {
			t.Fatalf("request %d with the log stalled: %d %v %.100s", i, status, err, body)
		}
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("serve with its log stalled, after SIGTERM: %v", err)
		}
	case <-time.After(defaultShutdownGrace + 20*time.Second):
		t.Fatal("serve with its log stalled did not stop after SIGTERM")
	}
}

// TestServeGCHeadroom reads the GC percentage serve runs with from its
// metrics: raised by --gc-headroom-mb, left to Go with the flag at 0 or
// with GOGC in the environment.
func TestServeGCHeadroom(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		env    []string
		args   []string
		raised bool
		logged float64 // gc_headroom_mb of the "serving" line
	}{
		{"default", []string{"GOGC="}, nil, true, 16},
		{"flag at 0", []string{"GOGC="}, []string{"--gc-headroom-mb", "0"}, false, 0},
		{"GOGC set", []string{"GOGC=100"}, nil, false, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			p := startServeEnv(t, c.env, append([]string{"--metrics-addr", "127.0.0.1:0"}, c.args...)...)
			var percent float64 = -1
			for line := range strings.Lines(string(p.metrics(t))) {
				if v, ok := strings.CutPrefix(line, "go_gc_gogc_percent "); ok {
					var err error
					percent, err = strconv.ParseFloat(strings.TrimSpace(v), 64)
					if err != nil {
						t.Fatalf("go_gc_gogc_percent %q: %v", v, err)
					}
				}
			}
			if percent < 0 {
				t.Fatal("metrics lack go_gc_gogc_percent")
			}
			if got := percent > 100; got != c.raised || (!c.raised && percent != 100) {
				t.Errorf("go_gc_gogc_percent %v, want raised above 100: %v", percent, c.raised)
			}
			if got := p.logged(t, "serving", 5*time.Second)["gc_headroom_mb"]; got != c.logged {
				t.Errorf("serving line: gc_headroom_mb %v, want %v", got, c.logged)
			}
			p.stop(t)
		})
	}
}

// TestServeLimitsConnections holds as many connections as --max-conns
// allows, each sending its header slowly, as a client that means to tie up
// memory does: another client waits until one of them closes, and is then
// answered.
func TestServeLimitsConnections(t *testing.T) {
	t.Parallel()
	p := startServe(t, "--max-conns", "2")
	var held []net.Conn
	for range 2 {
		conn, u := p.dial(t)
		fmt.Fprintf(conn, "GET %s/catalog/sets HTTP/1.1\r\nHost: %s\r\nX-Pad: ", u.Path, u.Host)
		held = append(held, conn)
	}
	if code, _, _, err := p.get(&http.Client{Timeout: time.Second}, "/catalog/sets"); err == nil {
		t.Fatalf("a third connection was answered (%d) while two were held", code)
	}
	held[0].Close()
	if code, _, _, err := p.get(&http.Client{Timeout: 4 * time.Second}, "/catalog/sets"); err != nil || code != http.StatusOK {
		t.Fatalf("once a held connection closed: %d, %v", code, err)
	}
}

// TestServeOutlivesItsLogReader closes the pipe serve logs to, as a log
// shipper that exits does: serve goes on answering, and counts the lines
// it could not write.
func TestServeOutlivesItsLogReader(t *testing.T) {
	cmd := catalogdCommand(t, "serve", "--dev", "--addr", "127.0.0.1:0", "--metrics-addr", "127.0.0.1:0")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	logs, logw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = logw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	logw.Close()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() { cmd.Process.Kill() })
	p := &serveProcess{cmd: cmd, banner: readDevBanner(t, stdout)}
	p.api, p.token = p.banner["API"], p.banner["token"]
	var metricsAddr string
	for s := bufio.NewScanner(logs); metricsAddr == "" && s.Scan(); {
		var line map[string]any
		if json.Unmarshal(s.Bytes(), &line) == nil && line["msg"] == "serving" {
			metricsAddr, _ = line["metrics_addr"].(string)
		}
	}
	logs.Close() // the reader goes away
	for i := range 200 {
		if code, _, _, err := p.get(http.DefaultClient, "/catalog/sets"); err != nil || code != http.StatusOK {
			t.Fatalf("request %d after the log's reader went: %d, %v", i, code, err)
		}
		if i%50 == 0 {
			time.Sleep(logFlushEvery + 50*time.Millisecond) // a flush meets the closed pipe
		}
	}
	select {
	case err := <-exited:
		t.Fatalf("serve exited: %v", err)
	default:
	}
	resp, err := http.Get("http://" + metricsAddr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	m := regexp.MustCompile(`(?m)^catalogd_log_lines_dropped_total (\d+)`).FindSubmatch(page)
	if m == nil || string(m[1]) == "0" {
		t.Errorf("lines dropped: %q, want a count above 0", m)
	}
}
