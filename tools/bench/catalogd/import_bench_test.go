package catalogdbench

import (
	"bufio"
	"encoding/json"
	"flag"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/catalogd/catalogd/tools/gen"
	"github.com/catalogd/catalogd/tools/internal/procfs"
)

var (
	importCards    = flag.Int("import-cards", 1_000_000, "cards in the generated snapshot of BenchmarkImportCommand")
	importDistinct = flag.Bool("import-distinct", false, "names that almost never repeat in BenchmarkImportCommand's snapshot: the worst case for the index")
	importPerSet   = flag.Int("import-per-set", gen.DefaultCardsPerSet, "average cards per set of BenchmarkImportCommand's snapshot")
	importSnapshot = flag.String("import-snapshot", "", "a snapshot for BenchmarkImportCommand, in place of a generated one")
)

// BenchmarkImportCommand measures catalogd import, the command, on a
// generated snapshot (docs/BENCHMARKS.md, "Import at any size"): "decode"
// reads the snapshot record by record with encoding/json, the same reading
// work without validation or writing, as the baseline; "import" runs
// catalogd import into a new catalogue and samples its memory from /proc
// every 10 ms. Peak anonymous memory is what the import
// itself holds, where peak RSS also counts the pages of the file it writes.
// With -count N the two alternate, so each import has a decode beside it.
func BenchmarkImportCommand(b *testing.B) {
	if raceDetector {
		b.Fatal("run the benchmarks without -race: the race detector's cost would be measured")
	}
	buildCatalogd(b)
	dir := b.TempDir()
	snapshot := *importSnapshot
	if snapshot == "" {
		snapshot = filepath.Join(dir, "snapshot.json")
		opt := gen.Options{Cards: *importCards, Seed: 1, CardsPerSet: *importPerSet, DistinctNames: *importDistinct}
		if _, err := gen.WriteFile(snapshot, opt); err != nil {
			b.Fatal(err)
		}
	}
	st, err := os.Stat(snapshot)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("decode", func(b *testing.B) {
		b.SetBytes(st.Size())
		for b.Loop() {
			if err := decodeWithEncodingJSON(snapshot); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("import", func(b *testing.B) {
		b.SetBytes(st.Size())
		db := filepath.Join(dir, "catalog.db")
		var cpu time.Duration
		var peak procfs.Mem
		for b.Loop() {
			if err := os.Remove(db); err != nil && !os.IsNotExist(err) {
				b.Fatal(err)
			}
			cmd := benchCatalogd(b, "import", "--db", db, snapshot)
			cmd.Stderr = os.Stderr
			if err := cmd.Start(); err != nil {
				b.Fatal(err)
			}
			mem := procfs.SampleMem(cmd.Process.Pid)
			err := cmd.Wait()
			peak.Max(mem.Stop())
			if err != nil {
				b.Fatalf("catalogd import: %v", err)
			}
			cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		}
		file, err := os.Stat(db)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
		b.ReportMetric(float64(peak.Anon)/(1<<20), "peak-anon-MiB")
		b.ReportMetric(float64(peak.RSS)/(1<<20), "peak-rss-MiB")
		b.ReportMetric(float64(file.Size())/1e6, "file-MB")
	})
}

// The records as encoding/json would decode them.
type (
	decodedSet struct {
		ID         string  `json:"id"`
		Code       string  `json:"code"`
		Name       string  `json:"name"`
		Zone       string  `json:"zone"`
		ReleasedOn *string `json:"releasedOn"`
		CardCount  int64   `json:"cardCount"`
	}
	decodedCard struct {
		ID              string  `json:"id"`
		Name            string  `json:"name"`
		SetName         string  `json:"setName"`
		SetCode         string  `json:"setCode"`
		Number          string  `json:"number"`
		Language        string  `json:"language"`
		Year            *int64  `json:"year"`
		Variant         string  `json:"variant"`
		Rarity          *string `json:"rarity"`
		ImageURL        *string `json:"imageUrl"`
		Zone            string  `json:"zone"`
		TotalCards      *int64  `json:"totalCards"`
		Illustrator     *string `json:"illustrator"`
		MarketAID       *string `json:"marketAId"`
		MarketAPath     *string `json:"marketAPath"`
		MarketBID       *string `json:"marketBId"`
		ScanFallbackURL *string `json:"scanFallbackUrl"`
	}
)

// decodeWithEncodingJSON streams the snapshot record by record.
func decodeWithEncodingJSON(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	dec := json.NewDecoder(bufio.NewReaderSize(f, 1<<20))
	if _, err := dec.Token(); err != nil { // {
		return err
	}
	for dec.More() {
		member, err := dec.Token()
		if err != nil {
			return err
		}
		if _, err := dec.Token(); err != nil { // [
			return err
		}
		for dec.More() {
			if member == "sets" {
				err = dec.Decode(&decodedSet{})
			} else {
				err = dec.Decode(&decodedCard{})
			}
			if err != nil {
				return err
			}
		}
		if _, err := dec.Token(); err != nil && err != io.EOF { // ]
			return err
		}
	}
	return nil
}
