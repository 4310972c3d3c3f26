package importer

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/catalogd/catalogd/catalog/store/build"
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
	gzipped := filepath.Join(dir, "snapshot.json.gz")
	pipe := filepath.Join(dir, "pipe")
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(valid)
	zw.Close()
	for file, body := range map[string][]byte{snapshot: valid, notes: []byte(`{"important":"data"}` + "\n"), gzipped: gz.Bytes()} {
		if err := os.WriteFile(file, body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(pipe, 0o644); err != nil {
		t.Fatal(err)
	}
	for db, want := range map[string]string{
		snapshot: "is the snapshot",
		notes:    "holds text, not a catalogue",
		gzipped:  "holds gzip, not a catalogue",
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

	// What may be replaced: no file, an empty one, a catalogue, and
	// catalogues damaged in their first page (one of bbolt's two meta
	// pages), in both, or cut short.
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
	bothPagesZeroed := filepath.Join(dir, "zeroed.db")
	clear(b[:2*os.Getpagesize()])
	if err := os.WriteFile(bothPagesZeroed, b, 0o644); err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(dir, "cut.db")
	if err := os.WriteFile(cut, b[:10], 0o644); err != nil {
		t.Fatal(err)
	}
	for _, db := range []string{filepath.Join(dir, "new.db"), empty, firstPageDamaged, bothPagesZeroed, cut} {
		mustImport(t, Config{DB: db, Inputs: []string{snapshot}})
		mustOpen(t, db).Close()
	}
	// A dry run replaces nothing, so it may name anything.
	if _, err := Import(context.Background(), Config{DB: notes, Inputs: []string{snapshot}, DryRun: true}); err != nil {
		t.Errorf("a dry run with --db %s: %v", notes, err)
	}
}

// TestImportRefusesACardInTooManyGroups: a card whose name holds the names
// of more than build.MaxCardGroups name groups (one name in every group,
// say) fails the import, saying which card and why, and leaves the
// catalogue as it was; at the limit it is imported.
func TestImportRefusesACardInTooManyGroups(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "catalog.db")
	mustImport(t, Config{DB: db, Inputs: []string{filepath.Join("testdata", "valid.json")}})
	before := mustOpen(t, db)
	gen := before.Generation()
	before.Close()
	for _, groups := range []int{build.MaxCardGroups, build.MaxCardGroups + 1} {
		var b strings.Builder
		b.WriteString(`{"sets":[{"id":"intl-s","code":"s","name":"S","zone":"intl","cardCount":1}],` +
			`"cards":[{"id":"intl-s-1","name":"Pika Card","setName":"S","setCode":"s","number":"1","language":"en","zone":"intl"}],"names":[`)
		for i := range groups {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `["Pika","Group %d"]`, i)
		}
		b.WriteString("]}")
		file := filepath.Join(dir, fmt.Sprintf("groups-%d.json", groups))
		if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		tmp := filepath.Join(t.TempDir(), "catalog.db")
		_, err := Import(context.Background(), Config{DB: tmp, Inputs: []string{file}})
		if groups <= build.MaxCardGroups {
			if err != nil {
				t.Errorf("a card in %d groups: %v", groups, err)
			}
			continue
		}
		if !errors.Is(err, build.ErrTooManyGroups) || !strings.Contains(err.Error(), `card "intl-s-1", named "Pika Card"`) || strings.Contains(err.Error(), ".import-") {
			t.Errorf("a card in %d groups: %v, want ErrTooManyGroups naming the card, not a file", groups, err)
		}
		if _, err := Import(context.Background(), Config{DB: db, Inputs: []string{file}}); !errors.Is(err, build.ErrTooManyGroups) {
			t.Errorf("over a catalogue: %v", err)
		}
		if after := mustOpen(t, db); after.Generation() != gen {
			t.Errorf("the catalogue was replaced: generation %s, was %s", after.Generation(), gen)
		}
	}
}
