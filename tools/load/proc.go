package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/catalogd/catalogd/tools/internal/procfs"
	"golang.org/x/sys/unix"
)

// startPinned starts name with args on cpu, its output going to log, and
// in cg when it is not nil.
func startPinned(cpu string, cg *memCgroup, log *os.File, name string, args ...string) (*procfs.Process, error) {
	argv := append([]string{"taskset", "-c", cpu, name}, args...)
	if cg != nil {
		// A shell moves itself into the cgroup and then becomes the
		// server, so that the server is charged from its first page on.
		argv = append([]string{"sh", "-c", `echo $$ >"$0" && exec "$@"`, cg.procs()}, argv...)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = procfs.ChildEnv("GOMAXPROCS=")
	cmd.Stdout, cmd.Stderr = log, log
	// The shell and taskset execute the server in their own process, so the
	// process's id is the server's.
	return procfs.Start(cmd, nil)
}

// logSink collects a server's output the way journald or a container
// runtime does in production: the server writes into a pipe, and another
// process, pinned to driverCPU, appends it to the log file. Writing the
// file from the server's own process would bill the server for the file
// system's appends (on this VM about 1 µs of each catalogd request), which
// a deployed catalogd never pays: it only ever writes to stderr.
type logSink struct {
	w   *os.File // the pipe's end the server writes to
	cmd *exec.Cmd
}

// pipeSize is the sink's pipe buffer: room for many batches of access-log
// lines, so that the server is not held up while the sink is scheduled.
const pipeSize = 1 << 20

// startLogSink starts a sink appending to a new file at path.
func startLogSink(path string) (*logSink, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	// A bigger pipe is an optimisation: without it the sink still works.
	unix.FcntlInt(w.Fd(), unix.F_SETPIPE_SZ, pipeSize)
	cmd := exec.Command("taskset", "-c", driverCPU, "cat")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = r, f, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		w.Close()
		return nil, fmt.Errorf("log sink: %w", err)
	}
	return &logSink{w: w, cmd: cmd}, nil
}

// cpuOrZero is the processor time the sink has used; none without a sink.
func (s *logSink) cpuOrZero() (time.Duration, error) {
	if s == nil {
		return 0, nil
	}
	d, err := procfs.CPU(s.cmd.Process.Pid)
	if err != nil {
		return 0, fmt.Errorf("log sink: %w", err)
	}
	return d, nil
}

// close waits for the sink to write everything the servers wrote; call it
// once they have exited.
func (s *logSink) close() error {
	s.w.Close()
	return s.cmd.Wait()
}

// readyPoll is how often /readyz is asked while a server starts.
const readyPoll = 2 * time.Millisecond

// startReady starts a server pinned to serverCPU, in cg when it is not nil,
// and returns once its /readyz answers 200, with the time from starting the
// process to that answer.
func startReady(ctx context.Context, addr string, cg *memCgroup, log *os.File, name string, args ...string) (*procfs.Process, time.Duration, error) {
	start := time.Now()
	p, err := startPinned(serverCPU, cg, log, name, args...)
	if err != nil {
		return nil, 0, err
	}
	if err := p.WaitReady(ctx, addr, readyPoll); err != nil {
		return nil, 0, err
	}
	return p, time.Since(start), nil
}
