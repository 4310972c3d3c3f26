package main

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/catalogd/catalogd/tools/gen"
)

func TestRunWritesGenerator(t *testing.T) {
	for _, distinct := range []bool{false, true} {
		var want bytes.Buffer
		if _, err := gen.Write(&want, gen.Options{Cards: 2000, Seed: 9, DistinctNames: distinct}); err != nil {
			t.Fatal(err)
		}
		args := []string{"-cards", "2000", "-seed", "9"}
		if distinct {
			args = append(args, "-distinct")
		}
		var stdout, stderr bytes.Buffer
		if code := run(args, &stdout, &stderr); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr.String())
		}
		if !bytes.Equal(stdout.Bytes(), want.Bytes()) {
			t.Errorf("%v: stdout differs from gen.Write", args)
		}
	}
}

func TestRunUsage(t *testing.T) {
	for _, args := range [][]string{{"-cards", "-3"}, {"-per-set", "0"}, {"extra"}, {"-nope"}} {
		if code := run(args, io.Discard, io.Discard); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
}

// errWriter fails every write, as a closed pipe does.
type errWriter struct{}

func (errWriter) Write([]byte) (int, error) { return 0, errors.New("broken pipe") }

func TestRunReportsAFailedWrite(t *testing.T) {
	var stderr bytes.Buffer
	if code := run([]string{"-cards", "2000"}, errWriter{}, &stderr); code != 1 || !bytes.Contains(stderr.Bytes(), []byte("broken pipe")) {
		t.Errorf("exit %d, stderr %q; want 1 and the write's error", code, stderr.String())
	}
}
