// Command syncbench measures partner sync on a generated catalogue: the
// download of GET /catalog/export (plain and gzip) from a real catalogd
// serve, with the server's CPU and memory; then, for each share of cards
// touched by a new import, the time the import's comparison adds and the
// time per page of GET /catalog/changes.
//
//	go run ./internal/bench/syncbench -cards 1000000 -touch 1,50 -runs 3
//
// The comparison's cost is the difference between importing the changed
// snapshot over a copy of the catalogue with --history 0 (nothing
// compared) and with the default history.
package main

import (
	"bufio"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/catalogd/catalogd/internal/bench/procfs"
	"github.com/catalogd/catalogd/internal/gen"
)

func main() {
	cards := flag.Int("cards", 1_000_000, "cards in the generated snapshot")
	touch := flag.String("touch", "1,50", "percentages of cards a new import changes, comma-separated")
	keep := flag.Bool("keep", false, "keep the working directory")
	runs := flag.Int("runs", 1, "import each changed snapshot this many times with and without the comparison")
	flag.Parse()
	if *runs < 1 {
		fmt.Fprintln(os.Stderr, "syncbench: -runs must be at least 1")
		os.Exit(2)
	}
	var shares []int
	for _, f := range strings.Split(*touch, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > 100 {
			fmt.Fprintln(os.Stderr, "syncbench: -touch: percentages from 1 to 100")
			os.Exit(2)
		}
		shares = append(shares, n)
	}
	if err := run(*cards, shares, *keep, *runs); err != nil {
		fmt.Fprintln(os.Stderr, "syncbench:", err)
		os.Exit(1)
	}
}

func run(cards int, shares []int, keep bool, runs int) error {
	dir, err := os.MkdirTemp("", "catalogd-syncbench-")
	if err != nil {
		return err
	}
	if !keep {
		defer os.RemoveAll(dir)
	}
	bin := filepath.Join(dir, "catalogd")
	if err := procfs.Build(context.Background(), bin, "."); err != nil {
		return fmt.Errorf("build catalogd: %w", err)
	}
	base := filepath.Join(dir, "base.json")
	if _, err := gen.WriteFile(base, gen.Options{Cards: cards, Seed: 1}); err != nil {
		return err
	}
	db := filepath.Join(dir, "base.db")
	if _, err := importTimed(bin, db, base, 30); err != nil {
		return err
	}
	gen0, err := generation(bin, db)
	if err != nil {
		return err
	}
	fmt.Printf("catalogue       %d cards, generation %s\n", cards, gen0)

	if err := benchExport(bin, db); err != nil {
		return err
	}
	for _, pct := range shares {
		changed := filepath.Join(dir, fmt.Sprintf("touch%d.json", pct))
		if err := touchCards(base, changed, pct); err != nil {
			return err
		}
		// Alternating which goes first, so that neither always has the
		// page cache the other left.
		for r := range runs {
			var took [2]importFigures
			for j := range 2 {
				i := (j + r) % 2
				history := []int{0, 30}[i]
				cp := filepath.Join(dir, fmt.Sprintf("touch%d-%d.db", pct, history))
				if err := copyFile(db, cp); err != nil {
					return err
				}
				if took[i], err = importTimed(bin, cp, changed, history); err != nil {
					return err
				}
			}
			fmt.Printf("import %3d%%     --history 0: %s wall, %s CPU; --history 30: %s wall, %s CPU; the comparison adds %s wall, %s CPU\n",
				pct, took[0].wall, took[0].cpu, took[1].wall, took[1].cpu, (took[1].wall - took[0].wall).Round(time.Millisecond), (took[1].cpu - took[0].cpu).Round(time.Millisecond))
		}
		if err := benchChanges(bin, filepath.Join(dir, fmt.Sprintf("touch%d-30.db", pct)), gen0, pct); err != nil {
			return err
		}
	}
	return nil
}

type importFigures struct{ wall, cpu time.Duration }

func importTimed(bin, db, snapshot string, history int) (importFigures, error) {
	cmd := procfs.Import(context.Background(), bin, db, snapshot)
	cmd.Args = append(cmd.Args[:2], append([]string{"--history", strconv.Itoa(history)}, cmd.Args[2:]...)...)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	if err != nil {
		return importFigures{}, fmt.Errorf("import %s: %w\n%s", snapshot, err, out)
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	return importFigures{wall: time.Since(start).Round(time.Millisecond), cpu: cpu.Round(time.Millisecond)}, nil
}

func generation(bin, db string) (string, error) {
	out, err := procfs.Command(context.Background(), bin, "info", "--json", "--db", db).Output()
	if err != nil {
		return "", fmt.Errorf("info: %w", err)
	}
	var info struct{ Generation string }
	if err := json.Unmarshal(out, &info); err != nil {
		return "", err
	}
	return info.Generation, nil
}

// touchCards writes the snapshot in with pct % of its cards changed: their
// rarity, which every answer about them carries.
func touchCards(in, out string, pct int) error {
	f, err := os.Open(in)
	if err != nil {
		return err
	}
	defer f.Close()
	var snap struct {
		Sets  []json.RawMessage            `json:"sets"`
		Cards []map[string]json.RawMessage `json:"cards"`
	}
	if err := json.NewDecoder(bufio.NewReader(f)).Decode(&snap); err != nil {
		return fmt.Errorf("read %s: %w", in, err)
	}
	for i, c := range snap.Cards {
		if i*pct/100 != (i+1)*pct/100 {
			c["rarity"] = json.RawMessage(`"Touched"`)
		}
	}
	o, err := os.Create(out)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(o)
	if err := json.NewEncoder(w).Encode(snap); err != nil {
		o.Close()
		return err
	}
	if err := w.Flush(); err != nil {
		o.Close()
		return err
	}
	return o.Close()
}

func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o644)
}

// server is a running catalogd serve --dev.
type server struct {
	cmd   *exec.Cmd
	api   string
	token string
}

func serve(bin, db string) (*server, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := l.Addr().String()
	l.Close()
	api := "http://" + addr + "/api/v1"
	cmd := procfs.Command(context.Background(), bin, "serve", "--dev", "--db", db, "--addr", addr, "--base-url", api)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &server{cmd: cmd, api: api}
	tok, err := procfs.Command(context.Background(), bin, "token", "--db", db, "--base-url", api).Output()
	if err != nil {
		s.stop()
		return nil, fmt.Errorf("token: %w", err)
	}
	s.token = strings.TrimSpace(string(tok))
	for start := time.Now(); ; time.Sleep(50 * time.Millisecond) {
		if resp, err := http.Get("http://" + addr + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s, nil
			}
		}
		if time.Since(start) > 30*time.Second {
			s.stop()
			return nil, errors.New("serve did not become ready")
		}
	}
}

func (s *server) stop() {
	s.cmd.Process.Signal(syscall.SIGTERM)
	s.cmd.Wait()
}

var client = &http.Client{Transport: &http.Transport{DisableCompression: true}}

func (s *server) get(path string, header ...string) (*http.Response, error) {
	req, err := http.NewRequest(http.MethodGet, s.api+path, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+s.token)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return nil, fmt.Errorf("GET %s: %d %s", path, resp.StatusCode, body)
	}
	return resp, nil
}

// benchExport downloads the export, plain and then compressed twice (the
// first compressed download of a generation also learns its chunks),
// sampling the server's memory while it sends.
func benchExport(bin, db string) error {
	s, err := serve(bin, db)
	if err != nil {
		return err
	}
	defer s.stop()
	pid := s.cmd.Process.Pid
	idle, err := procfs.ReadMem(pid)
	if err != nil {
		return err
	}
	fmt.Printf("server idle     RSS %.0f MB, anonymous %.0f MB\n", mb(idle.RSS), mb(idle.Anon))
	var plain int64
	for _, enc := range []string{"identity", "gzip", "gzip"} {
		cpu0, err := procfs.CPU(pid)
		if err != nil {
			return err
		}
		start := time.Now()
		resp, err := s.get("/catalog/export", "Accept-Encoding", enc)
		if err != nil {
			return err
		}
		var peak procfs.Mem
		done := make(chan struct{})
		go func() {
			t := time.NewTicker(10 * time.Millisecond)
			defer t.Stop()
			for {
				select {
				case <-done:
					return
				case <-t.C:
					if m, err := procfs.ReadMem(pid); err == nil {
						peak.Max(m)
					}
				}
			}
		}()
		n, err := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		close(done)
		if err != nil {
			return err
		}
		wall := time.Since(start)
		cpu1, err := procfs.CPU(pid)
		if err != nil {
			return err
		}
		cpu := cpu1 - cpu0
		if plain == 0 {
			plain = n
		}
		fmt.Printf("export %-8s  %.1f MB in %s: %.0f MB/s; server CPU %s, %.2f s per GB sent, %.2f s per GB of catalogue; server peak RSS %.0f MB, anonymous %.0f MB\n",
			enc, mb(n), wall.Round(time.Millisecond), mb(n)/wall.Seconds(), cpu.Round(time.Millisecond), cpu.Seconds()/(float64(n)/1e9), cpu.Seconds()/(float64(plain)/1e9), mb(peak.RSS), mb(peak.Anon))
	}
	return nil
}

// benchChanges pages through the changes since gen0, 500 and 1000 at a
// time.
func benchChanges(bin, db, gen0 string, pct int) error {
	s, err := serve(bin, db)
	if err != nil {
		return err
	}
	defer s.stop()
	for _, limit := range []int{500, 1000} {
		after, pages, changes := "", 0, 0
		start := time.Now()
		var slowest time.Duration
		for {
			q := url.Values{"since": {gen0}, "limit": {strconv.Itoa(limit)}}
			if after != "" {
				q.Set("after", after)
			}
			t := time.Now()
			resp, err := s.get("/catalog/changes?"+q.Encode(), "Accept-Encoding", "gzip")
			if err != nil {
				return err
			}
			var page struct {
				Data []json.RawMessage
				Meta struct{ Next *string }
			}
			r, err := gzipReader(resp)
			if err == nil {
				err = json.NewDecoder(r).Decode(&page)
			}
			resp.Body.Close()
			if err != nil {
				return err
			}
			slowest = max(slowest, time.Since(t))
			pages++
			changes += len(page.Data)
			if page.Meta.Next == nil {
				break
			}
			after = *page.Meta.Next
		}
		wall := time.Since(start)
		fmt.Printf("changes %3d%%    limit %d: %d changes in %d pages, %s: %s per page (slowest %s)\n",
			pct, limit, changes, pages, wall.Round(time.Millisecond), (wall / time.Duration(pages)).Round(time.Microsecond), slowest.Round(time.Microsecond))
	}
	return nil
}

func mb(n int64) float64 { return float64(n) / 1e6 }

func gzipReader(resp *http.Response) (io.Reader, error) {
	if resp.Header.Get("Content-Encoding") != "gzip" {
		return resp.Body, nil
	}
	return gzip.NewReader(resp.Body)
}
