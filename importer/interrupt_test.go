package importer

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"
	"testing/iotest"
	"time"
)

// TestInterruptibleReadsWhatItWraps checks that the reader hands on every
// byte and error of what it wraps, whatever the sizes of the reads.
func TestInterruptibleReadsWhatItWraps(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789abcdef"), 10000)
	for name, wrap := range map[string]func(io.Reader) io.Reader{
		"whole":         func(r io.Reader) io.Reader { return r },
		"half reads":    iotest.HalfReader,
		"one byte":      iotest.OneByteReader,
		"data with EOF": iotest.DataErrReader,
	} {
		t.Run(name, func(t *testing.T) {
			r := interruptible(context.Background(), wrap(bytes.NewReader(data)))
			if err := iotest.TestReader(r, data); err != nil {
				t.Fatal(err)
			}
		})
	}
	broken := errors.New("disk on fire")
	r := interruptible(context.Background(), io.MultiReader(bytes.NewReader(data[:100]), iotest.ErrReader(broken)))
	got, err := io.ReadAll(r)
	if !errors.Is(err, broken) || !bytes.Equal(got, data[:100]) {
		t.Fatalf("read %d bytes and %v, want 100 and %v", len(got), err, broken)
	}
}

// TestInterruptibleEndsAWaitingRead cancels while a read waits for a
// writer that never writes: Read returns at once with the context's error,
// and again on the next call.
func TestInterruptibleEndsAWaitingRead(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	ctx, cancel := context.WithCancel(context.Background())
	r := interruptible(ctx, pr)
	ended := make(chan error, 1)
	go func() {
		_, err := r.Read(make([]byte, 64))
		ended <- err
	}()
	select {
	case err := <-ended:
		t.Fatalf("Read returned %v with nothing written", err)
	case <-time.After(50 * time.Millisecond):
	}
	cancel()
	select {
	case err := <-ended:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Read after cancel: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Read still waits after cancel")
	}
	if _, err := r.Read(make([]byte, 64)); !errors.Is(err, context.Canceled) {
		t.Fatalf("second Read after cancel: %v", err)
	}
}
