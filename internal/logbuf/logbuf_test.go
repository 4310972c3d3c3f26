package logbuf

import (
	"bytes"
	"errors"
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
	waitForWrites(&out)
	if got := out.all(); len(got) != 1 || got[0] != "access 1\nerror\n" {
		t.Fatalf("got %q, want the batched line then the immediate one in one write", got)
	}
}

// waitForWrites waits, up to 5 s, for the first write to out: the ticker
// writes lines that are wanted now as soon as it is told, where its next
// tick, in these tests, is an hour away.
func waitForWrites(out *writes) {
	deadline := time.Now().Add(5 * time.Second)
	for len(out.all()) == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
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
	waitForWrites(&out)
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

// recovering fails its writes, after writing the first `part` bytes of
// each, until it is told the disk has room again.
type recovering struct {
	writes
	full bool
	part int
}

func (r *recovering) Write(p []byte) (int, error) {
	if r.full {
		return r.part, errors.New("no space left on device")
	}
	return r.writes.Write(p)
}

// TestLinesTheOutputLostAreCounted: lines a write failed to write are
// counted as dropped, and told once the output takes lines again; those
// it did write are not.
func TestLinesTheOutputLostAreCounted(t *testing.T) {
	out := &recovering{full: true, part: len("one\n")}
	w := New(out, time.Hour)
	w.Batch([]byte("one\n"))
	w.Batch([]byte("two\nthree\n"))
	if err := w.Flush(); err == nil || w.Dropped() != 2 {
		t.Fatalf("Flush = %v, %d dropped; want the error and the 2 lines after the first", err, w.Dropped())
	}
	out.part = 0
	w.Batch([]byte("four\n"))
	w.Flush() // the note of the 2 is lost with four: told again
	if w.Dropped() != 3 {
		t.Fatalf("%d dropped, want 3", w.Dropped())
	}
	out.full = false
	w.Batch([]byte("five\n"))
	w.Flush()
	got := strings.Join(out.all(), "")
	if !strings.HasPrefix(got, "five\n") || !strings.Contains(got, `"dropped":3}`) || strings.Count(got, "\n") != 2 {
		t.Fatalf("written %q, want five and a note of 3 dropped lines", got)
	}

	// A write cut short in a line leaves half of it: the next write ends
	// it first, so that the lines after it stay whole.
	out.calls = nil
	out.full, out.part = true, len("six\nsev")
	w.Batch([]byte("six\nseven\n"))
	w.Flush()
	out.writes.Write([]byte("six\nsev")) // what the cut write wrote
	out.full = false
	w.Batch([]byte("eight\n"))
	w.Flush()
	lines := strings.Split(strings.Join(out.all(), ""), "\n")
	if len(lines) < 4 || lines[0] != "six" || lines[1] != "sev" || lines[2] != "eight" || !strings.Contains(lines[3], `"dropped":1}`) {
		t.Fatalf("written %q, want the half line ended before the next", lines)
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

// stalled is an output that takes no lines until released, as a log pipe
// whose reader stopped reading.
type stalled struct {
	out     writes
	entered chan struct{}
	release chan struct{}
}

func newStalled(t *testing.T) *stalled {
	s := &stalled{entered: make(chan struct{}, 1), release: make(chan struct{})}
	t.Cleanup(func() {
		select {
		case <-s.release:
		default:
			close(s.release)
		}
	})
	return s
}

func (s *stalled) Write(p []byte) (int, error) {
	select {
	case s.entered <- struct{}{}:
	default:
	}
	<-s.release
	return s.out.Write(p)
}

// TestStalledOutputBlocksNoOne logs twice maxPending bytes while a write
// to the output does not return: every call returns, what waits stays
// under maxPending, and once the output takes lines again it gets the
// lines kept, in order, and a line that counts the ones dropped.
func TestStalledOutputBlocksNoOne(t *testing.T) {
	out := newStalled(t)
	w := New(out, time.Hour)
	go w.Write([]byte("first\n"))
	<-out.entered

	line := []byte(strings.Repeat("z", 1000) + "\n")
	n := 2 * maxPending / len(line)
	logged := make(chan struct{})
	go func() {
		defer close(logged)
		for i := range n {
			if i%2 == 0 {
				w.Write(line)
			} else {
				w.Batch(line)
			}
		}
	}()
	select {
	case <-logged:
	case <-time.After(30 * time.Second):
		t.Fatal("logging waited for a stalled output")
	}
	w.mu.Lock()
	pending := len(w.buf)
	w.mu.Unlock()
	if pending > maxPending {
		t.Errorf("%d bytes wait, over maxPending", pending)
	}

	close(out.release)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	all := strings.Join(out.out.all(), "")
	lines := strings.Split(strings.TrimSuffix(all, "\n"), "\n")
	kept := strings.Count(all, string(line))
	note := lines[len(lines)-1]
	var dropped int
	if _, err := fmt.Sscanf(note[strings.Index(note, `"dropped":`):], `"dropped":%d}`, &dropped); err != nil || !strings.Contains(note, `"level":"WARN"`) {
		t.Fatalf("the last line %q does not count the lines dropped: %v", note, err)
	}
	if lines[0] != "first" || kept+dropped != n || kept == 0 || dropped == 0 || len(lines) != kept+2 {
		t.Errorf("first line %q, %d lines kept and %d dropped of %d, %d lines in all", lines[0], kept, dropped, n, len(lines))
	}
	// The metrics read the same count, which the note does not reset.
	if got := w.Dropped(); got != uint64(dropped) {
		t.Errorf("Dropped() = %d, the note says %d", got, dropped)
	}
}

// TestCloseGivesUpOnAStalledOutput closes a Writer whose output never
// takes its lines: Close returns after closeWait, saying so, so that a
// process can stop.
func TestCloseGivesUpOnAStalledOutput(t *testing.T) {
	out := newStalled(t)
	w := New(out, time.Hour)
	w.Batch([]byte("never\n"))
	closed := make(chan error, 1)
	go func() { closed <- w.Close() }()
	select {
	case err := <-closed:
		if !errors.Is(err, errStalled) {
			t.Fatalf("Close = %v, want errStalled", err)
		}
	case <-time.After(closeWait + 20*time.Second):
		t.Fatal("Close waited for a stalled output")
	}
}
