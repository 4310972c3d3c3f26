package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"time"

	"github.com/catalogd/catalogd/tools/internal/procfs"
	"github.com/catalogd/catalogd/tools/internal/stats"
)

// sample is the server's state at one moment and the traffic of the
// interval before it.
type sample struct {
	at   time.Duration // since traffic started
	span time.Duration // of the interval the counts cover
	counts
	p50, p99 time.Duration
	cpu      float64 // of one core, over the interval

	rss, anon, file int64 // bytes
	heap            float64
	goroutines      float64
	fds             int
	catalogueFDs    int // descriptors on catalogue files
	mapped          int // catalogue files mapped
	reloads         float64
	reloadFailures  float64
	imports         int // done by then
	load            string
	err             error // reading the server's state
}

// sampler reads the server's state.
type sampler struct {
	pid     int
	db      string
	metrics string
	client  *http.Client

	lastCPU  time.Duration // of CPU used by the server
	lastTime time.Time
}

func (s *sampler) take(ctx context.Context, at, span time.Duration, c counts) sample {
	sm := sample{at: at, span: span, counts: c}
	// The interval's latencies are this sample's own (tally.take).
	slices.Sort(c.latencies)
	sm.p50, sm.p99 = stats.Percentile(c.latencies, 0.50), stats.Percentile(c.latencies, 0.99)
	sm.latencies = nil

	now := time.Now()
	if cpu, err := procfs.CPU(s.pid); err == nil {
		if !s.lastTime.IsZero() {
			sm.cpu = 100 * (cpu - s.lastCPU).Seconds() / now.Sub(s.lastTime).Seconds()
		}
		s.lastCPU, s.lastTime = cpu, now
	}
	mem, err := procfs.ReadMem(s.pid)
	if err != nil {
		sm.err = err
		return sm
	}
	sm.rss, sm.anon, sm.file = mem.RSS, mem.Anon, mem.File
	if sm.fds, sm.catalogueFDs, err = procfs.OpenFiles(s.pid, s.db); err != nil {
		sm.err = err
		return sm
	}
	if sm.mapped, err = procfs.MappedFiles(s.pid, s.db); err != nil {
		sm.err = err
		return sm
	}
	m, err := scrape(ctx, s.client, s.metrics)
	if err != nil {
		sm.err = err
		return sm
	}
	sm.heap = m["go_memstats_heap_inuse_bytes"]
	sm.goroutines = m["go_goroutines"]
	sm.reloads, sm.reloadFailures = m[reloadsOK], m[reloadsFailed]
	if avg, err := procfs.LoadAvg(); err == nil {
		sm.load = avg[0]
	}
	return sm
}

const sampleHeader = "" +
	"    time    reqs  req/s   200   304 fail   p50ms   p99ms  cpu%   rss  anon  file  heap   gor  fds  dbfd dbmap  reloads  load\n" +
	"                                                                 MiB   MiB   MiB   MiB\n"

func (sm sample) print(w io.Writer) {
	if sm.err != nil {
		fmt.Fprintf(w, "%8s  %6d  %5s  %4d  %4d %4d  %6.1f  %6.1f  server state unreadable: %v\n",
			clock(sm.at), sm.requests, "", sm.ok, sm.notModified, sm.failed+sm.dropped, ms(sm.p50), ms(sm.p99), sm.err)
		return
	}
	fmt.Fprintf(w, "%8s  %6d  %5.1f  %4d  %4d %4d  %6.1f  %6.1f  %4.0f  %4.0f  %4.0f  %4.0f  %4.1f  %4.0f  %3d  %4d  %4d  %3.0f/%-3d  %s\n",
		clock(sm.at), sm.requests, sm.rate(), sm.ok, sm.notModified, sm.failed+sm.dropped, ms(sm.p50), ms(sm.p99), sm.cpu,
		mib(sm.rss), mib(sm.anon), mib(sm.file), sm.heap/(1<<20), sm.goroutines, sm.fds, sm.catalogueFDs, sm.mapped,
		sm.reloads, sm.imports, sm.load)
}

func (sm sample) rate() float64 {
	if sm.span <= 0 {
		return 0
	}
	return float64(sm.requests) / sm.span.Seconds()
}

func clock(d time.Duration) string {
	d = d.Round(time.Second)
	return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
func mib(b int64) float64        { return float64(b) / (1 << 20) }
