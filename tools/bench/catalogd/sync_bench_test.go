package catalogdbench

import (
	"bufio"
	"compress/gzip"
	"context"
	"encoding/json"
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
	"sync"
	"testing"
	"time"

	"github.com/catalogd/catalogd/catalog/store"
	"github.com/catalogd/catalogd/tools/gen"
	"github.com/catalogd/catalogd/tools/internal/procfs"
)

var (
	syncCards = flag.Int("sync-cards", 100_000, "cards in the generated catalogue of BenchmarkSync")
	syncTouch = flag.String("sync-touch", "1,50", "percentages of cards a new import changes in BenchmarkSync, comma-separated")
)

// BenchmarkSync measures partner sync against a real catalogd serve --dev
// on a generated catalogue (docs/BENCHMARKS.md, "Partner sync"): the
// download of the export, plain and compressed, with the server's
// processor time and peak memory; for each share of cards a new import
// touches, that import with and without the comparison that records the
// changes (--history 30 and 0: the difference is the comparison's cost);
// and the pages of the changes since the first generation.
func BenchmarkSync(b *testing.B) {
	if raceDetector {
		b.Fatal("run the benchmarks without -race: the race detector's cost would be measured")
	}
	buildCatalogd(b)
	dir := b.TempDir()
	base, db := filepath.Join(dir, "base.json"), filepath.Join(dir, "base.db")
	if _, err := gen.WriteFile(base, gen.Options{Cards: *syncCards, Seed: 1}); err != nil {
		b.Fatal(err)
	}
	benchImport(b, db, base, 30)
	first := benchGeneration(b, db)

	b.Run("export", func(b *testing.B) {
		srv := startBenchServe(b, db)
		for _, enc := range []string{"identity", "gzip"} {
			b.Run(enc, func(b *testing.B) {
				// The first compressed download of a generation also learns
				// its chunks, which later ones reuse: timed on its own.
				start := time.Now()
				n, _ := srv.download(b, enc)
				first := time.Since(start)
				b.SetBytes(n)
				cpu0 := srv.cpu(b)
				var peak procfs.Mem
				for b.Loop() {
					_, m := srv.download(b, enc)
					peak.Max(m)
				}
				b.ReportMetric((srv.cpu(b)-cpu0).Seconds()/float64(b.N), "server-cpu-s/op")
				b.ReportMetric(float64(peak.Anon)/(1<<20), "peak-anon-MiB")
				b.ReportMetric(float64(peak.RSS)/(1<<20), "peak-rss-MiB")
				if enc == "gzip" {
					b.ReportMetric(first.Seconds(), "first-s")
				}
			})
		}
	})

	for f := range strings.SplitSeq(*syncTouch, ",") {
		pct, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || pct < 1 || pct > 100 {
			b.Fatalf("-sync-touch: %q is not a percentage from 1 to 100", f)
		}
		changed := filepath.Join(dir, fmt.Sprintf("touch%d.json", pct))
		benchTouchCards(b, base, changed, pct)
		touched := filepath.Join(dir, fmt.Sprintf("touch%d.db", pct))
		for _, history := range []int{0, 30} {
			b.Run(fmt.Sprintf("import/touch=%d%%/history=%d", pct, history), func(b *testing.B) {
				var cpu time.Duration
				for b.Loop() {
					b.StopTimer()
					benchCopyFile(b, db, touched)
					b.StartTimer()
					cpu += benchImport(b, touched, changed, history)
				}
				b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
			})
		}
		// The last import kept history: its changes since the first
		// generation are the ones a partner pages through.
		srv := startBenchServe(b, touched)
		for _, limit := range []int{500, 1000} {
			b.Run(fmt.Sprintf("changes/touch=%d%%/limit=%d", pct, limit), func(b *testing.B) {
				pages := 0
				for b.Loop() {
					pages += srv.changes(b, first, limit)
				}
				b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(pages), "µs/page")
				b.ReportMetric(float64(pages)/float64(b.N), "pages/op")
			})
		}
	}
}

// benchImport runs catalogd import of snapshot into db, keeping history
// generations, and returns its processor time.
func benchImport(b *testing.B, db, snapshot string, history int) time.Duration {
	b.Helper()
	cmd := benchCatalogd(b, "import", "--history", strconv.Itoa(history), "--db", db, snapshot)
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("import %s: %v\n%s", snapshot, err, out)
	}
	return cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
}

var (
	catalogdOnce sync.Once
	catalogdDir  string // holds catalogdBin, removed by TestMain
	catalogdBin  string
	catalogdErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if catalogdDir != "" {
		os.RemoveAll(catalogdDir)
	}
	os.Exit(code)
}

// buildCatalogd builds catalogd from the product module, once for the run:
// each benchmark calls it before it times anything.
func buildCatalogd(b *testing.B) string {
	b.Helper()
	catalogdOnce.Do(func() {
		if catalogdDir, catalogdErr = os.MkdirTemp("", "catalogd-bench-"); catalogdErr != nil {
			return
		}
		catalogdBin = filepath.Join(catalogdDir, "catalogd")
		catalogdErr = procfs.BuildCatalogd(context.Background(), catalogdBin)
	})
	if catalogdErr != nil {
		b.Fatalf("build catalogd: %v", catalogdErr)
	}
	return catalogdBin
}

// benchCatalogd is catalogd with args, in an environment without the
// CATALOGD_ variables of whoever runs the benchmarks.
func benchCatalogd(b *testing.B, args ...string) *exec.Cmd {
	return procfs.Command(context.Background(), buildCatalogd(b), args...)
}

func benchGeneration(b *testing.B, path string) string {
	db, err := store.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	return db.Generation()
}

// benchTouchCards writes the snapshot in with pct % of its cards changed: their
// rarity, which every answer about them carries.
func benchTouchCards(b *testing.B, in, out string, pct int) {
	raw, err := os.ReadFile(in)
	if err != nil {
		b.Fatal(err)
	}
	var snap struct {
		Sets  []json.RawMessage            `json:"sets"`
		Cards []map[string]json.RawMessage `json:"cards"`
	}
	if err := json.Unmarshal(raw, &snap); err != nil {
		b.Fatalf("read %s: %v", in, err)
	}
	for i, c := range snap.Cards {
		if i*pct/100 != (i+1)*pct/100 {
			c["rarity"] = json.RawMessage(`"Touched"`)
		}
	}
	if raw, err = json.Marshal(snap); err == nil {
		err = os.WriteFile(out, raw, 0o644)
	}
	if err != nil {
		b.Fatal(err)
	}
}

func benchCopyFile(b *testing.B, from, to string) {
	raw, err := os.ReadFile(from)
	if err == nil {
		err = os.WriteFile(to, raw, 0o644)
	}
	if err != nil {
		b.Fatal(err)
	}
}

// benchServe is catalogd serve --dev on 127.0.0.1, with its dev token.
type benchServe struct {
	*procfs.Process
	api, token string
	client     *http.Client
}

// startBenchServe starts serve on db and stops it when b ends.
func startBenchServe(b *testing.B, db string) *benchServe {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	s := &benchServe{
		api:    "http://" + addr + "/api/v1",
		client: &http.Client{Transport: &http.Transport{DisableCompression: true}},
	}
	if s.Process, err = procfs.Start(benchCatalogd(b, "serve", "--dev", "--db", db, "--addr", addr, "--base-url", s.api), nil); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Stop() })
	if err := s.WaitReady(b.Context(), addr, 20*time.Millisecond); err != nil {
		b.Fatalf("serve: %v", err)
	}
	tok, err := benchCatalogd(b, "token", "--db", db, "--base-url", s.api).Output()
	if err != nil {
		b.Fatalf("token: %v", err)
	}
	s.token = strings.TrimSpace(string(tok))
	return s
}

func (s *benchServe) cpu(b *testing.B) time.Duration {
	d, err := procfs.CPU(s.Pid())
	if err != nil {
		b.Fatal(err)
	}
	return d
}

func (s *benchServe) get(b *testing.B, path, encoding string) *http.Response {
	req, err := http.NewRequest(http.MethodGet, s.api+path, nil)
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+s.token)
	req.Header.Set("Accept-Encoding", encoding)
	resp, err := s.client.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		b.Fatalf("GET %s: %d %s", path, resp.StatusCode, body)
	}
	return resp
}

// download reads the export in encoding to the end and returns its bytes
// and the server's peak memory meanwhile.
func (s *benchServe) download(b *testing.B, encoding string) (int64, procfs.Mem) {
	resp := s.get(b, "/catalog/export", encoding)
	defer resp.Body.Close()
	mem := procfs.SampleMem(s.Pid())
	n, err := io.Copy(io.Discard, resp.Body)
	peak := mem.Stop()
	if err != nil {
		b.Fatal(err)
	}
	return n, peak
}

// changes pages through the changes since generation, limit at a time,
// and returns the number of pages.
func (s *benchServe) changes(b *testing.B, since string, limit int) int {
	after := ""
	for pages := 1; ; pages++ {
		q := url.Values{"since": {since}, "limit": {strconv.Itoa(limit)}}
		if after != "" {
			q.Set("after", after)
		}
		resp := s.get(b, "/catalog/changes?"+q.Encode(), "gzip")
		var page struct {
			Meta struct{ Next *string }
		}
		var body io.Reader = resp.Body
		var err error
		if resp.Header.Get("Content-Encoding") == "gzip" {
			body, err = gzip.NewReader(resp.Body)
		}
		if err == nil {
			err = json.NewDecoder(bufio.NewReader(body)).Decode(&page)
		}
		resp.Body.Close()
		if err != nil {
			b.Fatal(err)
		}
		if page.Meta.Next == nil {
			return pages
		}
		after = *page.Meta.Next
	}
}
