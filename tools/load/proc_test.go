package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// allowedCPU is a CPU this process may use, to pin test processes to: the
// harness's own (serverCPU) may not be among them in a container.
func allowedCPU(t *testing.T) string {
	t.Helper()
	var allowed unix.CPUSet
	if err := unix.SchedGetaffinity(0, &allowed); err != nil {
		t.Fatal(err)
	}
	for i := range 1024 {
		if allowed.IsSet(i) {
			return strconv.Itoa(i)
		}
	}
	t.Fatal("this process may use no CPU")
	return ""
}

// TestProcessStop checks that stop tells a clean stop from a crash.
func TestProcessStop(t *testing.T) {
	cpu := allowedCPU(t)
	for _, tc := range []struct {
		name   string
		script string
		exited bool   // wait for the process to exit before stopping it
		want   string // in the error; "" for none
	}{
		{"EndedBySIGTERM", "exec sleep 60", false, ""},
		{"ExitsZeroOnSIGTERM", "trap 'exit 0' TERM; echo ready; while :; do sleep 0.01; done", false, ""},
		{"ExitsOneOnSIGTERM", "trap 'exit 1' TERM; echo ready; while :; do sleep 0.01; done", false, "exited with status 1"},
		{"CrashedBefore", "exit 3", true, "exited before it was stopped: exit status 3"},
		{"ExitedZeroBefore", "exit 0", true, "exited with status 0 before it was stopped"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log, err := os.Create(filepath.Join(t.TempDir(), "log"))
			if err != nil {
				t.Fatal(err)
			}
			defer log.Close()
			p, err := startPinned(cpu, nil, log, "sh", "-c", tc.script)
			if err != nil {
				t.Fatal(err)
			}
			if tc.exited {
				<-p.Done()
			}
			// A trap catches SIGTERM only once it is set.
			for strings.Contains(tc.script, "ready") {
				if b, _ := os.ReadFile(log.Name()); strings.Contains(string(b), "ready") {
					break
				}
				select {
				case <-p.Done():
					t.Fatalf("exited before it was ready: %v", p.Err())
				case <-time.After(time.Millisecond):
				}
			}
			for range 2 { // the second call reports what the first found
				err := p.Stop()
				switch {
				case tc.want == "" && err != nil:
					t.Fatalf("stop = %v, want no error", err)
				case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
					t.Fatalf("stop = %v, want %q", err, tc.want)
				}
			}
		})
	}
}
