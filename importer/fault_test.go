package importer

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestWriteErrorAfterNCardsLeavesCatalogue injects a disk error after N cards
// (ENOSPC, as a full disk gives) and checks the catalogue is untouched and no
// temporary file is left, for failures early, mid-way and at the last card.
func TestWriteErrorAfterNCardsLeavesCatalogue(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "catalog.db")
	sample := filepath.Join("..", "data", "sample.json")
	if _, err := Import(context.Background(), Config{DB: db, Inputs: []string{"testdata/valid.json"}}); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int64{1, 900, 1814} {
		_, err := Import(context.Background(), Config{
			DB:     db,
			Inputs: []string{sample},
			afterCard: func(written int64) error {
				if written == n {
					return &os.PathError{Op: "write", Path: "injected", Err: syscall.ENOSPC}
				}
				return nil
			},
		})
		if !errors.Is(err, syscall.ENOSPC) {
			t.Fatalf("after %d cards: error %v, want ENOSPC", n, err)
		}
		after, rerr := os.ReadFile(db)
		if rerr != nil {
			t.Fatal(rerr)
		}
		if !bytes.Equal(before, after) {
			t.Fatalf("after %d cards: the catalogue changed", n)
		}
		if tmps, _ := filepath.Glob(filepath.Join(dir, ".catalog.db.import-*")); len(tmps) != 0 {
			t.Fatalf("after %d cards: temporary files left: %q", n, tmps)
		}
	}
}

// TestCancelledImportLeavesCatalogue: an import stopped by its context (the
// signal handler of the CLI) writes nothing.
func TestCancelledImportLeavesCatalogue(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "catalog.db")
	ctx, cancel := context.WithCancel(context.Background())
	_, err := Import(ctx, Config{
		DB:     db,
		Inputs: []string{filepath.Join("..", "data", "sample.json")},
		afterCard: func(written int64) error {
			if written == 100 {
				cancel()
			}
			return nil
		},
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	if _, err := os.Stat(db); !os.IsNotExist(err) {
		t.Fatalf("a cancelled first import created the catalogue: %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) > 1 { // the lock file may stay
		t.Errorf("files left: %v", entries)
	}
}
