package main

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// TestDevSampleImportError checks that a failed import of the built-in
// sample is reported as that failure, not as the missing file it leaves
// behind, and that the temporary directory goes with it.
func TestDevSampleImportError(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the import stops at once, as it would on SIGINT

	db, cleanup, err := openCatalog(ctx, serveOptions{db: filepath.Join(t.TempDir(), "missing.db"), dev: true})
	if err == nil {
		cleanup()
		db.Close()
		t.Fatal("openCatalog with a cancelled import: no error")
	}
	if !errors.Is(err, context.Canceled) || errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("openCatalog with a cancelled import: %v; want the import's context.Canceled, not a missing file", err)
	}
	left, rerr := os.ReadDir(tmp)
	if rerr != nil {
		t.Fatal(rerr)
	}
	if len(left) != 0 {
		t.Errorf("%d entries left in the temporary directory, first %q", len(left), left[0].Name())
	}
}
