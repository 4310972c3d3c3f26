package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/catalogd/catalogd/tools/internal/procfs"
)

// restDelay is how long the soak waits after the last answer before it
// samples the server at rest.
const restDelay = 3 * time.Second

// printer writes lines from several goroutines.
type printer struct {
	mu sync.Mutex
	w  io.Writer
}

func (p *printer) printf(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, format, args...)
}

func (p *printer) sample(sm sample) {
	p.mu.Lock()
	defer p.mu.Unlock()
	sm.print(p.w)
}

// run makes one soak and reports whether it passed; an error means the soak
// could not be made.
func run(ctx context.Context, o options, out io.Writer) (passed bool, err error) {
	p := &printer{w: out}
	dir, err := os.MkdirTemp("", "catalogd-soak-")
	if err != nil {
		return false, err
	}
	keep := o.keep
	defer func() {
		if keep || err != nil {
			p.printf("kept %s\n", dir)
		} else {
			os.RemoveAll(dir)
		}
	}()

	bin := filepath.Join(dir, "catalogd")
	if err := procfs.BuildCatalogd(ctx, bin); err != nil {
		return false, fmt.Errorf("build catalogd: %w", err)
	}
	version, _ := procfs.Command(ctx, bin, "version").Output()
	p.printf("catalogd   %s on %d CPUs (load %s), %s\n", strings.TrimSpace(string(version)), runtime.NumCPU(), loadAvg(), dir)

	c := &catalogue{bin: bin, dir: dir, db: filepath.Join(dir, "catalog.db"), churnCards: o.churnCards(), seed: o.seed}
	t0 := time.Now()
	if c.core, err = writeCore(filepath.Join(dir, "core.json"), o.cards, o.seed); err != nil {
		return false, err
	}
	p.printf("core       %d sets, %d cards (seed %d), generated in %s; churn parts of %d cards (seeds %d+)\n",
		len(c.core.sets), len(c.core.cards), o.seed, round(time.Since(t0)), c.churnCards, o.seed+1)
	first := c.importN(ctx, 0)
	if first.err != nil {
		return false, fmt.Errorf("first import: %w\n%s", first.err, first.output)
	}
	p.printf("first      import 0: core + churn of %d sets, %d cards (seed %d); written in %s, imported in %s; generation %s\n",
		first.churnSets, first.churnCards, first.seed, round(first.prepare), round(first.took), first.generation)

	srv, err := startServer(ctx, bin, c.db, dir, filepath.Join(dir, "serve.log"))
	if err != nil {
		return false, err
	}
	defer func() {
		if !srv.Exited() {
			srv.Kill()
		}
		srv.idp.Close()
	}()
	metricsClient := &http.Client{Timeout: 5 * time.Second}
	smp := &sampler{pid: srv.Pid(), db: c.db, metrics: srv.metrics, client: metricsClient}
	p.printf("serving    %s (pid %d), metrics %s\n", srv.api, srv.Pid(), srv.metrics)
	p.printf("traffic    %.0f requests/s over %d connections for %s; an import every %s (%d in all)\n\n",
		o.rate, o.conns, o.duration, o.reimport, o.imports())

	tr := &traffic{api: srv.api, roots: srv.roots, token: srv.token, runID: runID(), picker: &picker{core: c.core, since: first.generation}, tally: newTally()}
	start := time.Now().Add(100 * time.Millisecond)
	end := start.Add(o.duration)
	initial := smp.take(ctx, 0, 0, counts{})
	p.printf("%s", sampleHeader)
	p.sample(initial)

	var (
		mu      sync.Mutex
		imports []importResult
		samples []sample
		okDone  int // successful imports so far
		wg      sync.WaitGroup
	)
	wg.Go(func() {
		for n := 1; n <= o.imports(); n++ {
			if !sleepUntil(ctx, start.Add(time.Duration(n)*o.reimport)) {
				return
			}
			res := c.importN(ctx, n)
			res.at = time.Since(start)
			if res.err == nil {
				mu.Lock()
				okDone++
				want := okDone
				mu.Unlock()
				res.reloadedIn, res.reloaded = waitReload(ctx, metricsClient, srv.metrics, want)
			}
			mu.Lock()
			imports = append(imports, res)
			mu.Unlock()
			p.printf("%8s  %s\n", clock(res.at), res)
		}
	})
	record := func(sm sample) {
		mu.Lock()
		sm.imports = okDone
		samples = append(samples, sm)
		mu.Unlock()
		p.sample(sm)
	}
	sampling := make(chan struct{})
	wg.Go(func() {
		defer close(sampling)
		for k := 1; ; k++ {
			at := time.Duration(k) * o.every
			if at > o.duration || !sleepUntil(ctx, start.Add(at)) {
				return
			}
			record(smp.take(ctx, at, o.every, tr.tally.take()))
		}
	})
	wg.Go(func() { tr.downloads(ctx, start, end) })
	tr.run(ctx, start, end, o.rate, o.conns, o.seed)
	elapsed := min(time.Since(start), end.Sub(start))
	<-sampling
	mu.Lock()
	lastAt := time.Duration(0)
	if len(samples) > 0 {
		lastAt = samples[len(samples)-1].at
	}
	mu.Unlock()
	// The answers to the last requests sent come in after the last sample:
	// they are in the totals, and get a line of their own only when they
	// cover more than a moment or hold a failure.
	if rest, at := tr.tally.take(), time.Since(start); at-lastAt > time.Second || rest.failed+rest.dropped > 0 {
		record(smp.take(ctx, at, at-lastAt, rest))
	}
	wg.Wait()

	tr.closeConns()
	sleepUntil(ctx, time.Now().Add(restDelay))
	rest := smp.take(context.WithoutCancel(ctx), time.Since(start), 0, counts{})
	rest.imports = okDone
	p.printf("at rest, %s after the last answer:\n", restDelay)
	p.sample(rest)

	var stopTook time.Duration
	var stopErr error
	if srv.Exited() {
		stopErr = fmt.Errorf("catalogd exited before SIGTERM: %v", srv.Err())
	} else {
		t := time.Now()
		stopErr = srv.Stop()
		stopTook = time.Since(t)
	}
	<-srv.Done()

	r := report{
		o: o, interrupted: ctx.Err() != nil, start: start, elapsed: elapsed,
		initial: initial, samples: samples, rest: rest,
		tally: tr.tally, conns: tr.conns,
		first: first, imports: imports, log: srv.log,
		stopTook: stopTook, stopErr: stopErr,
	}
	passed = r.write(out)
	if !passed {
		keep = true
	}
	return passed, nil
}

// sleepUntil waits until t and reports whether ctx is still live.
func sleepUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// runID prefixes the request ids of a soak, so that its lines in the
// server's log are easy to find.
func runID() string {
	b := make([]byte, 4)
	rand.Read(b)
	return "soak-" + hex.EncodeToString(b)
}

// loadAvg is the system's load averages over 1, 5 and 15 minutes.
func loadAvg() string {
	avg, err := procfs.LoadAvg()
	if err != nil {
		return "unknown"
	}
	return strings.Join(avg[:], " ")
}
