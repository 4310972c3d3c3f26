// Package procfs is what the benchmark harnesses, and the tests that run
// catalogd as a process, share about the processes they start: building
// catalogd, running it in an environment free of the caller's catalogd
// settings, and reading what they measure of those processes from Linux's
// /proc, through github.com/prometheus/procfs.
package procfs

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
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
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		return 0, err
	}
	return cpu(fs, pid)
}

func cpu(fs procfs.FS, pid int) (time.Duration, error) {
	p, err := fs.Proc(pid)
	if err != nil {
		return 0, err
	}
	st, err := p.Stat()
	if err != nil {
		return 0, fmt.Errorf("processor time of process %d: %w", pid, err)
	}
	return seconds(st.CPUTime()), nil
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

// Build builds the command in pkg, a directory relative to the repository
// root, where the harnesses run ("." is catalogd), into the file out. The
// compiler's messages go to stderr.
func Build(ctx context.Context, out, pkg string) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, pkg)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build %s (run from the repository root): %w", pkg, err)
	}
	return nil
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
