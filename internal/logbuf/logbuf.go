// Package logbuf batches log lines: a busy server writes one line per
// request, and one write(2) per line costs more than the line itself.
package logbuf

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"
)

// batchSize is how many bytes of lines wait before they are written
// without waiting for the next tick.
const batchSize = 64 << 10

// maxPending is how many bytes of lines wait, at most, while the
// underlying writer does not return (a log pipe nobody reads): the lines
// after them are counted and dropped, so that memory stays bounded and
// whoever logs never waits for the output. The line that counts them is
// JSON, as catalogd's log lines are.
const maxPending = 8 << 20

// closeWait is how long Close waits for the last lines to be written.
const closeWait = 5 * time.Second

// Writer passes whole lines to an underlying writer. Lines given to Batch
// wait, for at most one flush interval, and go out together; lines given to
// Write go out at once, after the waiting ones, so the order is kept. Every
// call to the underlying writer holds whole lines, and only one call runs at
// a time, so lines from both never interleave. With a flush interval only
// the ticker calls the underlying writer: while a call has not returned,
// lines wait (up to maxPending), and a stalled log output stalls no one
// who logs.
type Writer struct {
	mu      sync.Mutex // guards buf, dropped, err and stop
	out     io.Writer
	buf     []byte
	dropped int
	// droppedTotal counts every line dropped since New, for the metrics.
	droppedTotal atomic.Uint64
	err          error // the first write error, reported by Flush and Close
	stop         chan struct{}
	done         chan struct{}
	full         chan struct{} // tells the ticker to write now

	writing sync.Mutex // held by the one call to out at a time
	spare   []byte     // the lines being written, under writing
	partial bool       // the output ends in half a line, under writing
}

// New returns a Writer that flushes every interval; with an interval of
// zero or less it does not batch at all.
func New(out io.Writer, interval time.Duration) *Writer {
	w := &Writer{out: out, buf: make([]byte, 0, batchSize+4096)}
	if interval > 0 {
		w.stop, w.done, w.full = make(chan struct{}), make(chan struct{}), make(chan struct{}, 1)
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
			w.flush()
		case <-w.full:
			w.flush()
		case <-stop:
			return
		}
	}
}

// Write writes p, one or more whole lines, at once, after any batched
// ones: the ticker is told to write them now. It suits loggers whose lines
// are rare and wanted now (slog handlers).
func (w *Writer) Write(p []byte) (int, error) {
	if _, unbatched := w.queue(p); unbatched {
		w.flush()
	} else {
		w.now()
	}
	return len(p), nil
}

// Batch queues p, one or more whole lines, to be written with others: by
// the ticker, told at once when they fill a batch. Without a flush
// interval it writes them itself.
func (w *Writer) Batch(p []byte) {
	full, unbatched := w.queue(p)
	switch {
	case unbatched:
		w.flush()
	case full:
		w.now()
	}
}

// now tells the ticker to write the lines waiting without waiting for its
// tick. Only the ticker writes, so that no caller, a request or a stop,
// ever waits on the output.
func (w *Writer) now() {
	select {
	case w.full <- struct{}{}:
	default: // told already
	}
}

// Dropped returns the number of lines dropped since New because the
// underlying writer did not take them.
func (w *Writer) Dropped() uint64 { return w.droppedTotal.Load() }

// queue adds p to the lines waiting, or counts it dropped when maxPending
// bytes wait already. It reports whether a batch is full, and whether
// there is no ticker (none was asked for, or Close stopped it), so that
// nothing but the caller will write the lines.
func (w *Writer) queue(p []byte) (full, unbatched bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.buf)+len(p) > maxPending {
		w.dropped++
		w.droppedTotal.Add(1)
	} else {
		w.buf = append(w.buf, p...)
	}
	return len(w.buf) >= batchSize, w.stop == nil
}

// Flush writes the lines waiting, waiting for a write in progress, and
// returns the first write error so far.
func (w *Writer) Flush() error {
	w.flush()
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// flush writes the lines waiting until none are left, or until a write
// fails: the lines it did not write are dropped, and counted, and the
// next flush tries the output again.
func (w *Writer) flush() {
	w.writing.Lock()
	defer w.writing.Unlock()
	for {
		w.mu.Lock()
		if len(w.buf) == 0 && w.dropped == 0 {
			w.mu.Unlock()
			return
		}
		noted := w.dropped // told in a line of its own, the batch's last
		if noted > 0 {
			note := fmt.Appendf(nil, `{"time":%q,"level":"WARN","msg":"log lines dropped: the log output did not take them","dropped":%d}`+"\n",
				time.Now().UTC().Format(time.RFC3339Nano), w.dropped)
			w.buf, w.dropped = append(w.buf, note...), 0
		}
		// A burst of long lines may have grown a buffer: keep a normal one.
		if cap(w.spare) > 4*batchSize {
			w.spare = make([]byte, 0, batchSize+4096)
		}
		w.buf, w.spare = w.spare[:0], w.buf
		w.mu.Unlock()

		n, err := w.write(w.spare)
		if err == nil {
			continue
		}
		// A full disk, a closed pipe: what was not written is lost, and
		// counted. A lost note is told again, with them, next time.
		lost := bytes.Count(w.spare[n:], []byte("\n"))
		w.mu.Lock()
		if w.err == nil {
			w.err = err
		}
		if noted > 0 && lost > 0 {
			lost--
			w.dropped += noted
		}
		w.dropped += lost
		w.droppedTotal.Add(uint64(lost))
		w.mu.Unlock()
		return
	}
}

// write writes p, under writing, after the end of a line that a write cut
// short left half written, so that the lines after it stay whole. It
// returns the bytes of p written, at most len(p).
func (w *Writer) write(p []byte) (int, error) {
	if w.partial {
		if _, err := w.out.Write([]byte{'\n'}); err != nil {
			return 0, err
		}
		w.partial = false
	}
	n, err := w.out.Write(p)
	n = min(max(n, 0), len(p))
	if err != nil && n > 0 && p[n-1] != '\n' {
		w.partial = true
	}
	return n, err
}

// errStalled is Close's error when the last lines could not be written in
// closeWait.
var errStalled = errors.New("the log output took no lines for " + closeWait.String() + ": lines lost")

// Close stops the ticker and writes the lines waiting, for at most
// closeWait. Lines given after Close are written at once.
func (w *Writer) Close() error {
	w.mu.Lock()
	stop := w.stop
	w.stop = nil
	w.mu.Unlock()
	flushed := make(chan error, 1)
	go func() {
		// The ticker may be the one waiting on the output.
		if stop != nil {
			close(stop)
			<-w.done
		}
		flushed <- w.Flush()
	}()
	select {
	case err := <-flushed:
		return err
	case <-time.After(closeWait):
		return errStalled
	}
}

// Batched returns w as an io.Writer whose writes are batched, for code that
// takes an io.Writer for its lines (an access log).
func (w *Writer) Batched() io.Writer { return batched{w} }

type batched struct{ w *Writer }

func (b batched) Write(p []byte) (int, error) {
	b.w.Batch(p)
	return len(p), nil
}
