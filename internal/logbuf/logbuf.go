// Package logbuf batches log lines: a busy server writes one line per
// request, and one write(2) per line costs more than the line itself.
package logbuf

import (
	"io"
	"sync"
	"time"
)

// batchSize is how many bytes of lines wait before they are written
// without waiting for the next tick.
const batchSize = 64 << 10

// Writer passes whole lines to an underlying writer. Lines given to Batch
// wait, for at most one flush interval, and go out together; lines given to
// Write go out at once, after the waiting ones, so the order is kept. Every
// call to the underlying writer holds whole lines, and only one call runs at
// a time, so lines from both never interleave.
type Writer struct {
	mu   sync.Mutex
	out  io.Writer
	buf  []byte
	err  error // the first write error, reported by Flush and Close
	stop chan struct{}
	done chan struct{}
}

// New returns a Writer that flushes every interval; with an interval of
// zero or less it does not batch at all.
func New(out io.Writer, interval time.Duration) *Writer {
	w := &Writer{out: out, buf: make([]byte, 0, batchSize+4096)}
	if interval > 0 {
		w.stop, w.done = make(chan struct{}), make(chan struct{})
		go w.tick(interval, w.stop)
	}
	return w
}

func (w *Writer) tick(interval time.Duration, stop <-chan struct{}) {
	defer close(w.done)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			w.Flush()
		case <-stop:
			return
		}
	}
}

// Write writes p, one or more whole lines, at once, after any batched ones.
// It suits loggers whose lines are rare and wanted now (slog handlers).
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	w.flushLocked()
	return len(p), nil
}

// Batch queues p, one or more whole lines, to be written with others.
// Without a flush interval it writes them at once.
func (w *Writer) Batch(p []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	if len(w.buf) >= batchSize || w.stop == nil {
		w.flushLocked()
	}
}

// Flush writes the lines waiting, and returns the first write error so far.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.flushLocked()
	return w.err
}

func (w *Writer) flushLocked() {
	if len(w.buf) == 0 {
		return
	}
	if _, err := w.out.Write(w.buf); err != nil && w.err == nil {
		w.err = err
	}
	// A burst of long lines may have grown the buffer: keep a normal one.
	if cap(w.buf) > 4*batchSize {
		w.buf = make([]byte, 0, batchSize+4096)
		return
	}
	w.buf = w.buf[:0]
}

// Close stops the ticker and writes the lines waiting. Lines given after
// Close are written at once.
func (w *Writer) Close() error {
	w.mu.Lock()
	stop := w.stop
	w.stop = nil
	w.mu.Unlock()
	if stop != nil {
		close(stop)
		<-w.done
	}
	return w.Flush()
}

// Batched returns w as an io.Writer whose writes are batched, for code that
// takes an io.Writer for its lines (an access log).
func (w *Writer) Batched() io.Writer { return batched{w} }

type batched struct{ w *Writer }

func (b batched) Write(p []byte) (int, error) {
	b.w.Batch(p)
	return len(p), nil
}
