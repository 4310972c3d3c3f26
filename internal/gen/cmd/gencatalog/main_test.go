package main

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/catalogd/catalogd/internal/gen"
)

func TestRunWritesGenerator(t *testing.T) {
	var want bytes.Buffer
	if _, err := gen.Write(&want, gen.Options{Cards: 2000, Seed: 9}); err != nil {
		t.Fatal(err)
	}

	var stdout, stderr bytes.Buffer
	if code := run([]string{"-cards", "2000", "-seed", "9"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if !bytes.Equal(stdout.Bytes(), want.Bytes()) {
		t.Error("stdout differs from gen.Write")
	}

	dir := t.TempDir()
	var gz [2][]byte
	for i := range gz {
		path := filepath.Join(dir, "snap.json.gz")
		if code := run([]string{"-cards", "2000", "-seed", "9", "-gzip", "-o", path, "-stats"}, io.Discard, &stderr); code != 0 {
			t.Fatalf("exit %d: %s", code, stderr.String())
		}
		var err error
		if gz[i], err = os.ReadFile(path); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(gz[0], gz[1]) {
		t.Error("two gzip runs differ")
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz[0]))
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want.Bytes()) {
		t.Error("gunzipped file differs from gen.Write")
	}
	if !strings.Contains(stderr.String(), "cards 2000") {
		t.Errorf("-stats printed %q", stderr.String())
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("temporary files left behind: %v", entries)
	}
}

func TestRunUsage(t *testing.T) {
	for _, args := range [][]string{{"-cards", "-3"}, {"-per-set", "0"}, {"extra"}, {"-nope"}, {"-gzip", "-gzip-level", "12"}} {
		if code := run(args, io.Discard, io.Discard); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
	if code := run([]string{"-o", filepath.Join(t.TempDir(), "missing", "x.json")}, io.Discard, io.Discard); code != 1 {
		t.Errorf("unwritable -o: exit %d, want 1", code)
	}
}
