package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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
// also compares itself, card by card, with the first. The same holds when
// every card comes before its set, which the import can only check at the
// end; when every card names a set that never comes, which fails; when
// names are long (spaces fold to one, so that the index stays small and the
// test quick); and when card ids come in no order, as UUIDs do.
func TestImportMemoryIsBounded(t *testing.T) {
	exe := productionBinary(t)
	for _, shape := range []struct {
		name     string
		sizes    []int
		write    func(w io.Writer, cards int) error
		wantExit int
	}{
		{"names that do not repeat", []int{15_000, 150_000}, func(w io.Writer, cards int) error {
			_, err := gen.Write(w, gen.Options{Cards: cards, Seed: 1, DistinctNames: true})
			return err
		}, 0},
		{"cards before their sets", []int{15_000, 150_000}, func(w io.Writer, cards int) error {
			_, err := gen.Write(w, gen.Options{Cards: cards, Seed: 1, DistinctNames: true, CardsFirst: true})
			return err
		}, 0},
		{"cards of sets that never come", []int{30_000, 300_000}, writeCardsOfMissingSets, 1},
		{"names of 8,000 bytes", []int{3_000, 30_000}, writeLongNames, 0},
		{"card ids in no order", []int{100_000, 1_000_000}, writeRandomIDs, 0},
	} {
		db := filepath.Join(t.TempDir(), "catalog.db")
		for _, cards := range shape.sizes {
			peak := importPeakAnon(t, exe, db, cards, shape.write, shape.wantExit)
			t.Logf("%s, %d cards: peak RssAnon %d MiB", shape.name, cards, peak>>20)
			if peak > importAnonBound {
				t.Errorf("importing %d cards, %s: peak RssAnon %d MiB, over %d MiB", cards, shape.name, peak>>20, importAnonBound>>20)
			}
		}
	}
}

// writeLongNames writes a snapshot of one set whose cards' names do not
// repeat and are 8,000 bytes long.
func writeLongNames(w io.Writer, cards int) error {
	bw := bufio.NewWriter(w)
	bw.WriteString(`{"sets":[{"id":"intl-s","code":"s","name":"S","zone":"intl","cardCount":1}],"cards":[`)
	pad := strings.Repeat(" ", 8000)
	for i := range cards {
		if i > 0 {
			bw.WriteByte(',')
		}
		fmt.Fprintf(bw, "\n"+`{"id":"intl-s-%d","name":"Card %d%send","setName":"S","setCode":"s","number":"%d","language":"en","zone":"intl"}`, i, i, pad, i)
	}
	bw.WriteString("\n]}\n")
	return bw.Flush()
}

// writeRandomIDs writes a snapshot of one set whose small cards have ids of
// 32 hexadecimal digits drawn at random, as UUIDs are: each id lands
// anywhere in the index of ids.
func writeRandomIDs(w io.Writer, cards int) error {
	bw := bufio.NewWriter(w)
	bw.WriteString(`{"sets":[{"id":"intl-s","code":"s","name":"S","zone":"intl","cardCount":1}],"cards":[`)
	rng := rand.New(rand.NewPCG(uint64(cards), 1))
	for i := range cards {
		if i > 0 {
			bw.WriteByte(',')
		}
		fmt.Fprintf(bw, "\n"+`{"id":"%016x%016x","name":"Card %d","setName":"S","setCode":"s","number":"%d","language":"en","zone":"intl"}`, rng.Uint64(), rng.Uint64(), i, i)
	}
	bw.WriteString("\n]}\n")
	return bw.Flush()
}

// writeCardsOfMissingSets writes a snapshot of cards each of which names a
// set of its own, and no sets: each reference must be kept until every set
// is known, and none is.
func writeCardsOfMissingSets(w io.Writer, cards int) error {
	bw := bufio.NewWriter(w)
	bw.WriteString(`{"cards":[`)
	for i := range cards {
		if i > 0 {
			bw.WriteByte(',')
		}
		fmt.Fprintf(bw, "\n"+`{"id":"intl-x%d-1","name":"Card %d","setName":"Set %d","setCode":"x%d","number":"1","language":"en","zone":"intl"}`, i, i, i, i)
	}
	bw.WriteString("\n" + `],"sets":[]}` + "\n")
	return bw.Flush()
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

// importPeakAnon imports the snapshot write writes, of so many cards, from
// standard input into the catalogue db, and returns the most anonymous
// memory the import process held. The import must exit with wantExit.
func importPeakAnon(t *testing.T, exe, db string, cards int, write func(io.Writer, int) error, wantExit int) int64 {
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
		err := write(stdin, cards)
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
			if code := cmd.ProcessState.ExitCode(); code != wantExit {
				t.Fatalf("import of %d cards: %v, want exit status %d", cards, err, wantExit)
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
