package importerbench

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/catalogd/catalogd/importer"
	"github.com/catalogd/catalogd/tools/gen"
)

var benchCards = flag.Int("import-cards", 100_000, "cards in the generated snapshot of BenchmarkImport")

// BenchmarkImport imports a generated snapshot of -import-cards cards (sets
// first, then cards in the order of their sets, as the generator writes them)
// into a new catalogue file, every step of a real import included: reading,
// validation, the bbolt writes, the search index, fsync and rename.
//
//	go test -C tools ./bench/importer -run '^$' -bench Import -benchmem -args -import-cards=1000000
//
// MB/s is over the snapshot's bytes.
func BenchmarkImport(b *testing.B) {
	dir := b.TempDir()
	snapshot := filepath.Join(dir, "snapshot.json")
	if _, err := gen.WriteFile(snapshot, gen.Options{Cards: *benchCards, Seed: 1}); err != nil {
		b.Fatal(err)
	}
	st, err := os.Stat(snapshot)
	if err != nil {
		b.Fatal(err)
	}
	db := filepath.Join(dir, "catalog.db")

	b.SetBytes(st.Size())
	b.ReportAllocs()
	for b.Loop() {
		if _, err := importer.Import(context.Background(), importer.Config{DB: db, Inputs: []string{snapshot}}); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if dbSt, err := os.Stat(db); err == nil {
		b.ReportMetric(float64(dbSt.Size())/float64(st.Size()), "file/json")
	}
}
