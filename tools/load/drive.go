package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/catalogd/catalogd/tools/internal/procfs"
	"github.com/catalogd/catalogd/tools/internal/stats"
	"golang.org/x/sys/unix"
)

// The load generator runs in its own process on driverCPU: the harness
// starts it once per run with a drivePlan on its standard input and reads a
// driveResult from its standard output.

const (
	modeClosed = "closed" // Conns connections, each sending as soon as it has its answer
	modeOpen   = "open"   // Rate requests per second, whether answers keep up or not
)

type drivePlan struct {
	Addr     string
	Token    string
	Gzip     bool // requests carry Accept-Encoding: gzip
	Mode     string
	Conns    int
	Rate     float64 // open loop
	Warmup   time.Duration
	Duration time.Duration
	Targets  []driveTarget
}

// driveTarget is a request target and the length of its answer.
type driveTarget struct {
	URI string
	Len int64
}

// driveResult is what one run measured, from the end of the warm-up for
// Duration. Latencies are exact percentiles of every request counted.
type driveResult struct {
	Requests   int64 // answered, errors included
	Errors     int64 // transport errors, answers other than 200, bodies of the wrong length, requests not sent in time
	Window     time.Duration
	P50, P99   time.Duration
	Max        time.Duration
	LagP99     time.Duration // open loop: how late the requests left, at the 99th percentile
	FirstError string
	// Answered counts every answer of the run, warm-up included: the
	// answers the server's processor time over the run went to.
	Answered int64

	// Filled in by the harness.
	Mem       procfs.Mem    // the server's peak during the run
	ServerCPU time.Duration // the server's processor time during the run
	// ServerMajorFaults counts the pages the server waited for the disk
	// to read during the run: few, none of its catalogue's, when the file
	// stayed in the page cache. A run with many measured the disk as much
	// as catalogd.
	ServerMajorFaults uint64
	// ServerMinorFaults counts the pages the server mapped during the run
	// that were already in memory: pages of the file it had not touched
	// since it started, mostly.
	ServerMinorFaults uint64
	DriverCPU         time.Duration // the load generator's processor time
	Wall              time.Duration // the load generator's lifetime
	// Busy time of the server's and the load generator's CPUs that was
	// neither the server's nor the load generator's: other processes on a
	// shared machine.
	OtherServerCPU, OtherDriverCPU time.Duration
	Attempts                       int
}

// disturbance is the larger share of the run's wall time that other
// processes took on either CPU.
func (r *driveResult) disturbance() float64 {
	if r.Wall <= 0 {
		return 0
	}
	return max(r.OtherServerCPU, r.OtherDriverCPU).Seconds() / r.Wall.Seconds()
}

func (r *driveResult) reqPerSec() float64 {
	if r.Window <= 0 {
		return 0
	}
	return float64(r.Requests-r.Errors) / r.Window.Seconds()
}

// cpuPerAnswer is the server's processor time per answer over the whole
// run. Unlike the throughput it hardly moves when other processes take the
// server's CPU, so on a busy machine the ratio of two servers' figures
// still compares them.
func (r *driveResult) cpuPerAnswer() time.Duration {
	if r.Answered <= 0 {
		return 0
	}
	return r.ServerCPU / time.Duration(r.Answered)
}

// majorFaultsPerAnswer is the server's major faults per answer over the
// whole run.
func (r *driveResult) majorFaultsPerAnswer() float64 {
	if r.Answered <= 0 {
		return 0
	}
	return float64(r.ServerMajorFaults) / float64(r.Answered)
}

// minorFaultsPerAnswer is the server's minor faults per answer over the
// whole run.
func (r *driveResult) minorFaultsPerAnswer() float64 {
	if r.Answered <= 0 {
		return 0
	}
	return float64(r.ServerMinorFaults) / float64(r.Answered)
}

func (r *driveResult) summary() string {
	s := fmt.Sprintf("%8.0f req/s  p50 %-8s p99 %-8s errors %d  RSS %.1f MB  CPU %s/answer", r.reqPerSec(), fmtDur(r.P50), fmtDur(r.P99), r.Errors, mb(r.Mem.RSS), fmtDur(r.cpuPerAnswer()))
	if r.FirstError != "" {
		s += "  first error: " + r.FirstError
	}
	return s
}

// drive runs plan in a load generator pinned to driverCPU while sampling the
// server's memory and processor time. The processor time of the server's
// log sink, if it has one, counts as the load generator's: both run on
// driverCPU for the harness.
func drive(ctx context.Context, self string, plan drivePlan, server *procfs.Process, sink *logSink) (driveResult, error) {
	in, err := json.Marshal(plan)
	if err != nil {
		return driveResult{}, err
	}
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, "taskset", "-c", driverCPU, self, "drive")
	// GOMAXPROCS would override the CPU pinning.
	cmd.Env = procfs.ChildEnv("GOMAXPROCS=")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = bytes.NewReader(in), &out, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}

	pid := server.Pid()
	use0, err := procfs.ReadUsage(pid)
	if err != nil {
		return driveResult{}, fmt.Errorf("server: %w", err)
	}
	busy0, err1 := procfs.CPUBusy(serverCPU, driverCPU)
	sink0, err2 := sink.cpuOrZero()
	if err := errors.Join(err1, err2); err != nil {
		return driveResult{}, err
	}
	mem := procfs.SampleMem(pid)
	start := time.Now()
	err = cmd.Run()
	wall := time.Since(start)
	peak := mem.Stop()
	use1, cerr := procfs.ReadUsage(pid)
	busy1, err1 := procfs.CPUBusy(serverCPU, driverCPU)
	sink1, err2 := sink.cpuOrZero()
	if err != nil {
		return driveResult{}, fmt.Errorf("load generator: %w", err)
	}
	if err := errors.Join(cerr, err1, err2); err != nil {
		return driveResult{}, err
	}
	var res driveResult
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		return driveResult{}, fmt.Errorf("load generator: %w", err)
	}
	res.Mem, res.ServerCPU, res.Wall = peak, use1.CPU-use0.CPU, wall
	if use1.MajorFaults < use0.MajorFaults || use1.MinorFaults < use0.MinorFaults {
		return driveResult{}, fmt.Errorf("server: page faults went from %d major and %d minor to %d and %d during the run: not the same process", use0.MajorFaults, use0.MinorFaults, use1.MajorFaults, use1.MinorFaults)
	}
	res.ServerMajorFaults = use1.MajorFaults - use0.MajorFaults
	res.ServerMinorFaults = use1.MinorFaults - use0.MinorFaults
	res.DriverCPU = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime() + sink1 - sink0
	res.OtherServerCPU = max(0, busy1[0]-busy0[0]-res.ServerCPU)
	res.OtherDriverCPU = max(0, busy1[1]-busy0[1]-res.DriverCPU)
	return res, nil
}

// runDrive is the load generator's process.
func runDrive(stdin io.Reader, stdout io.Writer) error {
	var p drivePlan
	if err := json.NewDecoder(stdin).Decode(&p); err != nil {
		return err
	}
	if len(p.Targets) == 0 || p.Conns < 1 {
		return errors.New("nothing to send")
	}
	targets := prepare(p)
	var res driveResult
	var err error
	switch p.Mode {
	case modeClosed:
		res, err = closedLoop(p, targets)
	case modeOpen:
		res, err = openLoop(p, targets)
	default:
		err = fmt.Errorf("mode %q", p.Mode)
	}
	if err != nil {
		return err
	}
	return json.NewEncoder(stdout).Encode(res)
}

// preparedTarget is a request ready to write.
type preparedTarget struct {
	raw  []byte
	want int64
}

// prepare writes every request once. catalogd and the ceiling get the same
// bytes: the ceiling ignores the token and Accept-Encoding, but reads the
// headers like catalogd.
func prepare(p drivePlan) []preparedTarget {
	accept := ""
	if p.Gzip {
		accept = "\r\nAccept-Encoding: gzip"
	}
	out := make([]preparedTarget, len(p.Targets))
	for i, t := range p.Targets {
		out[i] = preparedTarget{
			raw: []byte("GET " + t.URI + " HTTP/1.1\r\nHost: " + p.Addr +
				"\r\nAuthorization: Bearer " + p.Token + accept +
				"\r\nUser-Agent: catalogd-load\r\n\r\n"),
			want: t.Len,
		}
	}
	return out
}

// tally is what one connection counted in the measured window, and the
// answers it had in all.
type tally struct {
	lat, lag         []time.Duration
	requests, errors int64
	firstError       string
	answered         int64
}

func (t *tally) add(lat time.Duration, err error) {
	t.lat = append(t.lat, lat)
	t.requests++
	if err != nil {
		t.errors++
		if t.firstError == "" {
			t.firstError = err.Error()
		}
	}
}

// errorPause keeps a connection that fails from spinning.
const errorPause = time.Millisecond

// dialAll opens the connections before the clock starts.
func dialAll(p drivePlan, deadline time.Time) ([]*client, error) {
	cs := make([]*client, p.Conns)
	for i := range cs {
		cs[i] = &client{addr: p.Addr, deadline: deadline}
		if err := cs[i].dial(); err != nil {
			for _, c := range cs[:i] {
				c.close()
			}
			return nil, err
		}
	}
	return cs, nil
}

// closedLoop keeps each connection busy: it sends the next request as soon
// as the answer to the last one is read. Connection i starts at its own
// place in the targets and goes round them. A request counts when its answer
// arrives within the window.
func closedLoop(p drivePlan, targets []preparedTarget) (driveResult, error) {
	start := time.Now()
	measure := start.Add(p.Warmup)
	end := measure.Add(p.Duration)
	clients, err := dialAll(p, end.Add(30*time.Second))
	if err != nil {
		return driveResult{}, err
	}
	// Enough room for about 100,000 answers a second without growing.
	perConn := int(p.Duration.Seconds()*100_000)/p.Conns + 1024
	tallies := make([]tally, p.Conns)
	var wg sync.WaitGroup
	for i, c := range clients {
		wg.Go(func() {
			defer c.close()
			t := &tallies[i]
			t.lat = make([]time.Duration, 0, perConn)
			next := i * len(targets) / len(clients)
			for {
				sent := time.Now()
				if !sent.Before(end) {
					return
				}
				err := c.do(&targets[next])
				if next++; next == len(targets) {
					next = 0
				}
				t.answered++
				done := time.Now()
				if !done.Before(measure) && done.Before(end) {
					t.add(done.Sub(sent), err)
				}
				if err != nil {
					time.Sleep(errorPause)
				}
			}
		})
	}
	wg.Wait()
	return merge(tallies, p.Duration), nil
}

// openLoop sends Rate requests a second, request i due at start + i/Rate,
// whatever the answers do: a pacer hands each due request to an idle
// connection, and its latency runs from when it was due, so time spent
// waiting for a free connection counts (no coordinated omission).
//
// Go's timers wake up to a millisecond late when the process is idle, which
// would add up to a millisecond to every latency. The pacer therefore sleeps
// in nanosleep on its own thread, with the thread's timer slack at 1 ns, and
// the process gets a second P so the connections' goroutines run while the
// pacer sleeps. The pacer spends its time asleep, so both share the one CPU.
func openLoop(p drivePlan, targets []preparedTarget) (driveResult, error) {
	if p.Rate <= 0 {
		return driveResult{}, errors.New("open loop needs a rate")
	}
	runtime.GOMAXPROCS(2)
	interval := time.Duration(float64(time.Second) / p.Rate)
	start := time.Now().Add(10 * time.Millisecond)
	measure := start.Add(p.Warmup)
	end := measure.Add(p.Duration)
	// A request not sent within giveUp of being due is counted as an error
	// and never sent, so a server that falls behind cannot stretch the run.
	const giveUp = time.Second
	clients, err := dialAll(p, end.Add(giveUp+30*time.Second))
	if err != nil {
		return driveResult{}, err
	}

	type job struct {
		i   int
		due time.Time
	}
	jobs := make(chan job)
	perConn := int(p.Duration.Seconds()*p.Rate)/p.Conns + 1024
	tallies := make([]tally, p.Conns)
	var wg sync.WaitGroup
	for k, c := range clients {
		wg.Go(func() {
			defer c.close()
			t := &tallies[k]
			t.lat = make([]time.Duration, 0, perConn)
			t.lag = make([]time.Duration, 0, perConn)
			for j := range jobs {
				counted := !j.due.Before(measure)
				sent := time.Now()
				if sent.Sub(j.due) > giveUp {
					if counted {
						t.add(sent.Sub(j.due), errors.New("not sent within 1 s of its time: the server fell behind"))
					}
					continue
				}
				err := c.do(&targets[j.i%len(targets)])
				t.answered++
				done := time.Now()
				if counted {
					t.add(done.Sub(j.due), err)
					t.lag = append(t.lag, sent.Sub(j.due))
				}
				if err != nil {
					time.Sleep(errorPause)
				}
			}
		})
	}

	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		// The kernel may wake this thread 1 ns late from a sleep, not 50 µs.
		unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0)
		for i := 0; ; i++ {
			due := start.Add(time.Duration(i) * interval)
			if !due.Before(end) {
				break
			}
			sleepUntil(due)
			jobs <- job{i, due}
		}
		close(jobs)
	}()
	<-done
	wg.Wait()
	return merge(tallies, p.Duration), nil
}

// sleepUntil sleeps in the kernel, not on Go's timers.
func sleepUntil(t time.Time) {
	for {
		d := time.Until(t)
		if d <= 0 {
			return
		}
		ts := syscall.NsecToTimespec(int64(d))
		syscall.Nanosleep(&ts, nil)
	}
}

func merge(tallies []tally, window time.Duration) driveResult {
	var all, lag []time.Duration
	res := driveResult{Window: window}
	for _, t := range tallies {
		all = append(all, t.lat...)
		lag = append(lag, t.lag...)
		res.Requests += t.requests
		res.Errors += t.errors
		res.Answered += t.answered
		if res.FirstError == "" {
			res.FirstError = t.firstError
		}
	}
	slices.Sort(all)
	slices.Sort(lag)
	res.P50, res.P99 = stats.Percentile(all, 0.50), stats.Percentile(all, 0.99)
	if len(all) > 0 {
		res.Max = all[len(all)-1]
	}
	res.LagP99 = stats.Percentile(lag, 0.99)
	return res
}
