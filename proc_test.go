package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// childEnv is this process's environment without catalogd's own settings
// (CATALOGD_*), which would add to the flags a test gives its catalogd,
// and with a temporary directory of the test's own.
func childEnv(t *testing.T) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CATALOGD_") && !strings.HasPrefix(kv, "TMPDIR=") {
			env = append(env, kv)
		}
	}
	// What the child leaves in its temporary directory (serve --dev's
	// sample, when a test kills it) goes with the test.
	return append(env, "TMPDIR="+t.TempDir())
}

// endsWithTheTest makes cmd's process end with the test binary's: one that
// times out or is killed leaves no serve or import of its own running.
func endsWithTheTest(cmd *exec.Cmd) *exec.Cmd {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	return cmd
}

// procMem is the resident memory of a process, in bytes: all of it (VmRSS)
// and its anonymous part (RssAnon), from /proc/PID/status.
type procMem struct{ rss, anon int64 }

// readProcMem reads the resident memory of process pid.
func readProcMem(pid int) (procMem, error) {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return procMem{}, err
	}
	defer f.Close()
	var m procMem
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		key, value, _ := strings.Cut(sc.Text(), ":")
		var field *int64
		switch key {
		case "VmRSS":
			field = &m.rss
		case "RssAnon":
			field = &m.anon
		default:
			continue
		}
		kB, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(value), " kB"), 10, 64)
		if err != nil {
			return procMem{}, fmt.Errorf("memory of process %d: %s: %w", pid, key, err)
		}
		*field = kB << 10
	}
	if err := sc.Err(); err != nil {
		return procMem{}, fmt.Errorf("memory of process %d: %w", pid, err)
	}
	if m.rss == 0 {
		return procMem{}, fmt.Errorf("memory of process %d: no VmRSS", pid)
	}
	return m, nil
}
