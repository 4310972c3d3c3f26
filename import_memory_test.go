package main

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/catalogd/catalogd/internal/bench/procfs"
	"github.com/catalogd/catalogd/internal/gen"
)

// importAnonBound is what `catalogd import` may hold in anonymous memory,
// whatever the snapshot: its buffers are bounded, and so is the heap the
// collector lets them grow to; a small VM gives it 256 MiB.
const importAnonBound = 200 << 20

// TestImportMemoryIsBounded pipes snapshots whose names do not repeat (the
// worst case for the search index) into `catalogd import -` and samples the
// process's anonymous memory as it runs: the same bound holds for a
// catalogue ten times larger. Both go into one file, so the second import
// also compares itself, card by card, with the first.
func TestImportMemoryIsBounded(t *testing.T) {
	exe := productionBinary(t)
	db := filepath.Join(t.TempDir(), "catalog.db")
	for _, cards := range []int{15_000, 150_000} {
		peak := importPeakAnon(t, exe, db, gen.Options{Cards: cards, Seed: 1, DistinctNames: true})
		t.Logf("%d cards: peak RssAnon %d MiB", cards, peak>>20)
		if peak > importAnonBound {
			t.Errorf("importing %d cards: peak RssAnon %d MiB, over %d MiB", cards, peak>>20, importAnonBound>>20)
		}
	}
}

// productionBinary returns catalogd as it ships: this test binary, or when
// it is built with the race detector, whose shadow memory would be measured
// too, catalogd built without it.
func productionBinary(t *testing.T) string {
	t.Helper()
	if !raceDetector {
		exe, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		return exe
	}
	exe := filepath.Join(t.TempDir(), "catalogd")
	if err := procfs.Build(t.Context(), exe, "."); err != nil {
		t.Fatal(err)
	}
	return exe
}

// importPeakAnon imports the generated snapshot of opt from standard input
// into the catalogue db and returns the most anonymous memory the import
// process held.
func importPeakAnon(t *testing.T, exe, db string, opt gen.Options) int64 {
	t.Helper()
	cmd := exec.Command(exe, "import", "--db", db, "-")
	cmd.Env = append(procfs.ChildEnv(), beCatalogd+"=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	written := make(chan error, 1)
	go func() {
		_, err := gen.Write(stdin, opt)
		written <- errors.Join(err, stdin.Close())
	}()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	var peak procfs.Mem
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-exited:
			if werr := <-written; werr != nil && !errors.Is(werr, io.ErrClosedPipe) {
				t.Fatalf("write the snapshot: %v", werr)
			}
			if err != nil {
				t.Fatalf("import of %d cards: %v", opt.Cards, err)
			}
			if peak.Anon == 0 {
				t.Fatal("no memory figure was read while the import ran")
			}
			return peak.Anon
		case <-tick.C:
			if m, err := procfs.ReadMem(cmd.Process.Pid); err == nil {
				peak.Max(m)
			}
		}
	}
}
