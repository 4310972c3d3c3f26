package importer

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestImportReplacesOnlyACatalogue: --db that names the snapshot being
// read, a file of something else, or something that is not a file, is
// refused before anything is read or written, and left as it was; a
// catalogue (damaged in its first page too), an empty file and no file
// are replaced.
func TestImportReplacesOnlyACatalogue(t *testing.T) {
	dir := t.TempDir()
	snapshot := filepath.Join(dir, "snapshot.json")
	valid, err := os.ReadFile(filepath.Join("testdata", "valid.json"))
	if err != nil {
		t.Fatal(err)
	}
	notes := filepath.Join(dir, "notes.txt")
	pipe := filepath.Join(dir, "pipe")
	for file, body := range map[string][]byte{snapshot: valid, notes: []byte(`{"important":"data"}` + "\n")} {
		if err := os.WriteFile(file, body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(pipe, 0o644); err != nil {
		t.Fatal(err)
	}
	for db, want := range map[string]string{
		snapshot: "is the snapshot",
		notes:    "holds something other than a catalogue",
		pipe:     "is not a file but a named pipe",
	} {
		before, _ := os.Lstat(db)
		_, err := Import(context.Background(), Config{DB: db, Inputs: []string{snapshot}})
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), db) {
			t.Errorf("--db %s: %v, want an error naming it that says it %s", db, err, want)
		}
		if after, err := os.Lstat(db); err != nil || after.Mode() != before.Mode() || after.Size() != before.Size() || !after.ModTime().Equal(before.ModTime()) {
			t.Errorf("--db %s was changed: %v", db, err)
		}
	}
	if got, _ := os.ReadFile(snapshot); !bytes.Equal(got, valid) {
		t.Errorf("the snapshot was changed")
	}
	if _, err := os.Stat(pipe + ".lock"); err == nil {
		t.Errorf("a lock was taken beside the refused --db")
	}

	// What may be replaced: no file, an empty one, a catalogue, and a
	// catalogue whose first page (one of bbolt's two meta pages) is damaged.
	good := filepath.Join(dir, "good.db")
	mustImport(t, Config{DB: good, Inputs: []string{snapshot}})
	mustImport(t, Config{DB: good, Inputs: []string{snapshot}})
	empty := filepath.Join(dir, "empty.db")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	firstPageDamaged := filepath.Join(dir, "damaged.db")
	b, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	copy(b[:os.Getpagesize()], bytes.Repeat([]byte{0xA5}, os.Getpagesize()))
	if err := os.WriteFile(firstPageDamaged, b, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, db := range []string{filepath.Join(dir, "new.db"), empty, firstPageDamaged} {
		mustImport(t, Config{DB: db, Inputs: []string{snapshot}})
		mustOpen(t, db).Close()
	}
	// A dry run replaces nothing, so it may name anything.
	if _, err := Import(context.Background(), Config{DB: notes, Inputs: []string{snapshot}, DryRun: true}); err != nil {
		t.Errorf("a dry run with --db %s: %v", notes, err)
	}
}
