package catalogbench

import (
	"context"
	"encoding/json"
	"flag"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/catalogd/catalogd/catalog/store"
	"github.com/catalogd/catalogd/importer"
	"github.com/catalogd/catalogd/tools/gen"
	"github.com/catalogd/catalogd/tools/internal/query"
)

// realCatalogue is the real catalogue, in the product's testdata.
const realCatalogue = "../../../testdata/catalogue-real.json.gz"

var (
	realOnce sync.Once
	realDB   *store.DB
	realErr  error
)

// openReal imports the real catalogue once for all benchmarks.
func openReal(b *testing.B) *store.DB {
	b.Helper()
	realOnce.Do(func() {
		dir, err := osMkdirTemp()
		if err != nil {
			realErr = err
			return
		}
		path := filepath.Join(dir, "real.db")
		if _, realErr = importer.Import(context.Background(), importer.Config{DB: path, Inputs: []string{realCatalogue}}); realErr != nil {
			return
		}
		realDB, realErr = store.Open(path)
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
	q    store.SearchQuery
}{
	{"common-ar", store.SearchQuery{Q: "ar"}},
	{"name-pikachu", store.SearchQuery{Q: "pikachu"}},
	{"rare-name-flabebe", store.SearchQuery{Q: "flabébé"}},
	{"name-number-charizard-4", store.SearchQuery{Q: "charizard 4"}},
	{"japanese-pika", store.SearchQuery{Q: "ピカ"}},
	{"chinese-pikachu", store.SearchQuery{Q: "皮卡丘"}},
	{"nothing", store.SearchQuery{Q: "zzqxv"}},
	{"common-ar-zone-jp", store.SearchQuery{Q: "ar", Zone: "jp"}},
	{"name-pikachu-zone-chn", store.SearchQuery{Q: "pikachu", Zone: "chn"}},
	{"japanese-pika-set-SV1a", store.SearchQuery{Q: "ピカ", Set: "SV1a"}},
	{"chinese-set-chn-SV1a", store.SearchQuery{Q: "皮卡丘", Set: "chn-SV1a"}},
	{"number-25-set-sv03.5", store.SearchQuery{Q: "025", Set: "sv03.5"}},
	{"nothing-zone-intl", store.SearchQuery{Q: "zzqxv", Zone: "intl"}},
	// Romanized forms and name groups: a Latin keyboard, another language.
	{"romaji-pikachu-zone-jp", store.SearchQuery{Q: "pikachu", Zone: "jp"}},
	{"pinyin-pikaqiu-zone-chn", store.SearchQuery{Q: "pikaqiu", Zone: "chn"}},
	{"group-charizard-zone-jp", store.SearchQuery{Q: "charizard", Zone: "jp"}},
	{"group-chinese-miaowa-zone-intl", store.SearchQuery{Q: "妙蛙", Zone: "intl"}},
	{"romaji-fushigi", store.SearchQuery{Q: "fushigi"}},
	// Hostile queries: each is cheap to send, and would make a walk of
	// the whole catalogue if the index did not bound it.
	{"hostile-common-term-zone-without-it", store.SearchQuery{Q: "rge", Zone: "jp", Limit: 1}},
	{"hostile-large-zone-chn", store.SearchQuery{Q: "large", Zone: "chn"}},
	{"hostile-one-character-terms", store.SearchQuery{Q: "a q"}},
	{"hostile-one-character-kana", store.SearchQuery{Q: "ピ q"}},
	{"hostile-scripts-that-rarely-meet", store.SearchQuery{Q: "ピカ ar"}},
	{"hostile-100-terms", store.SearchQuery{Q: strings.TrimSpace(strings.Repeat("a e ", 50))}},
	{"hostile-100-distinct-terms", store.SearchQuery{Q: hundredTerms()}},
	{"hostile-200-character-term", store.SearchQuery{Q: strings.Repeat("ar", 100)}},
	{"hostile-repeated-bigrams", store.SearchQuery{Q: strings.Repeat("ar", 8)}},
	// Terms whose grams repeat: one distinct trigram (a character or a
	// digit repeated) or a few (a short period), whose lists hold every
	// name with such a run.
	{"hostile-repeated-digit-5", store.SearchQuery{Q: strings.Repeat("8", 5)}},
	{"hostile-repeated-digit-7", store.SearchQuery{Q: strings.Repeat("1", 7)}},
	{"hostile-repeated-digit-10", store.SearchQuery{Q: strings.Repeat("8", 10)}},
	{"hostile-repeated-digit-20", store.SearchQuery{Q: strings.Repeat("1", 20)}},
	{"hostile-repeated-letter-5", store.SearchQuery{Q: strings.Repeat("a", 5)}},
	{"hostile-repeated-letter-20", store.SearchQuery{Q: strings.Repeat("a", 20)}},
	{"hostile-repeated-kana-10", store.SearchQuery{Q: strings.Repeat("ア", 10)}},
	{"hostile-period-2-digits", store.SearchQuery{Q: strings.Repeat("12", 5)}},
	{"hostile-period-3-digits", store.SearchQuery{Q: strings.Repeat("123", 4)}},
	{"hostile-period-3-letters", store.SearchQuery{Q: strings.Repeat("abc", 4)}},
	{"hostile-number-in-other-zones", store.SearchQuery{Q: "1", Zone: "chn", Set: "chn-SV1a"}},
	{"hostile-number-zone-jp", store.SearchQuery{Q: "25", Zone: "jp"}},
	{"hostile-common-term-other-set", store.SearchQuery{Q: "on", Set: "jp-SV1a"}},
	// Typos (fuzzy): one edit from five letters, two from nine.
	{"fuzzy-charzard", store.SearchQuery{Q: "charzard", Fuzzy: true}},
	{"fuzzy-blastiose", store.SearchQuery{Q: "blastiose", Fuzzy: true}},
	{"fuzzy-pikachy-zone-jp", store.SearchQuery{Q: "pikachy", Zone: "jp", Fuzzy: true}},
	{"fuzzy-charizzrd-two-edits", store.SearchQuery{Q: "charizzrd", Fuzzy: true}},
	{"fuzzy-kana-rizaadoso", store.SearchQuery{Q: "リザードソ", Fuzzy: true}},
	{"fuzzy-name-and-number", store.SearchQuery{Q: "charzard 4", Fuzzy: true}},
	{"fuzzy-exact-pikachu", store.SearchQuery{Q: "pikachu", Fuzzy: true}},
	{"hostile-fuzzy-nothing-near", store.SearchQuery{Q: "qzxjvqzxjv", Fuzzy: true}},
	{"hostile-fuzzy-five-common-letters", store.SearchQuery{Q: "arara", Fuzzy: true}},
	{"hostile-fuzzy-nine-common-letters", store.SearchQuery{Q: "ararararo", Fuzzy: true}},
	{"hostile-fuzzy-200-character-term", store.SearchQuery{Q: strings.Repeat("abcdefghij", 20), Fuzzy: true}},
	{"hostile-fuzzy-33-terms", store.SearchQuery{Q: strings.TrimSpace(strings.Repeat("eevee ", 33)), Fuzzy: true}},
	{"hostile-fuzzy-33-distinct-terms", store.SearchQuery{Q: fuzzyTerms(33), Fuzzy: true}},
	{"hostile-fuzzy-20-nine-letter-terms", store.SearchQuery{Q: fuzzyTerms(-20), Fuzzy: true}},
}

// fuzzyTerms is a query of n distinct five-letter terms of common
// letters, or of -n nine-letter ones, each some edits from many words.
func fuzzyTerms(n int) string {
	length := 5
	if n < 0 {
		n, length = -n, 9
	}
	letters := "aeinorstu"
	var terms []string
	for i := range n {
		var t []byte
		for j := range length {
			t = append(t, letters[(i*7+j*(i+3))%len(letters)])
		}
		terms = append(terms, string(t))
	}
	return strings.Join(terms, " ")
}

// hundredTerms is a query of 100 distinct one-character terms: every
// letter and digit, then kana.
func hundredTerms() string {
	var terms []string
	for r := 'a'; r <= 'z'; r++ {
		terms = append(terms, string(r))
	}
	for r := '0'; r <= '9'; r++ {
		terms = append(terms, string(r))
	}
	for r := 'ア'; len(terms) < 100; r++ {
		terms = append(terms, string(r))
	}
	return strings.Join(terms, " ")
}

func benchmarkSearch(b *testing.B, db *store.DB) {
	for _, c := range searchCases {
		b.Run(c.name, func(b *testing.B) {
			q := c.q
			if q.Limit == 0 {
				q.Limit = 25
			}
			n := 0
			b.ReportAllocs()
			report := reportCPU(b)
			for b.Loop() {
				n = 0
				if err := db.Search(q, func([]byte) { n++ }); err != nil {
					b.Fatal(err)
				}
			}
			report()
			b.ReportMetric(float64(n), "results")
		})
	}
}

func BenchmarkSearchReal(b *testing.B) {
	db := openReal(b)
	reportIndexShare(b, db)
	benchmarkSearch(b, db)
	benchmarkTypicalSearches(b, db)
}

// benchmarkTypicalSearches is the cost of a typical query, against which
// a hostile one is measured: -bench-queries distinct queries (2,000 unless
// set) made of the names and numbers of cards of the catalogue, as a
// search box sends them (a word of a name, letters of one being typed, the
// whole name, a word and the number), each sent once a round. Its
// cpu-ns/op is the mean of one query.
//
// Those of them made of digits alone (a serial number in a name, or part of
// one) are measured again on their own, where there are a hundred or more:
// ten digits make few grams, which many names share.
func benchmarkTypicalSearches(b *testing.B, db *store.DB) {
	queries := typicalQueries(b, db, *benchQueries)
	b.Run("typical-distinct-queries", func(b *testing.B) { benchmarkQueries(b, db, queries, false) })
	b.Run("typical-fuzzy-queries", func(b *testing.B) { benchmarkQueries(b, db, mistyped(queries), true) })
	digits := slices.DeleteFunc(slices.Clone(queries), func(q string) bool {
		return strings.ContainsFunc(q, func(r rune) bool { return (r < '0' || r > '9') && r != ' ' })
	})
	if len(digits) >= 100 {
		b.Run("typical-digit-queries", func(b *testing.B) { benchmarkQueries(b, db, digits, false) })
	}
}

// mistyped returns the queries with their longest term mistyped
// (query.Mistyped).
func mistyped(queries []string) []string {
	rng := rand.New(rand.NewPCG(9, 10))
	out := make([]string, len(queries))
	for i, q := range queries {
		out[i] = query.Mistyped(q, rng)
	}
	return out
}

// benchmarkQueries sends the queries in turn, and reports the processor
// time and the results of one.
func benchmarkQueries(b *testing.B, db *store.DB, queries []string, fuzzy bool) {
	found, i := 0, 0
	report := reportCPU(b)
	for b.Loop() {
		q := store.SearchQuery{Q: queries[i%len(queries)], Limit: 25, Fuzzy: fuzzy}
		i++
		if err := db.Search(q, func([]byte) { found++ }); err != nil {
			b.Fatal(err)
		}
	}
	report()
	b.ReportMetric(float64(found)/float64(b.N), "results")
	b.ReportMetric(float64(len(queries)), "queries")
}

// typicalQueries makes n distinct queries, as the load harness does
// (query.Distinct), from the first page of sets drawn at random (seeded)
// from db.
func typicalQueries(b *testing.B, db *store.DB, n int) []string {
	b.Helper()
	sets := setIDs(b, db)
	rng := rand.New(rand.NewPCG(7, 8))
	var cards []query.Card
	for range min(n, len(sets)) {
		if _, err := db.SetCards(sets[rng.IntN(len(sets))], 1, 50, func(card []byte) {
			var c query.Card
			if json.Unmarshal(card, &c) == nil {
				cards = append(cards, c)
			}
		}); err != nil {
			b.Fatal(err)
		}
	}
	queries := query.Distinct(cards, n, rng)
	if len(queries) < n {
		b.Fatalf("only %d distinct queries from the catalogue's names", len(queries))
	}
	return queries
}

var (
	genCards    = flag.Int("gen-cards", 100_000, "cards in the generated catalogue of BenchmarkSearchGenerated")
	genDistinct = flag.Bool("gen-distinct", false, "names that almost never repeat in the generated catalogue (the index's worst case)")
	benchDB     = flag.String("bench-db", "", "a catalogue file for BenchmarkSearchGenerated, in place of a generated one")
	// With as many queries as the benchmark's iterations (-benchtime
	// 20000x -bench-queries 20000), each query is sent once, as long-tail
	// traffic sends them: the pages of a query asked again are in the
	// processor's caches, which flatters a large catalogue most.
	benchQueries = flag.Int("bench-queries", 2000, "distinct typical queries of BenchmarkSearchGenerated and BenchmarkSearchReal")
)

// BenchmarkSearchGenerated runs the same queries on a generated catalogue:
//
//	go test -C tools ./bench/catalog -run '^$' -bench SearchGenerated -args -gen-cards=1000000 -gen-distinct
//
// or on a catalogue already imported, with -bench-db FILE.
func BenchmarkSearchGenerated(b *testing.B) {
	db := openGenerated(b)
	reportIndexShare(b, db)
	benchmarkSearch(b, db)
	benchmarkTypicalSearches(b, db)
}

// openGenerated imports a generated catalogue of -gen-cards cards into a
// directory of the benchmark's own.
func openGenerated(b *testing.B) *store.DB {
	b.Helper()
	if *benchDB != "" {
		db, err := store.Open(*benchDB)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { db.Close() })
		return db
	}
	db, err := importGenerated(b.TempDir(), gen.Options{Cards: *genCards, Seed: 1, DistinctNames: *genDistinct})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	return db
}

// importGenerated imports a catalogue generated with opts into dir.
func importGenerated(dir string, opts gen.Options) (*store.DB, error) {
	snapshot := filepath.Join(dir, "snapshot.json")
	if _, err := gen.WriteFile(snapshot, opts); err != nil {
		return nil, err
	}
	defer os.Remove(snapshot)
	path := filepath.Join(dir, "generated.db")
	if _, err := importer.Import(context.Background(), importer.Config{DB: path, Inputs: []string{snapshot}}); err != nil {
		return nil, err
	}
	return store.Open(path)
}

// reportIndexShare logs how much of the file of db the search index takes.
func reportIndexShare(b *testing.B, db *store.DB) {
	sizes, err := db.Sizes()
	if err != nil {
		b.Fatal(err)
	}
	st, err := os.Stat(db.Path())
	if err != nil {
		b.Fatal(err)
	}
	index := sizes["numbers"] + sizes["postings"]
	b.Logf("file %.1f MB; search index %.1f MB (%.0f%%: entries %.1f MB, postings %.1f MB); cards %.1f MB",
		mib(st.Size()), mib(index), 100*float64(index)/float64(st.Size()), mib(sizes["numbers"]), mib(sizes["postings"]), mib(sizes["cards"]))
}

func mib(n int64) float64 { return float64(n) / (1 << 20) }

// reportCPU locks the benchmark to its thread and returns what reports,
// after the loop, the thread's processor time per op as cpu-ns/op: the
// figure to read on a shared machine, where ns/op counts the time other
// processes held the core too.
func reportCPU(b *testing.B) func() {
	runtime.LockOSThread()
	start := threadCPU()
	return func() {
		cpu := threadCPU() - start
		runtime.UnlockOSThread()
		if cpu > 0 && b.N > 0 {
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
		}
	}
}
