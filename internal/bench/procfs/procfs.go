// Package procfs is what the benchmark harnesses, and the tests that run
// catalogd as a process, share about the processes they start: building
// catalogd, running it in an environment free of the caller's catalogd
// settings, and reading what they measure of those processes from Linux's
// /proc.
package procfs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
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
	path := "/proc/" + strconv.Itoa(pid) + "/status"
	b, err := os.ReadFile(path)
	if err != nil {
		return Mem{}, err
	}
	var m Mem
	for line := range strings.SplitSeq(string(b), "\n") {
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		var dst *int64
		switch name {
		case "VmRSS":
			dst = &m.RSS
		case "RssAnon":
			dst = &m.Anon
		case "RssFile":
			dst = &m.File
		default:
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(value), " kB"), 10, 64)
		if err != nil {
			return Mem{}, fmt.Errorf("%s: %s: %w", path, line, err)
		}
		*dst = kb << 10
	}
	if m.RSS == 0 {
		return Mem{}, fmt.Errorf("%s: no VmRSS", path)
	}
	return m, nil
}

// clockTick is the unit of the times in /proc/PID/stat and /proc/stat:
// USER_HZ, 100 on every Linux platform Go supports.
const clockTick = 10 * time.Millisecond

// CPU is the processor time process pid has used, user and system
// (/proc/PID/stat).
func CPU(pid int) (time.Duration, error) {
	path := "/proc/" + strconv.Itoa(pid) + "/stat"
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	d, err := statCPU(b)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	return d, nil
}

// statCPU reads utime and stime from the contents of a /proc/PID/stat.
func statCPU(b []byte) (time.Duration, error) {
	// The command name, in parentheses, may hold spaces and parentheses:
	// count fields after the last closing parenthesis. utime and stime
	// are fields 14 and 15.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, errors.New("no command name")
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, errors.New("too short")
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, err
	}
	return time.Duration(utime+stime) * clockTick, nil
}

// CPUBusy is the time each of the numbered CPUs has spent running tasks
// (user, nice, system) or taken by the hypervisor (steal), from one
// reading of /proc/stat. Interrupt time is left out: the loopback network's
// work lands there, whoever caused it.
func CPUBusy(cpus ...string) ([]time.Duration, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return nil, err
	}
	busy := make([]time.Duration, len(cpus))
	for i, cpu := range cpus {
		if busy[i], err = cpuBusy(string(b), cpu); err != nil {
			return nil, err
		}
	}
	return busy, nil
}

// cpuBusy reads CPU cpu's busy time from the text of /proc/stat.
func cpuBusy(stat, cpu string) (time.Duration, error) {
	prefix := "cpu" + cpu + " "
	for line := range strings.Lines(stat) {
		if !strings.HasPrefix(line, prefix) {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 9 {
			break
		}
		var ticks int64
		for _, i := range []int{1, 2, 3, 8} { // user nice system steal
			v, err := strconv.ParseInt(f[i], 10, 64)
			if err != nil {
				return 0, fmt.Errorf("/proc/stat: %w", err)
			}
			ticks += v
		}
		return time.Duration(ticks) * clockTick, nil
	}
	return 0, fmt.Errorf("/proc/stat: no cpu%s", cpu)
}

// LoadAvg is the system's load averages over 1, 5 and 15 minutes, as
// /proc/loadavg writes them.
func LoadAvg() ([3]string, error) {
	var avg [3]string
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return avg, err
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return avg, fmt.Errorf("/proc/loadavg: %q", b)
	}
	copy(avg[:], f)
	return avg, nil
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
