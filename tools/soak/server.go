package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/catalogd/catalogd/tools/internal/idp"
	"github.com/catalogd/catalogd/tools/internal/procfs"
)

// server is catalogd serve, started by the soak with its own identity
// provider, as the load harness starts it.
type server struct {
	*procfs.Process
	idp     *idp.IdP
	api     string         // the base URL of the API: https://addr/api/v1
	roots   *x509.CertPool // that trust its certificate
	token   string
	metrics string // the URL of /metrics
	log     *serverLog
}

// startServer starts bin serve on db over HTTPS, with a certificate of its
// own in dir, its log going to logPath, and waits until it is ready. close
// stops its identity provider.
func startServer(ctx context.Context, bin, db, dir, logPath string) (*server, error) {
	certFile, keyFile, roots, err := writeCertificate(dir)
	if err != nil {
		return nil, err
	}
	addr, err := procfs.FreeAddr()
	if err != nil {
		return nil, err
	}
	metricsAddr, err := procfs.FreeAddr()
	if err != nil {
		return nil, err
	}
	provider, err := idp.Start(addr, "catalogd-soak")
	if err != nil {
		return nil, err
	}
	s := &server{idp: provider, api: "https://" + addr + "/api/v1", roots: roots, token: provider.Token, metrics: "http://" + metricsAddr + "/metrics"}
	logFile, err := os.Create(logPath)
	if err != nil {
		provider.Close()
		return nil, err
	}
	s.log = &serverLog{w: logFile, levels: map[string]int{}, statuses: map[int]int{}}
	// The identity provider's tokens are for the audience of serve over
	// plain HTTP at addr.
	args := append([]string{"serve", "--addr", addr, "--db", db, "--metrics-addr", metricsAddr,
		"--tls-cert", certFile, "--tls-key", keyFile, "--audience", "http://" + addr + "/api/v1/mcp"}, provider.ServeFlags()...)
	cmd := procfs.Command(context.Background(), bin, args...)
	cmd.Stdout = logFile
	stderr, err := cmd.StderrPipe()
	if err != nil {
		logFile.Close()
		provider.Close()
		return nil, err
	}
	read := make(chan struct{})
	s.Process, err = procfs.Start(cmd, func() {
		<-read // the pipe is read to the end before Wait closes it
		logFile.Close()
	})
	if err != nil {
		logFile.Close()
		provider.Close()
		return nil, err
	}
	go func() {
		defer close(read)
		s.log.read(stderr)
	}()
	ready := &http.Transport{DisableKeepAlives: true, TLSClientConfig: &tls.Config{RootCAs: roots}}
	if err := s.WaitReadyAt(ctx, "https://"+addr+"/readyz", ready, 50*time.Millisecond); err != nil {
		provider.Close()
		return nil, fmt.Errorf("catalogd serve (its log: %s): %w", logPath, err)
	}
	return s, nil
}

// serverLog copies catalogd's JSON log to a file and keeps what the soak
// reports of it.
type serverLog struct {
	w io.Writer

	mu       sync.Mutex
	lines    int
	requests int
	levels   map[string]int
	reloads  int // "catalogue reloaded"
	stopped  bool
	notable  []string // the first WARN and ERROR lines
	failures []string // the first access-log lines with a status other than 200 and 304
	statuses map[int]int
	// durations are the access log's: from the request read to the
	// answer written, in the server.
	durations []time.Duration
}

const keepLines = 5

// logLine is what the soak reads of a log line.
type logLine struct {
	Level      string  `json:"level"`
	Msg        string  `json:"msg"`
	Status     int     `json:"status"`
	DurationMS float64 `json:"duration_ms"`
}

func (l *serverLog) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		b := sc.Bytes()
		l.w.Write(b)
		l.w.Write([]byte{'\n'})
		var ll logLine
		// The access log is most of it: read the status without decoding.
		if bytes.Contains(b, []byte(`"msg":"request"`)) {
			ll.Msg, ll.Level = "request", "INFO"
			ll.Status = int(numberAfter(b, `"status":`))
			ll.DurationMS = numberAfter(b, `"duration_ms":`)
		} else if err := json.Unmarshal(b, &ll); err != nil {
			ll.Level = "TEXT"
		}
		l.mu.Lock()
		l.lines++
		l.levels[ll.Level]++
		switch ll.Msg {
		case "request":
			l.requests++
			l.statuses[ll.Status]++
			l.durations = append(l.durations, time.Duration(ll.DurationMS*float64(time.Millisecond)))
			if ll.Status != http.StatusOK && ll.Status != http.StatusNotModified && len(l.failures) < keepLines {
				l.failures = append(l.failures, string(b))
			}
		case "catalogue reloaded":
			l.reloads++
		case "stopped":
			l.stopped = true
		}
		if (ll.Level == "WARN" || ll.Level == "ERROR" || ll.Level == "TEXT") && len(l.notable) < keepLines {
			l.notable = append(l.notable, string(b))
		}
		l.mu.Unlock()
	}
}

// numberAfter reads the number that follows key in a log line, 0 if none.
func numberAfter(line []byte, key string) float64 {
	_, rest, ok := bytes.Cut(line, []byte(key))
	if !ok {
		return 0
	}
	end := bytes.IndexFunc(rest, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	if end < 0 {
		end = len(rest)
	}
	n, _ := strconv.ParseFloat(string(rest[:end]), 64)
	return n
}

func (l *serverLog) reloaded() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.reloads
}

// scrape reads the series of a Prometheus text exposition: the key is the
// series as written ("name" or `name{label="value"}`).
func scrape(ctx context.Context, client *http.Client, url string) (map[string]float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			continue
		}
		out[line[:i]] = v
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return out, nil
}
