package logbuf

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// writes records every call to the underlying writer.
type writes struct {
	mu    sync.Mutex
	calls []string
}

func (w *writes) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.calls = append(w.calls, string(p))
	return len(p), nil
}

func (w *writes) all() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.calls...)
}

func TestBatchedLinesWaitForTheTick(t *testing.T) {
	var out writes
	w := New(&out, time.Hour)
	defer w.Close()
	w.Batch([]byte("a\n"))
	w.Batch([]byte("b\n"))
	if got := out.all(); len(got) != 0 {
		t.Fatalf("batched lines written before a flush: %q", got)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if got := out.all(); len(got) != 1 || got[0] != "a\nb\n" {
		t.Fatalf("after Flush: %q, want one write of both lines", got)
	}
}

func TestTickFlushes(t *testing.T) {
	var out writes
	w := New(&out, 10*time.Millisecond)
	defer w.Close()
	w.Batched().Write([]byte("line\n"))
	deadline := time.Now().Add(5 * time.Second)
	for len(out.all()) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("a batched line was not written by the ticker")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if got := out.all(); got[0] != "line\n" {
		t.Fatalf("wrote %q", got)
	}
}

func TestWriteKeepsOrderAndGoesAtOnce(t *testing.T) {
	var out writes
	w := New(&out, time.Hour)
	defer w.Close()
	w.Batch([]byte("access 1\n"))
	w.Write([]byte("error\n"))
	if got := out.all(); len(got) != 1 || got[0] != "access 1\nerror\n" {
		t.Fatalf("got %q, want the batched line then the immediate one in one write", got)
	}
}

func TestFullBatchIsWritten(t *testing.T) {
	var out writes
	w := New(&out, time.Hour)
	defer w.Close()
	line := []byte(strings.Repeat("x", 99) + "\n")
	for range batchSize / len(line) {
		w.Batch(line)
	}
	if len(out.all()) != 0 {
		t.Fatal("written before the batch was full")
	}
	w.Batch(line)
	if got := out.all(); len(got) != 1 || len(got[0]) < batchSize {
		t.Fatalf("a full batch was not written: %d writes", len(got))
	}
}

func TestCloseFlushesAndLaterLinesGoAtOnce(t *testing.T) {
	var out writes
	w := New(&out, time.Hour)
	w.Batch([]byte("last\n"))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got := out.all(); len(got) != 1 || got[0] != "last\n" {
		t.Fatalf("Close wrote %q", got)
	}
	w.Batch([]byte("after\n"))
	if got := out.all(); len(got) != 2 || got[1] != "after\n" {
		t.Fatalf("a line after Close: %q", got)
	}
}

func TestNoIntervalWritesThrough(t *testing.T) {
	var out writes
	w := New(&out, 0)
	w.Batch([]byte("x\n"))
	if got := out.all(); len(got) != 1 {
		t.Fatalf("got %q, want the line written at once", got)
	}
}

type failing struct{}

func (failing) Write(p []byte) (int, error) { return 0, fmt.Errorf("disk full") }

func TestWriteErrorIsReported(t *testing.T) {
	w := New(failing{}, time.Hour)
	w.Batch([]byte("x\n"))
	if err := w.Close(); err == nil || err.Error() != "disk full" {
		t.Fatalf("Close = %v, want the write error", err)
	}
}

// TestConcurrentLinesStayWhole writes from many goroutines both ways and
// checks every line arrives whole and exactly once.
func TestConcurrentLinesStayWhole(t *testing.T) {
	var out bytes.Buffer
	var mu sync.Mutex
	w := New(writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return out.Write(p)
	}), time.Millisecond)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 1000 {
				line := fmt.Appendf(nil, "g%d-%d %s\n", g, i, strings.Repeat("y", i%300))
				if i%10 == 0 {
					w.Write(line)
				} else {
					w.Batch(line)
				}
			}
		})
	}
	wg.Wait()
	w.Close()
	seen := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
		var g, i int
		var tail string
		if _, err := fmt.Sscanf(l, "g%d-%d %s", &g, &i, &tail); err != nil && i%300 != 0 {
			t.Fatalf("torn line %q: %v", l, err)
		}
		if len(l) != len(fmt.Sprintf("g%d-%d ", g, i))+i%300 {
			t.Fatalf("torn line %q", l)
		}
		if seen[l] {
			t.Fatalf("line %q twice", l)
		}
		seen[l] = true
	}
	if len(seen) != 8000 {
		t.Fatalf("%d lines, want 8000", len(seen))
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
