// Package procfs is what the benchmark harnesses, and the benchmarks that
// run catalogd as a process, share about the processes they start: building
// catalogd, running it in an environment free of the caller's catalogd
// settings, and reading what they measure of those processes from Linux's
// /proc, through github.com/prometheus/procfs.
package procfs

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/procfs"
)

// Mem is the resident memory of a process (/proc/PID/status): all of it,
// and its anonymous and file-backed parts, in bytes. A catalogue file
// mapped into memory counts in File for the pages that were read.
type Mem struct {
	RSS, Anon, File int64
}

// Max keeps the larger of each figure.
func (m *Mem) Max(o Mem) {
	m.RSS, m.Anon, m.File = max(m.RSS, o.RSS), max(m.Anon, o.Anon), max(m.File, o.File)
}

// ReadMem reads the resident memory of process pid.
func ReadMem(pid int) (Mem, error) {
	p, err := procfs.NewProc(pid)
	if err != nil {
		return Mem{}, err
	}
	st, err := p.NewStatus()
	if err != nil {
		return Mem{}, fmt.Errorf("memory of process %d: %w", pid, err)
	}
	if st.VmRSS == 0 {
		return Mem{}, fmt.Errorf("memory of process %d: no VmRSS", pid)
	}
	return Mem{RSS: int64(st.VmRSS), Anon: int64(st.RssAnon), File: int64(st.RssFile)}, nil
}

// CPU is the processor time process pid has used, user and system
// (/proc/PID/stat).
func CPU(pid int) (time.Duration, error) {
	u, err := ReadUsage(pid)
	return u.CPU, err
}

// Usage is what a process has used so far: processor time, user and
// system, and page faults. A major fault is a page it waited for the disk
// to read: a server whose catalogue file is in the page cache makes none
// for the file; its binary's pages, or swap, may still make a few. A minor
// fault maps a page that was already in memory, the first time the
// process touches it (or again, once the kernel has unmapped it): no disk,
// but a trap into the kernel, a few microseconds each.
type Usage struct {
	CPU         time.Duration
	MajorFaults uint64
	MinorFaults uint64
}

// ReadUsage reads the usage of process pid (/proc/PID/stat).
func ReadUsage(pid int) (Usage, error) {
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		return Usage{}, err
	}
	return usage(fs, pid)
}

func usage(fs procfs.FS, pid int) (Usage, error) {
	p, err := fs.Proc(pid)
	if err != nil {
		return Usage{}, err
	}
	st, err := p.Stat()
	if err != nil {
		return Usage{}, fmt.Errorf("usage of process %d: %w", pid, err)
	}
	return Usage{CPU: seconds(st.CPUTime()), MajorFaults: uint64(st.MajFlt), MinorFaults: uint64(st.MinFlt)}, nil
}

// CPUBusy is the time each of the numbered CPUs has spent running tasks
// (user, nice, system) or taken by the hypervisor (steal), from one
// reading of /proc/stat. Interrupt time is left out: the loopback network's
// work lands there, whoever caused it.
func CPUBusy(cpus ...string) ([]time.Duration, error) {
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		return nil, err
	}
	st, err := fs.Stat()
	if err != nil {
		return nil, err
	}
	busy := make([]time.Duration, len(cpus))
	for i, c := range cpus {
		n, err := strconv.ParseInt(c, 10, 64)
		s, ok := st.CPU[n]
		if err != nil || !ok {
			return nil, fmt.Errorf("/proc/stat: no cpu%s", c)
		}
		busy[i] = seconds(s.User + s.Nice + s.System + s.Steal)
	}
	return busy, nil
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// LoadAvg is the system's load averages over 1, 5 and 15 minutes, as
// /proc/loadavg writes them.
func LoadAvg() ([3]string, error) {
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		return [3]string{}, err
	}
	avg, err := fs.LoadAvg()
	if err != nil {
		return [3]string{}, err
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }
	return [3]string{f(avg.Load1), f(avg.Load5), f(avg.Load15)}, nil
}

// ChildEnv is this process's environment without catalogd's own settings
// (CATALOGD_*), which would add to the flags a harness gives, and without
// the variables named by the other prefixes given.
func ChildEnv(dropPrefixes ...string) []string {
	drop := append([]string{"CATALOGD_"}, dropPrefixes...)
	var env []string
next:
	for _, kv := range os.Environ() {
		for _, p := range drop {
			if strings.HasPrefix(kv, p) {
				continue next
			}
		}
		env = append(env, kv)
	}
	return env
}

// Product is the module path of catalogd, which the tools module requires
// from the directory above it.
const Product = "github.com/catalogd/catalogd"

// BuildCatalogd builds catalogd into the file out in the product module's
// own directory, with its go.mod and go.sum: the binary as it ships, not as
// the tools module's requirements would build it. It runs from anywhere
// within the tools module. The compiler's messages go to stderr.
func BuildCatalogd(ctx context.Context, out string) error {
	dir, err := moduleDir(ctx, Product)
	if err != nil {
		return err
	}
	return build(ctx, out, dir, ".")
}

// Build builds the command in pkg, a directory relative to the tools
// module's root ("./load"), into the file out. It runs from anywhere within
// the tools module. The compiler's messages go to stderr.
func Build(ctx context.Context, out, pkg string) error {
	dir, err := moduleDir(ctx, "")
	if err != nil {
		return err
	}
	return build(ctx, out, dir, pkg)
}

func build(ctx context.Context, out, dir, pkg string) error {
	out, err := filepath.Abs(out)
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, pkg)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build %s in %s: %w", pkg, dir, err)
	}
	return nil
}

// moduleDir is the directory of the module path as the go command resolves
// it from the current directory, where the replace directive of the tools
// module points catalogd; "" is the main module, the tools module itself.
func moduleDir(ctx context.Context, path string) (string, error) {
	args := []string{"list", "-m", "-f", "{{.Dir}}"}
	if path != "" {
		args = append(args, path)
	}
	var stderr strings.Builder
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	dir := strings.TrimSpace(string(out))
	if err != nil || dir == "" {
		return "", fmt.Errorf("go list -m %s (run from within the tools module, tools/): %v %s", path, err, strings.TrimSpace(stderr.String()))
	}
	return dir, nil
}

// Command runs the catalogd binary bin with args in the environment of
// ChildEnv, so that a CATALOGD_ variable in the caller's shell (say
// CATALOGD_DRY_RUN) changes nothing the harness measures. The process is
// killed if ctx ends first.
func Command(ctx context.Context, bin string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = ChildEnv()
	return cmd
}

// Import is catalogd import of snapshots into the catalogue file db, run
// like Command.
func Import(ctx context.Context, bin, db string, snapshots ...string) *exec.Cmd {
	return Command(ctx, bin, append([]string{"import", "--db", db}, snapshots...)...)
}

// OpenFiles counts the open descriptors of process pid, and among them
// those on a file whose path starts with prefix.
func OpenFiles(pid int, prefix string) (fds, matching int, err error) {
	p, err := procfs.NewProc(pid)
	if err != nil {
		return 0, 0, err
	}
	targets, err := p.FileDescriptorTargets()
	for _, t := range targets {
		if strings.HasPrefix(t, prefix) {
			matching++
		}
	}
	return len(targets), matching, err
}

// MappedFiles counts the distinct files whose path starts with prefix (a
// file renamed over since counts apart) that process pid has mapped.
func MappedFiles(pid int, prefix string) (int, error) {
	p, err := procfs.NewProc(pid)
	if err != nil {
		return 0, err
	}
	maps, err := p.ProcMaps()
	if err != nil {
		return 0, err
	}
	files := map[[2]uint64]bool{}
	for _, m := range maps {
		if strings.HasPrefix(m.Pathname, prefix) {
			files[[2]uint64{m.Dev, m.Inode}] = true
		}
	}
	return len(files), nil
}

// MemSampler records the peak resident memory of a process.
type MemSampler struct {
	stop, done chan struct{}
	peak       Mem
}

// SampleMem reads the memory of process pid every 10 ms, which costs the
// process nothing and the caller a few microseconds a time, until Stop.
func SampleMem(pid int) *MemSampler {
	s := &MemSampler{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for {
			if m, err := ReadMem(pid); err == nil {
				s.peak.Max(m)
			}
			select {
			case <-s.stop:
				return
			case <-t.C:
			}
		}
	}()
	return s
}

// Stop ends the sampling and returns the peaks.
func (s *MemSampler) Stop() Mem {
	close(s.stop)
	<-s.done
	return s.peak
}

// Process is a server a harness started: its exit is watched, and Stop
// tells a clean stop from a crash.
type Process struct {
	cmd  *exec.Cmd
	done chan struct{} // closed once the process has exited
	err  error         // how it exited, once done is closed

	stopOnce sync.Once
	stopErr  error // what the first Stop found
}

// stopGrace is how long Stop waits after SIGTERM: catalogd's own shutdown
// grace is 20 s.
const stopGrace = 30 * time.Second

// Start starts cmd, which gets SIGKILL should the harness die first.
// beforeWait, when not nil, runs before the process is waited for: reading
// its pipes to the end, which exec.Cmd.Wait needs done first.
func Start(cmd *exec.Cmd, beforeWait func()) (*Process, error) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &Process{cmd: cmd, done: make(chan struct{})}
	go func() {
		if beforeWait != nil {
			beforeWait()
		}
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// FreeAddr asks the kernel for a loopback port that is free now. Another
// process could take it before the server listens; then the start fails and
// says so.
func FreeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// Pid is the process's id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Done is closed once the process has exited; Err then says how.
func (p *Process) Done() <-chan struct{} { return p.done }

// Err is how the process exited, once Done is closed.
func (p *Process) Err() error { return p.err }

// Exited reports whether the process has exited.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// WaitReady polls the server's http://addr/readyz every poll until it
// answers 200. It fails if the process exits first, ctx ends, or 30 s pass,
// and then stops the process.
func (p *Process) WaitReady(ctx context.Context, addr string, poll time.Duration) error {
	return p.WaitReadyAt(ctx, "http://"+addr+"/readyz", &http.Transport{DisableKeepAlives: true}, poll)
}

// WaitReadyAt is WaitReady for a server whose /readyz is at url, asked
// through transport (one that trusts its certificate, for HTTPS).
func (p *Process) WaitReadyAt(ctx context.Context, url string, transport *http.Transport, poll time.Duration) error {
	client := &http.Client{Transport: transport, Timeout: time.Second}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if resp, err := client.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-p.done:
			return fmt.Errorf("exited before it was ready: %v", p.err)
		case <-ctx.Done():
			p.Stop()
			return ctx.Err()
		case <-time.After(poll):
		}
		if time.Now().After(deadline) {
			p.Stop()
			return errors.New("not ready after 30 s")
		}
	}
}

// Kill kills the process and waits for it.
func (p *Process) Kill() {
	p.cmd.Process.Kill()
	<-p.done
}

// Stop sends SIGTERM and waits; after stopGrace, SIGKILL. A process that
// had exited before, whatever its status, or that exits with a status other
// than 0, did not stop cleanly; one that SIGTERM ends (a server that does
// not catch it) did. Every call returns what the first one found.
func (p *Process) Stop() error {
	p.stopOnce.Do(func() { p.stopErr = p.terminate() })
	return p.stopErr
}

func (p *Process) terminate() error {
	if p.Exited() {
		if p.err == nil {
			return errors.New("exited with status 0 before it was stopped")
		}
		return fmt.Errorf("exited before it was stopped: %w", p.err)
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(stopGrace):
		p.Kill()
		return fmt.Errorf("did not stop within %s of SIGTERM", stopGrace)
	}
	if ee, ok := errors.AsType[*exec.ExitError](p.err); ok && ee.Exited() && ee.ExitCode() != 0 {
		return fmt.Errorf("exited with status %d", ee.ExitCode())
	}
	return nil
}
