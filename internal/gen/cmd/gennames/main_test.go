package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const (
	realCatalogue = "../../../../testdata/catalogue-real.json.gz"
	namesDir      = "../../names"
)

// TestRegeneratesNames runs the command on the real catalogue and checks
// that every file it writes is byte for byte the one the generator embeds.
func TestRegeneratesNames(t *testing.T) {
	out := t.TempDir()
	var stderr bytes.Buffer
	if code := run([]string{"-in", realCatalogue, "-o", out}, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	written, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(written) != 7 {
		t.Errorf("%d files written, want 7 (set names of four languages, illustrators, English and Traditional Chinese card names)", len(written))
	}
	for _, e := range written {
		got, err := os.ReadFile(filepath.Join(out, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(filepath.Join(namesDir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from names/%s", e.Name(), e.Name())
		}
	}
}

func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"sets": [`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"Missing", []string{"-in", filepath.Join(dir, "none.json"), "-o", dir}, 1, "none.json"},
		{"Truncated", []string{"-in", bad, "-o", dir}, 1, "read " + bad},
		{"ExtraArgument", []string{"x"}, 2, "usage: gennames"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var stderr bytes.Buffer
			if code := run(c.args, &stderr); code != c.code || !strings.Contains(stderr.String(), c.want) {
				t.Fatalf("exit %d, stderr %q; want %d and %q", code, stderr.String(), c.code, c.want)
			}
		})
	}
}
