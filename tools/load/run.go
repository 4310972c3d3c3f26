package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"time"

	"github.com/catalogd/catalogd/tools/internal/idp"
	"github.com/catalogd/catalogd/tools/internal/procfs"
	"github.com/catalogd/catalogd/tools/internal/stats"
)

const (
	apiPath  = "/api/v1"
	clientID = "catalogd-load" // the client the harness's token is for
)

// The CPUs of the comparison: each server alone on one, the load generator
// on the other.
const (
	serverCPU = "0"
	driverCPU = "1"
)

// run is the whole comparison.
func run(ctx context.Context, o options) (err error) {
	if _, err := exec.LookPath("taskset"); err != nil {
		return errors.New("taskset (util-linux) is needed to pin the servers and the load generator to their CPUs")
	}
	if o.perfDir != "" {
		if _, err := exec.LookPath("perf"); err != nil {
			return errors.New("-perf needs perf (linux-perf) on the PATH")
		}
		if err := os.MkdirAll(o.perfDir, 0o755); err != nil {
			return err
		}
	}
	if runtime.NumCPU() < 2 {
		return fmt.Errorf("needs 2 CPUs (one for the server, one for the load generator), this process may use %d", runtime.NumCPU())
	}
	dir, err := os.MkdirTemp("", "catalogd-load-")
	if err != nil {
		return err
	}
	if o.keep {
		fmt.Fprintln(os.Stderr, "working directory", dir)
	} else {
		defer os.RemoveAll(dir)
	}

	// The ceiling and the load generator are this command's own roles, built
	// like catalogd (go run leaves out the symbol table perf reads).
	bin, self := filepath.Join(dir, "catalogd"), filepath.Join(dir, "load")
	if err := procfs.BuildCatalogd(ctx, bin); err != nil {
		return fmt.Errorf("build catalogd: %w", err)
	}
	if err := procfs.Build(ctx, self, "./load"); err != nil {
		return fmt.Errorf("build the load harness: %w", err)
	}

	var on measuredOn
	if o.summary != "" {
		if err := checkSummaryFile(o.summary); err != nil {
			return fmt.Errorf("-summary: %w", err)
		}
		if on, err = describeRun(ctx); err != nil {
			return err
		}
	}
	dbs := o.dbs
	if len(dbs) == 0 {
		dbs = []string{""} // a generated catalogue
	}
	var sizes []sized
	for i, db := range dbs {
		one := o
		one.db = db
		rep, err := runOne(ctx, one, filepath.Join(dir, strconv.Itoa(i)), bin, self)
		if err != nil {
			return err
		}
		sizes = append(sizes, sized{cards: rep.cards, rows: rep.rows})
	}
	if len(sizes) > 1 {
		printSizes(os.Stdout, sizes)
	}
	if o.summary != "" {
		return writeSummary(o.summary, summaryTable(sizes, on))
	}
	return nil
}

// runOne is the comparison on one catalogue, its files in dir: the
// generated one, or o.db.
func runOne(ctx context.Context, o options, dir, bin, self string) (rep report, err error) {
	if err := os.Mkdir(dir, 0o755); err != nil {
		return rep, err
	}
	src, err := prepareCatalogue(ctx, o, dir, bin)
	if err != nil {
		return rep, err
	}

	addr, err := procfs.FreeAddr()
	if err != nil {
		return rep, err
	}
	provider, err := idp.Start(addr, clientID)
	if err != nil {
		return rep, err
	}
	defer provider.Close()
	token := provider.Token
	serveArgs := append([]string{"serve", "--db", src.path, "--addr", addr}, provider.ServeFlags()...)
	serveArgs = append(serveArgs, o.serveArgs...)
	catLog := filepath.Join(dir, "catalogd.log")
	sink, err := startLogSink(catLog)
	if err != nil {
		return rep, err
	}
	defer func() {
		// The servers have stopped (deferred below); a sink that failed
		// lost log lines.
		if serr := sink.close(); serr != nil && err == nil {
			err = fmt.Errorf("log sink: %w", serr)
		}
	}()

	var cg *memCgroup
	if o.memoryLimit > 0 {
		if cg, err = newMemCgroup(o.memoryLimit); err != nil {
			return rep, err
		}
		// Runs after catalogd's stop, deferred below: the cgroup must be
		// empty to go. catalogd is its only process, so a kill is catalogd's
		// and is why the run failed.
		defer func() {
			if u, uerr := cg.use(); err != nil && uerr == nil && u.oomKills > 0 {
				err = fmt.Errorf("%w (the %d MiB memory limit killed catalogd)", err, cg.limit>>20)
			}
			if rerr := cg.remove(); rerr != nil {
				logf("memory cgroup: %v", rerr)
			}
		}()
	}

	// Time to ready: each start but the last is stopped at once; the last
	// one serves the load. With a memory limit every timed start is
	// stopped, and one more serves from the cgroup, untimed: it starts
	// with catalogd's binary and catalogue dropped from the page cache, so
	// that the cgroup is charged for every page of them it reads.
	var readies []time.Duration
	var cat *procfs.Process
	for i := range o.starts {
		p, ready, err := startReady(ctx, addr, nil, sink.w, bin, serveArgs...)
		if err != nil {
			return rep, fmt.Errorf("catalogd serve: %w (log: %s)", err, catLog)
		}
		readies = append(readies, ready)
		if i < o.starts-1 || cg != nil {
			if err := p.Stop(); err != nil {
				return rep, fmt.Errorf("catalogd serve: %w", err)
			}
			continue
		}
		cat = p
	}
	if cg != nil {
		for _, path := range []string{bin, src.path} {
			if err := evictPageCache(path); err != nil {
				return rep, err
			}
		}
		if cat, _, err = startReady(ctx, addr, cg, sink.w, bin, serveArgs...); err != nil {
			return rep, fmt.Errorf("catalogd serve in the memory cgroup: %w (log: %s)", err, catLog)
		}
	}
	defer cat.Stop()
	idle, err := procfs.ReadMem(cat.Pid())
	if err != nil {
		return rep, fmt.Errorf("catalogd's memory when ready: %w", err)
	}
	logf("catalogd ready in %s (%d starts), RSS when ready %.1f MB", fmtDurs(readies), len(readies), mb(idle.RSS))

	routes, err := fetchTargets(ctx, "http://"+addr, token, src.smp, o.seed, o.gzip, o.traffic, o.routes)
	if err != nil {
		return rep, err
	}
	bodies := filepath.Join(dir, "bodies.bin")
	if err := writeBodies(bodies, routes, o.bareCeiling); err != nil {
		return rep, err
	}
	ceilAddr, err := procfs.FreeAddr()
	if err != nil {
		return rep, err
	}
	ceilLog, err := os.Create(filepath.Join(dir, "ceiling.log"))
	if err != nil {
		return rep, err
	}
	defer ceilLog.Close()
	ceil, _, err := startReady(ctx, ceilAddr, nil, ceilLog, self, "ceiling", "-addr", ceilAddr, "-bodies", bodies)
	if err != nil {
		return rep, fmt.Errorf("ceiling: %w (log: %s)", err, ceilLog.Name())
	}
	defer ceil.Stop()

	servers := [2]target{{name: "catalogd", addr: addr, proc: cat, sink: sink}, {name: "ceiling", addr: ceilAddr, proc: ceil}}
	rows, err := compare(ctx, &o, self, token, routes, servers)
	if err != nil {
		return rep, err
	}
	rep = report{
		cards: src.cards, sets: src.sets, dbBytes: src.bytes,
		duration: o.duration, warmup: o.warmup,
		readies: readies, idle: idle, rows: rows,
		requests: routes, gzip: o.gzip, bareCeiling: o.bareCeiling,
	}
	if cg != nil {
		// A peak and counts of events: what the whole run left in them.
		use, err := cg.use()
		if err != nil {
			return rep, fmt.Errorf("memory cgroup: %w", err)
		}
		rep.cgroup = &use
	}
	rep.print(os.Stdout)
	// A server that crashed or did not stop cleanly fails the run, even
	// after the figures are out.
	var errs []error
	for _, s := range servers {
		if err := s.proc.Stop(); err != nil {
			errs = append(errs, fmt.Errorf("stopping %s: %w", s.name, err))
		}
	}
	return rep, errors.Join(errs...)
}

// compare measures every route in every mode on both servers, one server
// after the other.
func compare(ctx context.Context, o *options, self, token string, routes []route, servers [2]target) ([]row, error) {
	var rows []row
	for _, rt := range routes {
		minRatio, maxP99 := goal(rt.traffic, rt.name)
		for _, n := range o.conns {
			r := row{route: rt.name, traffic: rt.traffic, mode: strconv.Itoa(n) + " conns", closed: true, minRatio: minRatio, bodyBytes: rt.meanBody()}
			if n == p99Conns {
				r.maxP99 = maxP99
			}
			for i, s := range servers {
				plan := drivePlan{Addr: s.addr, Token: token, Gzip: o.gzip, Mode: modeClosed, Conns: n, Warmup: o.warmup, Duration: o.duration, Targets: rt.driveTargets()}
				perfData := ""
				if o.perfDir != "" {
					perfData = filepath.Join(o.perfDir, fmt.Sprintf("%s-%s-%s-%d.perf.data", s.name, rt.traffic, rt.name, n))
				}
				var err error
				if r.res[i], err = measure(ctx, self, plan, s, o, rt.traffic+" "+rt.name+" "+r.mode, perfData); err != nil {
					return nil, err
				}
			}
			rows = append(rows, r)
		}
		rate := openRate(o.rate, rows, rt.traffic, rt.name)
		r := row{route: rt.name, traffic: rt.traffic, mode: fmt.Sprintf("open %.0f/s", rate), bodyBytes: rt.meanBody()}
		for i, s := range servers {
			plan := drivePlan{Addr: s.addr, Token: token, Gzip: o.gzip, Mode: modeOpen, Conns: o.openConns, Rate: rate, Warmup: o.warmup, Duration: o.duration, Targets: rt.driveTargets()}
			var err error
			if r.res[i], err = measure(ctx, self, plan, s, o, rt.traffic+" "+rt.name+" "+r.mode, ""); err != nil {
				return nil, err
			}
		}
		rows = append(rows, r)
	}
	return rows, nil
}

// target is one of the two servers under comparison.
type target struct {
	name string
	addr string
	proc *procfs.Process
	sink *logSink // nil when the server's output goes straight to a file
}

// quiet is how much of either CPU other processes may take during a run
// before it is measured again.
const quiet = 0.10

// measure runs plan against s, again when other processes took more than
// quiet of either CPU, up to o.attempts times, and keeps the least disturbed
// run. Each attempt first waits up to o.quietWait for the CPUs to be quiet.
//
// With perfData set, perf records the server's stacks during each attempt
// into that file.
func measure(ctx context.Context, self string, plan drivePlan, s target, o *options, what, perfData string) (driveResult, error) {
	var best driveResult
	for a := 1; a <= o.attempts; a++ {
		if err := waitQuiet(ctx, o.quietWait); err != nil {
			return driveResult{}, err
		}
		var perf *exec.Cmd
		// Each attempt records into its own file; the kept attempt's
		// becomes perfData.
		attemptData := fmt.Sprintf("%s.%d", perfData, a)
		if perfData != "" {
			secs := strconv.FormatFloat((plan.Warmup + plan.Duration).Seconds(), 'f', 1, 64)
			perf = exec.CommandContext(ctx, "perf", "record", "-q", "-g", "-F", "999", "-p", strconv.Itoa(s.proc.Pid()), "-o", attemptData, "--", "sleep", secs)
			perf.Stderr = os.Stderr
			if err := perf.Start(); err != nil {
				return driveResult{}, fmt.Errorf("perf: %w", err)
			}
		}
		res, err := drive(ctx, self, plan, s.proc, s.sink)
		if perf != nil {
			if perr := perf.Wait(); perr != nil && err == nil {
				err = fmt.Errorf("perf: %w", perr)
			}
		}
		if err != nil {
			return driveResult{}, fmt.Errorf("%s on %s: %w", what, s.name, err)
		}
		logf("%-34s %-8s %s  others %.0f%%", what, s.name, res.summary(), 100*res.disturbance())
		if a == 1 || res.disturbance() < best.disturbance() {
			best = res
			if perf != nil {
				if err := os.Rename(attemptData, perfData); err != nil {
					return driveResult{}, fmt.Errorf("perf: %w", err)
				}
			}
		}
		if perf != nil {
			os.Remove(attemptData) // an attempt not kept
		}
		best.Attempts = a
		if best.disturbance() < quiet {
			break
		}
	}
	return best, nil
}

// waitQuiet waits until other processes take less than quiet of each CPU
// over half a second, or maxWait has passed.
func waitQuiet(ctx context.Context, maxWait time.Duration) error {
	const window = 500 * time.Millisecond
	start := time.Now()
	for {
		b0, err1 := procfs.CPUBusy(serverCPU, driverCPU)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(window):
		}
		b1, err2 := procfs.CPUBusy(serverCPU, driverCPU)
		if err := errors.Join(err1, err2); err != nil {
			return err
		}
		busy := max(b1[0]-b0[0], b1[1]-b0[1]).Seconds() / window.Seconds()
		if busy < quiet {
			return nil
		}
		if time.Since(start) > maxWait {
			logf("other processes keep %.0f%% of a CPU busy; measuring anyway", 100*busy)
			return nil
		}
	}
}

// openRate is the rate of a route's open-loop run: the rate asked for, but
// at most half of the slower server's best closed-loop rate, so that both
// can sustain it and the percentiles measure latency rather than a queue.
func openRate(want float64, rows []row, traffic, route string) float64 {
	var best [2]float64
	for _, r := range rows {
		if r.route != route || r.traffic != traffic || !r.closed {
			continue
		}
		for i := range r.res {
			best[i] = max(best[i], r.res[i].reqPerSec())
		}
	}
	rate := min(want, best[catalogd]/2, best[ceiling]/2)
	if rate >= 100 {
		return float64(int(rate/100) * 100)
	}
	return max(1, float64(int(rate)))
}

// fmtDurs is the median of ds with its range.
func fmtDurs(ds []time.Duration) string {
	s := slices.Sorted(slices.Values(ds))
	med := stats.Percentile(s, 0.5)
	if len(s) == 1 {
		return fmtDur(med)
	}
	return fmt.Sprintf("%s (median; %s to %s)", fmtDur(med), fmtDur(s[0]), fmtDur(s[len(s)-1]))
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
}

func mb(n int64) float64              { return float64(n) / (1 << 20) }
func since(t time.Time) time.Duration { return time.Since(t).Round(time.Millisecond) }
