package main

import (
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/catalogd/catalogd/tools/internal/stats"
)

// The growth allowed between the second minute and the last, comparing the
// averages of the samples of each. The first minute is left out: it still
// has the connection serve opens to the identity provider to fetch its
// signing keys (a descriptor and two goroutines), which closes after 90 s
// idle.
// Anonymous memory moves with the garbage collector's cycle by a few MiB,
// hence the floor.
const (
	anonTolerancePercent = 10
	anonToleranceFloor   = 4 << 20 // bytes
	goroutineTolerance   = 10
	fdTolerance          = 4
)

// report is everything the summary is made of.
type report struct {
	o           options
	interrupted bool
	start       time.Time     // of traffic
	elapsed     time.Duration // of traffic

	initial sample   // before traffic
	samples []sample // during traffic
	rest    sample   // after it

	tally   *tally
	conns   *connLog
	first   importResult
	imports []importResult
	log     *serverLog

	stopTook time.Duration
	stopErr  error
}

// window is the samples whose interval ends in (from, to].
func (r *report) window(from, to time.Duration) []sample {
	var out []sample
	for _, s := range r.samples {
		if s.err == nil && s.at > from && s.at <= to {
			out = append(out, s)
		}
	}
	return out
}

func avg(ss []sample, f func(sample) float64) float64 {
	if len(ss) == 0 {
		return 0
	}
	var sum float64
	for _, s := range ss {
		sum += f(s)
	}
	return sum / float64(len(ss))
}

// slope is the least-squares slope of f over the samples, per minute.
func slope(ss []sample, f func(sample) float64) float64 {
	if len(ss) < 2 {
		return 0
	}
	var sx, sy, sxx, sxy float64
	for _, s := range ss {
		x, y := s.at.Minutes(), f(s)
		sx, sy, sxx, sxy = sx+x, sy+y, sxx+x*x, sxy+x*y
	}
	n := float64(len(ss))
	d := n*sxx - sx*sx
	if d == 0 {
		return 0
	}
	return (n*sxy - sx*sy) / d
}

// write prints the summary and returns whether the soak passed.
func (r *report) write(w io.Writer) bool {
	var fails []string
	fail := func(format string, args ...any) { fails = append(fails, fmt.Sprintf(format, args...)) }
	t := r.tally
	t.mu.Lock()
	defer t.mu.Unlock()

	fmt.Fprintf(w, "\nsummary\n")
	tot := t.total
	var kinds []string
	for k, n := range t.byKind {
		kinds = append(kinds, fmt.Sprintf("%s %d", kindNames[k], n))
	}
	fmt.Fprintf(w, "  traffic      %d requests in %s (%.1f/s): %s\n", tot.requests, r.elapsed.Round(time.Second),
		float64(tot.requests)/r.elapsed.Seconds(), strings.Join(kinds, ", "))
	fmt.Fprintf(w, "  answers      200: %d, 304: %d, failed: %d, never sent (sender %s behind): %d\n",
		tot.ok, tot.notModified, tot.failed, maxBehind, tot.dropped)
	if tot.failed+tot.dropped > 0 {
		fail("%d requests failed or were never sent", tot.failed+tot.dropped)
		for _, k := range slices.Sorted(maps.Keys(t.failedBy)) {
			fmt.Fprintf(w, "    %6d  %s\n", t.failedBy[k], k)
		}
		fmt.Fprintf(w, "    the first %d:\n", len(t.failures))
		for _, a := range t.failures {
			fmt.Fprintf(w, "    - at %s GET %s (X-Request-Id %s, %s after it was due): %s\n",
				clock(a.due.Sub(r.start)), a.req.path, a.requestID, round(a.latency), a.problem)
			if a.generation != "" {
				fmt.Fprintf(w, "      Catalog-Generation %s\n", a.generation)
			}
			if a.body != "" {
				fmt.Fprintf(w, "      %s\n", strings.TrimSpace(a.body))
			}
		}
	}
	repeats := t.cond304 + t.condNewer + t.condSame
	fmt.Fprintf(w, "  repeats      %d good answers with If-None-Match: %d were 304, %d were 200 from a newer generation, %d were 200 from the tag's own generation\n",
		repeats, t.cond304, t.condNewer, t.condSame)
	opened, closes := r.conns.before(r.start.Add(r.elapsed))
	fmt.Fprintf(w, "  connections  %d opened for %d workers; %d closed during traffic; %d answers asked to close\n",
		opened, r.o.conns, len(closes), t.connCloses)
	for i, c := range closes {
		if i == keepLines {
			fmt.Fprintf(w, "    ...\n")
			break
		}
		fmt.Fprintf(w, "    - %s\n", c)
	}
	all := slices.Sorted(slices.Values(tot.latencies))
	fmt.Fprintf(w, "  latency      p50 %.1f ms, p90 %.1f ms, p99 %.1f ms, p99.9 %.1f ms, max %.1f ms (from when each request was due)\n",
		ms(stats.Percentile(all, 0.50)), ms(stats.Percentile(all, 0.90)), ms(stats.Percentile(all, 0.99)), ms(stats.Percentile(all, 0.999)), ms(stats.Percentile(all, 1)))
	for k, lat := range t.kindLatencies {
		if len(lat) == 0 {
			continue
		}
		lat = slices.Sorted(slices.Values(lat))
		fmt.Fprintf(w, "    %-14s %7d answers: p50 %.1f ms, p99 %.1f ms, max %.1f ms\n",
			kindNames[k], len(lat), ms(stats.Percentile(lat, 0.50)), ms(stats.Percentile(lat, 0.99)), ms(stats.Percentile(lat, 1)))
	}
	var protos []string
	for _, p := range slices.Sorted(maps.Keys(t.protos)) {
		protos = append(protos, fmt.Sprintf("%s %d", p, t.protos[p]))
	}
	fmt.Fprintf(w, "  protocols    %s\n", strings.Join(protos, ", "))

	// Imports and reloads.
	okImports, reloaded, late := 0, 0, 0
	var slowest, longest time.Duration
	for _, im := range r.imports {
		if im.err != nil {
			continue
		}
		okImports++
		longest = max(longest, im.took)
		if im.reloaded {
			reloaded++
			slowest = max(slowest, im.reloadedIn)
			if im.reloadedIn > reloadPromise {
				late++
			}
		}
	}
	expected := r.o.imports()
	fmt.Fprintf(w, "  imports      %d of %d done (%d failed), the longest %s\n", okImports, expected, len(r.imports)-okImports, round(longest))
	fmt.Fprintf(w, "  reloads      %d of %d imports picked up, the slowest %s after its import (%d later than %s); metrics: %.0f successful, %.0f failed; log: %d \"catalogue reloaded\"\n",
		reloaded, okImports, round(slowest), late, reloadPromise, r.rest.reloads, r.rest.reloadFailures, r.log.reloaded())
	fmt.Fprintf(w, "  generations  %d answered (the first import and %d more)\n", len(t.generations), okImports)
	if !r.interrupted && len(r.imports) < expected {
		fail("%d imports of %d were made", len(r.imports), expected)
	}
	if okImports < len(r.imports) {
		fail("%d imports failed", len(r.imports)-okImports)
	}
	if reloaded < okImports || int(r.rest.reloads) != okImports || r.rest.reloadFailures > 0 {
		fail("reloads: %d of %d imports seen within %s; the metrics count %.0f successful and %.0f failed",
			reloaded, okImports, reloadWait, r.rest.reloads, r.rest.reloadFailures)
	}
	if len(t.generations) != okImports+1 {
		fail("%d generations answered, want %d", len(t.generations), okImports+1)
	}
	r.checkMarks(w, fail)

	// Memory, goroutines, descriptors.
	win := min(time.Minute, r.elapsed/4)
	first, second, last := r.window(0, win), r.window(win, 2*win), r.window(r.elapsed-win, r.elapsed+time.Second)
	names := fmt.Sprintf("first %s, second %s, last %s", win, win, win)
	if win == time.Minute {
		names = "first minute, second minute, last minute"
	}
	fmt.Fprintf(w, "  windows      averages of the samples of the %s (%d, %d and %d samples)\n", names, len(first), len(second), len(last))
	rss := func(s sample) float64 { return float64(s.rss) }
	anon := func(s sample) float64 { return float64(s.anon) }
	file := func(s sample) float64 { return float64(s.file) }
	heap := func(s sample) float64 { return s.heap }
	gor := func(s sample) float64 { return s.goroutines }
	fds := func(s sample) float64 { return float64(s.fds) }
	fmt.Fprintf(w, "  rss total    %.1f, %.1f, %.1f MiB; at rest %.1f MiB\n",
		avg(first, rss)/(1<<20), avg(second, rss)/(1<<20), avg(last, rss)/(1<<20), mib(r.rest.rss))
	fmt.Fprintf(w, "  rss file     %.1f, %.1f, %.1f MiB; at rest %.1f MiB\n",
		avg(first, file)/(1<<20), avg(second, file)/(1<<20), avg(last, file)/(1<<20), mib(r.rest.file))
	after := r.window(win, r.elapsed+time.Second)
	a2, aN := avg(second, anon), avg(last, anon)
	anonTol := max(a2*anonTolerancePercent/100, anonToleranceFloor)
	fmt.Fprintf(w, "  rss anon     %.1f, %.1f, %.1f MiB; at rest %.1f MiB; last vs second %+.1f MiB (%+.1f%%), tolerance +%.1f MiB (%d%%, at least %d MiB); trend %+.2f MiB/min\n",
		avg(first, anon)/(1<<20), a2/(1<<20), aN/(1<<20), mib(r.rest.anon), (aN-a2)/(1<<20), pct(aN, a2),
		anonTol/(1<<20), anonTolerancePercent, anonToleranceFloor>>20, slope(after, anon)/(1<<20))
	fmt.Fprintf(w, "  heap in use  %.1f, %.1f, %.1f MiB; at rest %.1f MiB; trend %+.2f MiB/min\n",
		avg(first, heap)/(1<<20), avg(second, heap)/(1<<20), avg(last, heap)/(1<<20), r.rest.heap/(1<<20), slope(after, heap)/(1<<20))
	g2, gN := avg(second, gor), avg(last, gor)
	fmt.Fprintf(w, "  goroutines   start %.0f; %.1f, %.1f, %.1f; at rest %.0f; tolerance +%d\n",
		r.initial.goroutines, avg(first, gor), g2, gN, r.rest.goroutines, goroutineTolerance)
	f2, fN := avg(second, fds), avg(last, fds)
	fmt.Fprintf(w, "  open fds     start %d; %.1f, %.1f, %.1f; at rest %d; tolerance +%d\n",
		r.initial.fds, avg(first, fds), f2, fN, r.rest.fds, fdTolerance)
	fmt.Fprintf(w, "  catalogues   at rest %d mapped, %d open (start %d, %d); the most during traffic %d mapped, %d open\n",
		r.rest.mapped, r.rest.catalogueFDs, r.initial.mapped, r.initial.catalogueFDs,
		maxOf(r.samples, func(s sample) int { return s.mapped }), maxOf(r.samples, func(s sample) int { return s.catalogueFDs }))
	if len(second) == 0 || len(last) == 0 {
		fail("too few samples to compare the second and the last %s", win)
	} else {
		if aN-a2 > anonTol {
			fail("anonymous memory grew by %.1f MiB, more than %.1f MiB", (aN-a2)/(1<<20), anonTol/(1<<20))
		}
		if gN-g2 > goroutineTolerance {
			fail("goroutines grew by %.1f, more than %d", gN-g2, goroutineTolerance)
		}
		if fN-f2 > fdTolerance {
			fail("open descriptors grew by %.1f, more than %d", fN-f2, fdTolerance)
		}
	}
	if r.rest.err != nil {
		fail("the server's state at rest could not be read: %v", r.rest.err)
	} else if r.rest.mapped != 1 || r.rest.catalogueFDs != 1 {
		fail("at rest %d catalogue files are mapped and %d open, want 1 and 1: a replaced catalogue was not closed",
			r.rest.mapped, r.rest.catalogueFDs)
	}
	if n := countErrs(r.samples); n > 0 {
		fail("the server's state could not be read %d times", n)
	}

	// The server's own account.
	l := r.log
	l.mu.Lock()
	var statuses []string
	for _, s := range slices.Sorted(maps.Keys(l.statuses)) {
		statuses = append(statuses, fmt.Sprintf("%d: %d", s, l.statuses[s]))
	}
	fmt.Fprintf(w, "  server log   %d lines: %d access lines (%s); %d WARN, %d ERROR, %d not JSON\n",
		l.lines, l.requests, strings.Join(statuses, ", "), l.levels["WARN"], l.levels["ERROR"], l.levels["TEXT"])
	inServer := slices.Sorted(slices.Values(l.durations))
	fmt.Fprintf(w, "  in server    p50 %.2f ms, p99 %.2f ms, p99.9 %.2f ms, max %.1f ms (the access log's durations)\n",
		ms(stats.Percentile(inServer, 0.50)), ms(stats.Percentile(inServer, 0.99)), ms(stats.Percentile(inServer, 0.999)), ms(stats.Percentile(inServer, 1)))
	for _, line := range l.notable {
		fmt.Fprintf(w, "    %s\n", line)
	}
	for _, line := range l.failures {
		fmt.Fprintf(w, "    %s\n", line)
	}
	if n := l.requests - l.statuses[http.StatusOK] - l.statuses[http.StatusNotModified]; n > 0 {
		fail("the server logged %d answers other than 200 and 304", n)
	}
	if l.levels["ERROR"] > 0 {
		fail("the server logged %d errors", l.levels["ERROR"])
	}
	stopped := l.stopped
	l.mu.Unlock()

	if r.stopErr != nil {
		fmt.Fprintf(w, "  shutdown     %v\n", r.stopErr)
		fail("shutdown: %v", r.stopErr)
	} else {
		fmt.Fprintf(w, "  shutdown     SIGTERM: exit status 0 after %s; \"stopped\" logged: %t\n", round(r.stopTook), stopped)
		if !stopped {
			fail("no \"stopped\" line in the server's log")
		}
	}
	if r.interrupted {
		fail("interrupted")
	}

	if len(fails) == 0 {
		fmt.Fprintf(w, "\nPASS\n")
		return true
	}
	fmt.Fprintf(w, "\nFAIL\n")
	for _, f := range fails {
		fmt.Fprintf(w, "  - %s\n", f)
	}
	return false
}

// checkMarks checks that every card answer came from the catalogue its
// Catalog-Generation header names: its set name carries the mark of the
// import that made that generation.
func (r *report) checkMarks(w io.Writer, fail func(string, ...any)) {
	importOf := map[string]int{r.first.generation: r.first.n}
	for _, im := range r.imports {
		if im.err == nil {
			importOf[im.generation] = im.n
		}
	}
	checked, wrong := 0, 0
	for _, g := range slices.Sorted(maps.Keys(r.tally.marks)) {
		want, known := importOf[g]
		for _, mark := range slices.Sorted(maps.Keys(r.tally.marks[g])) {
			n := r.tally.marks[g][mark]
			checked += n
			switch {
			case !known:
				wrong += n
				fail("%d card answers from generation %q, which no import made", n, g)
			case mark != want:
				wrong += n
				fail("%d card answers from generation %s (import %d) hold the set names of import %d", n, g, want, mark)
			}
		}
	}
	fmt.Fprintf(w, "  content      %d card answers checked: %d from a catalogue other than the generation they name\n", checked, wrong)
}

func pct(v, base float64) float64 {
	if base == 0 {
		return 0
	}
	return 100 * (v - base) / base
}

func maxOf(ss []sample, f func(sample) int) int {
	m := 0
	for _, s := range ss {
		m = max(m, f(s))
	}
	return m
}

func countErrs(ss []sample) int {
	n := 0
	for _, s := range ss {
		if s.err != nil {
			n++
		}
	}
	return n
}
