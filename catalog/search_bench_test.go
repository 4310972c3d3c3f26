package catalog_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"

	"github.com/catalogd/catalogd/catalog"
	"github.com/catalogd/catalogd/importer"
)

var (
	realOnce sync.Once
	realDB   *catalog.DB
	realErr  error
)

// openReal imports the real catalogue once for all benchmarks.
func openReal(b *testing.B) *catalog.DB {
	b.Helper()
	realOnce.Do(func() {
		dir, err := osMkdirTemp()
		if err != nil {
			realErr = err
			return
		}
		path := filepath.Join(dir, "real.db")
		if _, realErr = importer.Import(context.Background(), importer.Config{DB: path, Inputs: []string{"../testdata/catalogue-real.json.gz"}}); realErr != nil {
			return
		}
		realDB, realErr = catalog.Open(path)
	})
	if realErr != nil {
		b.Fatal(realErr)
	}
	return realDB
}

// searchCases are the queries of the search issue: a common two-letter term,
// a name, a rare name, a name and a number, Japanese, Chinese, nothing, and
// each with a zone or set filter.
var searchCases = []struct {
	name string
	q    catalog.SearchQuery
}{
	{"common-ar", catalog.SearchQuery{Q: "ar"}},
	{"name-pikachu", catalog.SearchQuery{Q: "pikachu"}},
	{"rare-name-flabebe", catalog.SearchQuery{Q: "flabébé"}},
	{"name-number-charizard-4", catalog.SearchQuery{Q: "charizard 4"}},
	{"japanese-pika", catalog.SearchQuery{Q: "ピカ"}},
	{"chinese-pikachu", catalog.SearchQuery{Q: "皮卡丘"}},
	{"nothing", catalog.SearchQuery{Q: "zzqxv"}},
	{"common-ar-zone-jp", catalog.SearchQuery{Q: "ar", Zone: "jp"}},
	{"name-pikachu-zone-chn", catalog.SearchQuery{Q: "pikachu", Zone: "chn"}},
	{"japanese-pika-set-SV1a", catalog.SearchQuery{Q: "ピカ", Set: "SV1a"}},
	{"chinese-set-chn-SV1a", catalog.SearchQuery{Q: "皮卡丘", Set: "chn-SV1a"}},
	{"number-25-set-sv03.5", catalog.SearchQuery{Q: "025", Set: "sv03.5"}},
	{"nothing-zone-intl", catalog.SearchQuery{Q: "zzqxv", Zone: "intl"}},
}

func benchmarkSearch(b *testing.B, db *catalog.DB) {
	for _, c := range searchCases {
		b.Run(c.name, func(b *testing.B) {
			q := c.q
			q.Limit = 25
			n := 0
			b.ReportAllocs()
			for b.Loop() {
				n = 0
				if err := db.Search(q, func([]byte) { n++ }); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n), "results")
		})
	}
}

func BenchmarkSearchReal(b *testing.B) { benchmarkSearch(b, openReal(b)) }
