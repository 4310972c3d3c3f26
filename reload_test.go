package main

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/catalogd/catalogd/catalog/store"
	"github.com/catalogd/catalogd/data"
	"github.com/catalogd/catalogd/importer"
	"github.com/catalogd/catalogd/server"
	"github.com/prometheus/client_golang/prometheus"
)

// sampleVariant is the built-in sample with a set renamed, so that
// each import of a variant is visibly a different catalogue.
func sampleVariant(t *testing.T, dir string, n int) (path, setName string) {
	t.Helper()
	setName = "Base Set (edition " + strconv.Itoa(n) + ")"
	b := bytes.ReplaceAll(data.Sample(), []byte(`"Base Set"`), []byte(`"`+setName+`"`))
	if bytes.Equal(b, data.Sample()) {
		t.Fatal("the sample no longer has a set named Base Set")
	}
	path = filepath.Join(dir, "sample-"+strconv.Itoa(n)+".json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path, setName
}

// importInto imports snapshot over db in process, as catalogd import does.
func importInto(t *testing.T, db, snapshot string) {
	t.Helper()
	if _, err := importer.Import(context.Background(), importer.Config{DB: db, Inputs: []string{snapshot}}); err != nil {
		t.Fatal(err)
	}
}

// realImport is the real catalogue's file, imported once for the test
// process and held in memory (some 30 MB): in process and under the race
// detector an import of it takes half a minute of the processor or more,
// and the parallel tests that serve it would each run one, all at once.
var realImport struct {
	once sync.Once
	file []byte
	err  error
}

// importRealCatalogue puts a copy of the real catalogue, imported, at db.
func importRealCatalogue(t *testing.T, db string) {
	t.Helper()
	realImport.once.Do(func() {
		path := filepath.Join(t.TempDir(), "real.db")
		if _, realImport.err = importer.Import(context.Background(), importer.Config{DB: path, Inputs: []string{realCatalogue}}); realImport.err == nil {
			realImport.file, realImport.err = os.ReadFile(path)
		}
	})
	if realImport.err != nil || len(realImport.file) == 0 {
		t.Fatalf("import the real catalogue: %v (%d bytes)", realImport.err, len(realImport.file))
	}
	if err := os.WriteFile(db, realImport.file, 0o600); err != nil {
		t.Fatal(err)
	}
}

// reloading is sample variant 1 imported at path and served by live,
// whose reloader rl logs to logs and counts in reg.
type reloading struct {
	dir, path string
	live      *store.Live
	rl        *reloader
	logs      *bytes.Buffer
	reg       *prometheus.Registry
}

func newReloading(t *testing.T) *reloading {
	t.Helper()
	dir := t.TempDir()
	r := &reloading{dir: dir, path: filepath.Join(dir, "catalog.db"), logs: &bytes.Buffer{}, reg: prometheus.NewRegistry()}
	first, _ := sampleVariant(t, dir, 1)
	importInto(t, r.path, first)
	seen, err := os.Stat(r.path)
	if err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(r.path)
	if err != nil {
		t.Fatal(err)
	}
	r.live = store.NewLive(db)
	t.Cleanup(func() { r.live.Close() })
	metrics, err := server.NewMetrics(r.reg, r.live)
	if err != nil {
		t.Fatal(err)
	}
	r.rl = newReloader(r.path, r.live, seen, slog.New(slog.NewJSONHandler(r.logs, nil)), metrics)
	return r
}

func TestReloaderSwapsNewImportsAndKeepsServingOnBadFiles(t *testing.T) {
	r := newReloading(t)
	dir, path, live, rl, reg := r.dir, r.path, r.live, r.rl, r.reg
	logs := r.logs
	generation := func() string { return live.Current().Generation() }
	// swapIn imports sample variant n over the file, runs a check, and
	// wants the new import served: a new generation, with the variant's
	// set name.
	swapIn := func(n int, sighup bool, what string) string {
		t.Helper()
		before := generation()
		next, name := sampleVariant(t, dir, n)
		importInto(t, path, next)
		rl.check(sighup)
		if generation() == before || !strings.Contains(setsJSON(t, live.Current(), "intl"), name) {
			t.Fatalf("%s: the new import was not swapped in (generation %s): %s", what, generation(), logs.String())
		}
		return generation()
	}

	gen1 := generation()
	rl.check(false)
	if generation() != gen1 || logs.Len() != 0 {
		t.Fatalf("an unchanged file was reloaded: %s", logs.String())
	}

	// A new import is swapped in, and the old catalogue closes once the
	// request holding it lets go.
	held, release := live.Acquire()
	gen2 := swapIn(2, false, "a new import")
	if !strings.Contains(logs.String(), `"msg":"catalogue reloaded"`) {
		t.Errorf("a swap without its log line: %s", logs.String())
	}
	if held.Generation() != gen1 || !strings.Contains(setsJSON(t, held, "intl"), "Base Set (edition 1)") {
		t.Error("a request holding the old catalogue lost it")
	}
	release()

	// A file that is not a catalogue is reported once; the current one stays.
	logs.Reset()
	garbage := filepath.Join(dir, "garbage")
	if err := os.WriteFile(garbage, []byte("not a catalogue"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(garbage, path); err != nil {
		t.Fatal(err)
	}
	rl.check(false)
	rl.check(false)
	if generation() != gen2 {
		t.Fatal("a bad file replaced the catalogue")
	}
	if n := strings.Count(logs.String(), `"msg":"catalogue reload failed; serving the current catalogue"`); n != 1 {
		t.Errorf("a bad file was reported %d times, want once:\n%s", n, logs.String())
	}
	if !strings.Contains(logs.String(), `"level":"ERROR"`) || !strings.Contains(logs.String(), path) {
		t.Errorf("the failure does not say what and where: %s", logs.String())
	}

	// A copy cut short, with a valid meta page: refused, not a crash.
	logs.Reset()
	good := filepath.Join(t.TempDir(), "good.db")
	variant, _ := sampleVariant(t, dir, 4)
	importInto(t, good, variant)
	whole, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(dir, "cut")
	if err := os.WriteFile(cut, whole[:len(whole)/2+100], 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(cut, path); err != nil {
		t.Fatal(err)
	}
	rl.check(false)
	if generation() != gen2 || !strings.Contains(logs.String(), "cut short") {
		t.Fatalf("a file cut short: generation %s, log %s", generation(), logs.String())
	}

	// SIGHUP retries; a good file then swaps in.
	logs.Reset()
	swapIn(3, true, "SIGHUP")
	logs.Reset()
	rl.check(true)
	if !strings.Contains(logs.String(), `"msg":"catalogue unchanged"`) {
		t.Errorf("SIGHUP on an unchanged file: %s", logs.String())
	}

	// A file that disappears leaves the catalogue being served.
	logs.Reset()
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	gen3 := generation()
	failures := reloadFailures(t, reg)
	rl.check(false)
	rl.check(false)
	if generation() != gen3 || strings.Count(logs.String(), "catalogue file unavailable") != 1 {
		t.Errorf("a removed file: generation %s, log %s", generation(), logs.String())
	}
	// Counted as a failed reload, once, for the alert on failed reloads.
	if got := reloadFailures(t, reg); got != failures+1 {
		t.Errorf("a removed file: %v failed reloads counted, want %v", got, failures+1)
	}
	// SIGHUP while it is gone says so again: the operator asked.
	logs.Reset()
	rl.check(true)
	if generation() != gen3 || strings.Count(logs.String(), "catalogue file unavailable") != 1 {
		t.Errorf("SIGHUP on a removed file: generation %s, log %s", generation(), logs.String())
	}

	// The next import is taken up without a SIGHUP, and a file that goes
	// again is reported again.
	logs.Reset()
	swapIn(4, false, "the file's return")
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	rl.check(false)
	if strings.Count(logs.String(), "catalogue file unavailable") != 1 {
		t.Errorf("a file removed a second time: %s", logs.String())
	}
}

// setsJSON returns the list of sets of zone in db.
func setsJSON(t *testing.T, db *store.DB, zone string) string {
	t.Helper()
	sets, err := db.SetsJSON(zone)
	if err != nil {
		t.Fatal(err)
	}
	return string(sets)
}

// TestSameFileSeesAChangeOfMode: a catalogue that could not be opened for
// its permissions or owner is tried again once they are mended, though
// neither its contents nor its time changed (serve may run as a user that
// root's new file shuts out; root itself opens any file, so what this test
// can watch is sameFile).
func TestSameFileSeesAChangeOfMode(t *testing.T) {
	path := filepath.Join(t.TempDir(), "catalog.db")
	if err := os.WriteFile(path, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	stat := func() fs.FileInfo {
		t.Helper()
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return fi
	}
	before := stat()
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	after := stat()
	if sameFile(before, after) {
		t.Error("a file whose mode changed was taken for the file seen before")
	}
	// chown leaves the mode as it was; its change time moves (a moment
	// later: some file systems keep coarse times).
	time.Sleep(20 * time.Millisecond)
	if err := os.Chown(path, 12345, 12345); err != nil {
		t.Fatal(err)
	}
	owned := stat()
	if sameFile(after, owned) {
		t.Error("a file whose owner changed was taken for the file seen before")
	}
	if !sameFile(owned, stat()) {
		t.Error("an unchanged file was taken for another")
	}
}

// TestReloaderAndTheFileItServes: a copy of the catalogue served, put back
// over a file that was not one, is swapped in although its generation is
// the same, so that the file served before, deleted since, is let go; and
// the file being served cut short in place (a cp or truncate over it) is
// told as that, while the requests that read what is gone fail with
// ErrDamaged rather than end the process.
func TestReloaderAndTheFileItServes(t *testing.T) {
	r := newReloading(t)
	path, live, rl, logs := r.path, r.live, r.rl, r.logs
	db := live.Current()
	whole, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	renameOver := func(b []byte) {
		t.Helper()
		if err := os.WriteFile(path+".new", b, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(path+".new", path); err != nil {
			t.Fatal(err)
		}
	}

	renameOver([]byte("not a catalogue"))
	rl.check(false)
	if live.Current() != db {
		t.Fatal("a file that is not a catalogue was swapped in")
	}
	renameOver(whole)
	rl.check(false)
	copied := live.Current()
	if copied == db || copied.Generation() != db.Generation() {
		t.Fatalf("the copy put back: serving %p (generation %s), want a new file of generation %s: %s", copied, copied.Generation(), db.Generation(), logs.String())
	}
	logs.Reset()
	rl.check(true)
	if live.Current() != copied || !strings.Contains(logs.String(), `"msg":"catalogue unchanged"`) {
		t.Errorf("SIGHUP on the file being served: %s", logs.String())
	}

	// Another catalogue copied over the file being served, in place (as
	// cp does): told, and swapped in.
	logs.Reset()
	other := filepath.Join(t.TempDir(), "other.db")
	variant, _ := sampleVariant(t, r.dir, 2)
	importInto(t, other, variant)
	b, err := os.ReadFile(other)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	rl.check(false)
	if live.Current() == copied || live.Current().Generation() == copied.Generation() ||
		!strings.Contains(logs.String(), "the catalogue file being served was changed in place") || !strings.Contains(logs.String(), `"msg":"catalogue reloaded"`) {
		t.Errorf("a catalogue copied over the file served: generation %s, log %s", live.Current().Generation(), logs.String())
	}
	copied = live.Current()
	whole = b

	logs.Reset()
	if err := os.Truncate(path, int64(len(whole)/4)); err != nil {
		t.Fatal(err)
	}
	rl.check(false)
	if live.Current() != copied || !strings.Contains(logs.String(), "the catalogue file being served was changed in place") {
		t.Errorf("the file served, cut short in place: %s", logs.String())
	}
	for _, id := range []string{"jp-SV1a-001", "intl-base1-4", "chn-SV8-033"} {
		if _, err := copied.AppendCard(nil, id); err != nil && !errors.Is(err, store.ErrDamaged) {
			t.Errorf("card %s of the file cut short: %v, want the card or ErrDamaged", id, err)
		}
	}
	if err := copied.Check(); !errors.Is(err, store.ErrDamaged) || !copied.Damaged() {
		t.Errorf("Check of the file cut short: %v, want ErrDamaged", err)
	}

	// The same catalogue written back in place, as a backup restored with
	// cp: the catalogue whose reads fail is replaced, though its
	// generation is the same.
	if err := os.WriteFile(path, whole, 0o600); err != nil {
		t.Fatal(err)
	}
	rl.check(false)
	if live.Current() == copied || live.Current().Generation() != copied.Generation() {
		t.Fatalf("the file made whole again: still serving the damaged catalogue: %s", logs.String())
	}
	if _, err := live.Current().AppendCard(nil, "jp-SV1a-001"); err != nil {
		t.Errorf("a card of the file made whole again: %v", err)
	}
}
