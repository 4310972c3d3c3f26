package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/catalogd/catalogd/tools/internal/procfs"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// row is one route in one mode, measured on both servers.
type row struct {
	route, traffic, mode string
	closed               bool
	minRatio             float64 // closed loop: least catalogd/ceiling throughput
	maxP99               time.Duration
	bodyBytes            int64 // mean answer
	res                  [2]driveResult
}

const (
	catalogd = 0
	ceiling  = 1
)

func (r *row) ratio() float64 {
	if c := r.res[ceiling].reqPerSec(); c > 0 {
		return r.res[catalogd].reqPerSec() / c
	}
	return 0
}

// check says whether the row meets its targets: the throughput ratio and
// p99 bound of a closed-loop row, and no errors on either server.
func (r *row) check() string {
	var miss []string
	if r.closed && r.ratio() < r.minRatio {
		miss = append(miss, "ratio")
	}
	if r.maxP99 > 0 && r.res[catalogd].P99 >= r.maxP99 {
		miss = append(miss, "p99")
	}
	if r.res[catalogd].Errors > 0 || r.res[ceiling].Errors > 0 {
		miss = append(miss, "errors")
	}
	switch {
	case len(miss) > 0:
		return "MISS " + strings.Join(miss, ", ")
	case r.closed:
		return "ok"
	}
	return "-"
}

// report is the whole comparison.
type report struct {
	cards, sets      int
	dbBytes          int64
	duration, warmup time.Duration
	readies          []time.Duration
	idle             procfs.Mem
	rows             []row
	requests         []route
	gzip             bool       // requests accepted gzip
	bareCeiling      bool       // the ceiling wrote Content-Type, Content-Encoding, and Content-Length over 2 KB only
	cgroup           *cgroupUse // of the memory cgroup catalogd served in; nil without a memory limit
}

func (rep *report) print(w io.Writer) {
	var reqs []string
	for _, r := range rep.requests {
		reqs = append(reqs, fmt.Sprintf("%s %s %d", r.traffic, r.name, len(r.targets)))
	}
	fmt.Fprintf(w, "\ncatalogue: %s cards, %s sets, file %.0f MB; distinct requests: %s\n",
		thousands(int64(rep.cards)), thousands(int64(rep.sets)), mb(rep.dbBytes), strings.Join(reqs, ", "))
	accepts := "no request accepts gzip"
	if rep.gzip {
		accepts = "every request accepts gzip (body bytes as sent)"
	}
	ceilingWrites := "the ceiling writes catalogd's header fields and body"
	if rep.bareCeiling {
		ceilingWrites = "the ceiling is bare (catalogd's body; of its header fields Content-Type, Content-Encoding, and Content-Length over 2 KB only)"
	}
	fmt.Fprintf(w, "each run: %s warm-up, %s measured; servers on CPU %s, load generator and catalogd's log sink on CPU %s; catalogd requests carry an RS256 token; %s; %s\n\n",
		rep.warmup, rep.duration, serverCPU, driverCPU, accepts, ceilingWrites)

	var rows [][]string
	for i := range rep.rows {
		r := &rep.rows[i]
		c, x := &r.res[catalogd], &r.res[ceiling]
		ratio, target := "-", "-"
		if r.closed {
			ratio, target = fmt.Sprintf("%.2f", r.ratio()), fmt.Sprintf("≥ %.2f", r.minRatio)
		}
		if r.maxP99 > 0 {
			target += ", p99 < " + fmtDur(r.maxP99)
		}
		rows = append(rows, []string{
			r.route, r.traffic, r.mode,
			thousands(int64(c.reqPerSec())), thousands(int64(x.reqPerSec())), ratio, target,
			fmtDur(c.P50), fmtDur(c.P99), fmtDur(x.P50), fmtDur(x.P99),
			fmt.Sprintf("%d / %d", c.Errors, x.Errors),
			fmt.Sprintf("%.1f", mb(c.Mem.RSS)), fmt.Sprintf("%.1f", mb(x.Mem.RSS)),
			r.check(),
		})
	}
	writeTable(w, []string{"route", "traffic", "mode", "catalogd req/s", "ceiling req/s", "ratio", "target",
		"catalogd p50", "catalogd p99", "ceiling p50", "ceiling p99", "errors c / x", "catalogd RSS MB", "ceiling RSS MB", "check"},
		[]bool{false, false, false, true, true, true, false, true, true, true, true, true, true, true, false}, rows)

	fmt.Fprintln(w)
	rows = rows[:0]
	for i := range rep.rows {
		r := &rep.rows[i]
		c, x := &r.res[catalogd], &r.res[ceiling]
		lag := "-"
		if !r.closed {
			lag = fmtDur(c.LagP99) + " / " + fmtDur(x.LagP99)
		}
		rows = append(rows, []string{
			r.route, r.traffic, r.mode, thousands(r.bodyBytes),
			fmt.Sprintf("%.0f%% / %.0f%%", 100*c.disturbance(), 100*x.disturbance()),
			fmt.Sprintf("%d / %d", c.Attempts, x.Attempts),
			pct(c.ServerCPU, c.Wall), pct(x.ServerCPU, x.Wall),
			fmtDur(c.cpuPerAnswer()) + " / " + fmtDur(x.cpuPerAnswer()),
			pct(c.DriverCPU, c.Wall) + " / " + pct(x.DriverCPU, x.Wall),
			fmt.Sprintf("%.1f", mb(c.Mem.Anon)), fmt.Sprintf("%.1f", mb(c.Mem.File)),
			fmt.Sprintf("%.3f", c.majorFaultsPerAnswer()), fmt.Sprintf("%.2f", c.minorFaultsPerAnswer()),
			fmtDur(c.Max) + " / " + fmtDur(x.Max),
			lag,
		})
	}
	writeTable(w, []string{"route", "traffic", "mode", "body bytes", "others' CPU c / x", "attempts c / x", "catalogd CPU", "ceiling CPU", "server CPU per answer c / x", "load CPU c / x (c: + log sink)",
		"catalogd RssAnon MB", "catalogd RssFile MB", "catalogd major faults per answer", "catalogd minor faults per answer", "max latency c / x", "send lag p99 c / x"},
		[]bool{false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true}, rows)

	var peak procfs.Mem
	for _, r := range rep.rows {
		peak.Max(r.res[catalogd].Mem)
	}
	fmt.Fprintf(w, "\ncatalogd serve ready in %s; RSS when ready %.1f MB\n", fmtDurs(rep.readies), mb(rep.idle.RSS))
	fmt.Fprintf(w, "catalogd peak RSS under load %.1f MB (RssAnon %.1f MB, RssFile %.1f MB, each at its own peak)\n",
		mb(peak.RSS), mb(peak.Anon), mb(peak.File))
	printDiskWait(w, "this catalogue", rep.rows)
	if cg := rep.cgroup; cg != nil {
		fmt.Fprintf(w, "catalogd served in a memory cgroup limited to %.0f MB, started with its binary and catalogue out of the page cache: peak charge %.1f MB (memory and page cache), limit reached %d times, processes killed %d\n",
			mb(cg.limit), mb(cg.peak), cg.limitHits, cg.oomKills)
	}
	var misses []string
	for _, r := range rep.rows {
		if c := r.check(); strings.HasPrefix(c, "MISS") {
			misses = append(misses, r.traffic+" "+r.route+" "+r.mode+" ("+strings.TrimPrefix(c, "MISS ")+")")
		}
	}
	if len(misses) == 0 {
		fmt.Fprintln(w, "targets: all met")
	} else {
		fmt.Fprintln(w, "targets missed:", strings.Join(misses, "; "))
	}
}

// writeTable writes a Markdown table with its columns padded, so that it
// reads in a terminal and pastes into a document.
func writeTable(w io.Writer, header []string, right []bool, rows [][]string) {
	width := make([]int, len(header))
	for i, h := range header {
		width[i] = max(len([]rune(h)), 3)
	}
	for _, r := range rows {
		for i, c := range r {
			width[i] = max(width[i], len([]rune(c)))
		}
	}
	line := func(cells []string) {
		var b strings.Builder
		b.WriteString("|")
		for i, c := range cells {
			pad := strings.Repeat(" ", width[i]-len([]rune(c)))
			if right[i] {
				b.WriteString(" " + pad + c + " |")
			} else {
				b.WriteString(" " + c + pad + " |")
			}
		}
		fmt.Fprintln(w, b.String())
	}
	line(header)
	sep := make([]string, len(header))
	for i := range sep {
		sep[i] = strings.Repeat("-", width[i])
		if right[i] {
			sep[i] = strings.Repeat("-", width[i]-1) + ":"
		}
	}
	line(sep)
	for _, r := range rows {
		line(r)
	}
}

// fmtDur shows a latency in microseconds below a millisecond, else in
// milliseconds.
func fmtDur(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return strconv.FormatInt(d.Microseconds(), 10) + " µs"
	case d < time.Second:
		return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond))
	}
	return fmt.Sprintf("%.2f s", d.Seconds())
}

// pct is part as a percentage of one CPU over whole.
func pct(part, whole time.Duration) string {
	if whole <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f%%", 100*part.Seconds()/whole.Seconds())
}

// thousands writes n with comma separators.
func thousands(n int64) string { return message.NewPrinter(language.English).Sprintf("%d", n) }
