package importer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/catalogd/catalogd/catalog/store"
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

// TestImportInterruptedAtTheEndLeavesCatalogue cancels an import once its
// file is finished, as a Ctrl-C during the long writing of the index
// does: the catalogue stays as it was, and the new file goes.
func TestImportInterruptedAtTheEndLeavesCatalogue(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "catalog.db")
	if _, err := Import(context.Background(), Config{DB: db, Inputs: []string{"testdata/valid.json"}}); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	_, err = Import(ctx, Config{DB: db, Inputs: []string{filepath.Join("..", "data", "sample.json")}, finished: cancel})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	if after, err := os.ReadFile(db); err != nil || !bytes.Equal(before, after) {
		t.Fatalf("the catalogue changed (%v)", err)
	}
	if tmps, _ := filepath.Glob(filepath.Join(dir, ".catalog.db.import-*")); len(tmps) != 0 {
		t.Fatalf("temporary files left: %q", tmps)
	}
}

// TestImportReplacedButNotSynced fails the sync of the directory after the
// new file replaced the catalogue: the error says so, and the result is
// the import's, for the catalogue was replaced.
func TestImportReplacedButNotSynced(t *testing.T) {
	db := filepath.Join(t.TempDir(), "catalog.db")
	if _, err := Import(context.Background(), Config{DB: db, Inputs: []string{"testdata/valid.json"}}); err != nil {
		t.Fatal(err)
	}
	eio := func(string) error { return syscall.EIO }
	res, err := Import(context.Background(), Config{DB: db, Inputs: []string{filepath.Join("..", "data", "sample.json")}, syncDir: eio})
	if !errors.Is(err, ErrNotSynced) || !errors.Is(err, syscall.EIO) || !strings.Contains(err.Error(), db+" was replaced") {
		t.Fatalf("error %v, want one saying %s was replaced, wrapping ErrNotSynced and EIO", err, db)
	}
	if res.Path != db || res.Info.Generation == "" {
		t.Fatalf("result %+v, want the import's", res)
	}
	c, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got := c.Info().Generation; got != res.Info.Generation {
		t.Fatalf("the catalogue is generation %s, want the new one, %s", got, res.Info.Generation)
	}
}

// TestImportLeavesOtherCataloguesTemporaryFiles imports into a catalogue
// whose name reads as a pattern: the temporary files of other catalogues,
// imports in progress, stay: one the pattern would match, and one whose
// catalogue's name starts with this one's temporary name.
func TestImportLeavesOtherCataloguesTemporaryFiles(t *testing.T) {
	dir := t.TempDir()
	others := []string{filepath.Join(dir, ".c1.db.import-12345"), filepath.Join(dir, ".c[0-9].db.import-7.import-12345")}
	for _, other := range others {
		if err := os.WriteFile(other, []byte("another import's file"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Import(context.Background(), Config{DB: filepath.Join(dir, "c[0-9].db"), Inputs: []string{"testdata/valid.json"}}); err != nil {
		t.Fatal(err)
	}
	for _, other := range others {
		if _, err := os.Stat(other); err != nil {
			t.Errorf("another catalogue's temporary file went: %v", err)
		}
	}
}

// TestImportFromAPipe imports a snapshot given as the path of a pipe, as
// <(zcat snapshot.gz) gives one: a pipe has no size to check it by.
func TestImportFromAPipe(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "snapshot")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	snapshot, err := os.ReadFile("testdata/valid.json")
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		f.Write(snapshot)
		f.Close()
	}()
	res, err := Import(context.Background(), Config{DB: filepath.Join(dir, "catalog.db"), Inputs: []string{fifo}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Info.Sources) != 1 || res.Info.Sources[0].Bytes != int64(len(snapshot)) {
		t.Errorf("sources %+v, want the pipe's %d bytes", res.Info.Sources, len(snapshot))
	}
}

// TestImportOverADamagedCatalogue imports over copies of a catalogue with
// a page overwritten, one page at a time: the catalogue it replaces opens,
// and its damage shows only when it is compared. Every import must succeed
// and never panic; those that meet the damage start a history of their
// own and say why, as over a file that does not open.
func TestImportOverADamagedCatalogue(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.db")
	sample := filepath.Join("..", "data", "sample.json")
	// A history of two steps, each the whole sample: the comparison and
	// the copy of the history both read many pages.
	for _, in := range []string{sample, "testdata/valid.json", sample} {
		if _, err := Import(context.Background(), Config{DB: good, Inputs: []string{in}, History: 30}); err != nil {
			t.Fatal(err)
		}
	}
	whole, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	page := os.Getpagesize()
	damaged := 0
	for at := 2 * page; at < len(whole); at += 5 * page {
		db := filepath.Join(t.TempDir(), "catalog.db")
		b := bytes.Clone(whole)
		copy(b[at+16:at+page], bytes.Repeat([]byte{0xA5}, page-16)) // the header kept: the page opens
		if err := os.WriteFile(db, b, 0o644); err != nil {
			t.Fatal(err)
		}
		res, err := Import(context.Background(), Config{DB: db, Inputs: []string{sample}, History: 30})
		if err != nil {
			t.Fatalf("over a catalogue damaged at page %d: %v", at/page, err)
		}
		if res.Unfollowed != nil {
			if !strings.Contains(res.Unfollowed.Error(), "damaged") || len(res.Info.History) != 0 {
				t.Errorf("page %d: unfollowed %v with a history of %d steps", at/page, res.Unfollowed, len(res.Info.History))
			}
			damaged++
			// The new history starts clean: the same snapshot again is a
			// step of no changes, whatever of the old history was met.
			if _, err := Import(context.Background(), Config{DB: db, Inputs: []string{sample}, History: 30}); err != nil {
				t.Fatal(err)
			}
			if n := countChanges(t, db, res.Info.Generation); n != 0 {
				t.Errorf("page %d: %d changes between two imports of one snapshot", at/page, n)
			}
		}
	}
	if damaged == 0 {
		t.Error("no damaged page was met by the comparison")
	}
	t.Logf("%d of %d damaged pages met by the comparison", damaged, (len(whole)/page-2)/5)
}

// TestProblemsOfOneRecordAreBounded imports a card of a hundred thousand
// members given twice and a hundred thousand unknown ones: the import
// reports its first problems, and what it allocates does not grow with
// the members, which it once kept a problem for each.
func TestProblemsOfOneRecordAreBounded(t *testing.T) {
	dir := t.TempDir()
	var b bytes.Buffer
	b.WriteString(`{"sets":[],"cards":[{"id":"x"`)
	for i := range 100_000 {
		fmt.Fprintf(&b, `,"id":"x","u%d":1`, i)
	}
	b.WriteString(`}]}`)
	snapshot := filepath.Join(dir, "snapshot.json")
	if err := os.WriteFile(snapshot, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := Import(context.Background(), Config{DB: filepath.Join(dir, "catalog.db"), Inputs: []string{snapshot}, DryRun: true})
	runtime.ReadMemStats(&after)
	var verr *ValidationError
	if !errors.As(err, &verr) || len(verr.Errors) != MaxErrors || !verr.Truncated {
		t.Fatalf("error %v, want the first %d problems", err, MaxErrors)
	}
	// 3.3 MB of snapshot; a problem kept per member was some 40 MB.
	n := after.TotalAlloc - before.TotalAlloc
	t.Logf("%d KB allocated", n>>10)
	if n > 16<<20 {
		t.Errorf("the import allocated %d MB for one record's problems", n>>20)
	}
}

// countChanges counts the changes since generation of the catalogue at db.
func countChanges(t *testing.T, db, since string) int {
	t.Helper()
	c, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	n := 0
	q := store.ChangesQuery{Since: since, Limit: 1000}
	for {
		next, _, err := c.Changes(q, func(store.Change) error { n++; return nil })
		if err != nil {
			t.Fatal(err)
		}
		if next == "" {
			return n
		}
		q.After = next
	}
}

// The problems an import reports keep their own copies of what they name,
// not the records they came from: a hundred records of 180 KB each, bad in
// one field, leave a report of a few kilobytes.
func TestProblemsKeepNoRecord(t *testing.T) {
	dir := t.TempDir()
	long := strings.Repeat("x", 60_000)
	var b bytes.Buffer
	fmt.Fprintf(&b, `{"sets":[{"id":"intl-s","code":"s","name":"S","zone":"intl","cardCount":1}],"cards":[`)
	for i := range MaxErrors {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":"intl-s-%d","name":"%s","illustrator":"%s","imageUrl":"https://example.com/%s","setName":"S","setCode":"s","number":"%d","language":"en","zone":"intl","year":"x"}`, i, long, long, long, i)
	}
	b.WriteString(`]}`)
	snapshot := filepath.Join(dir, "snapshot.json")
	if err := os.WriteFile(snapshot, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := Import(context.Background(), Config{DB: filepath.Join(dir, "catalog.db"), Inputs: []string{snapshot}})
	runtime.GC()
	runtime.ReadMemStats(&after)
	var verr *ValidationError
	if !errors.As(err, &verr) || len(verr.Errors) != MaxErrors {
		t.Fatalf("error %v, want %d problems", err, MaxErrors)
	}
	held := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("the report holds %d KB", held>>10)
	if held > 4<<20 {
		t.Errorf("the report of %d problems holds %d MB", MaxErrors, held>>20)
	}
	runtime.KeepAlive(verr)
}
