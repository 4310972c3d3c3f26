package procfs

import (
	"context"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// readyEnv makes the test binary a server for TestWaitReady: "ready ADDR"
// answers /readyz on ADDR, "exit" exits with status 3, "silent" never
// listens.
const readyEnv = "PROCFS_TEST_SERVER"

func TestMain(m *testing.M) {
	mode, addr, _ := strings.Cut(os.Getenv(readyEnv), " ")
	switch mode {
	case "ready":
		http.HandleFunc("/readyz", func(http.ResponseWriter, *http.Request) {})
		http.ListenAndServe(addr, nil)
		os.Exit(1)
	case "exit":
		os.Exit(3)
	case "silent":
		time.Sleep(time.Minute)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

func TestWaitReady(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	start := func(mode string) *Process {
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), readyEnv+"="+mode+" "+addr)
		p, err := Start(cmd, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(p.Kill)
		return p
	}
	ready := start("ready")
	if err := ready.WaitReady(t.Context(), addr, 5*time.Millisecond); err != nil {
		t.Fatalf("a server that answers: %v", err)
	}
	ready.Kill() // its address is the next one's

	if err := start("exit").WaitReady(t.Context(), addr, 5*time.Millisecond); err == nil || !strings.Contains(err.Error(), "exited before it was ready") {
		t.Fatalf("a server that exits: %v, want exited before it was ready", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	p := start("silent")
	if err := p.WaitReady(ctx, addr, 5*time.Millisecond); err != context.DeadlineExceeded || !p.Exited() {
		t.Fatalf("a server that never answers, the wait cut short: %v, exited %v; want the context's error and a stopped process", err, p.Exited())
	}
}
