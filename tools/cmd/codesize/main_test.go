package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheck: a file or a function over its limit is named, a test file is
// held to its own limit and its functions to none, and the tools module
// and testdata are left out.
func TestCheck(t *testing.T) {
	root := t.TempDir()
	write := func(path, text string) {
		t.Helper()
		path = filepath.Join(root, path)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fn := func(name string, lines int) string { // a function of lines lines
		return "func " + name + "() {\n" + strings.Repeat("\tprintln()\n", lines-2) + "}\n"
	}
	pad := func(lines int) string { return strings.Repeat("\n", lines) }
	write("a/short.go", "package a\n"+fn("fits", 80))
	write("a/long.go", "package a\n"+fn("tooLong", 81)+pad(600-1-81))
	write("a/big.go", "package a\n"+pad(600))
	write("a/big_test.go", "package a\n"+fn("TestLong", 200)+pad(800-1-200))
	write("a/huge_test.go", "package a\n"+pad(800))
	write("tools/x.go", "package x\n"+fn("ignored", 200)+pad(1000))
	write("a/testdata/x.go", "package x\n"+pad(1000))

	over, err := check(root)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(over, "\n")
	for _, want := range []string{"big.go: 601 lines, over 600", "tooLong is 81 lines, over 80", "huge_test.go: 801 lines, over 800"} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in:\n%s", want, got)
		}
	}
	if len(over) != 3 {
		t.Errorf("%d lines, want 3:\n%s", len(over), got)
	}
}
