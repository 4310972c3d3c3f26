package catalogbench

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/catalogd/catalogd/catalog/store"
)

// autocompleteCases are what a search box sends as a person types: one
// character, a common prefix, a name, in each script, with a zone, and
// the hostile ones: a hundred terms, terms whose names rarely meet, the
// longest prefix, a last term that runs on past a common word.
var autocompleteCases = []struct {
	name string
	q    store.AutocompleteQuery
}{
	{"one-character-p", store.AutocompleteQuery{Q: "p"}},
	{"one-character-kana", store.AutocompleteQuery{Q: "ピ"}},
	{"one-character-han", store.AutocompleteQuery{Q: "皮"}},
	{"one-character-digit", store.AutocompleteQuery{Q: "1"}},
	{"common-prefix-pika", store.AutocompleteQuery{Q: "pika"}},
	{"common-prefix-char-zone-jp", store.AutocompleteQuery{Q: "char", Zone: "jp"}},
	{"common-prefix-ex", store.AutocompleteQuery{Q: "ex"}},
	{"name-pikachu", store.AutocompleteQuery{Q: "pikachu"}},
	{"kana-pika", store.AutocompleteQuery{Q: "ピカ"}},
	{"two-terms-charizard-e", store.AutocompleteQuery{Q: "charizard e"}},
	{"name-and-number-energy-7", store.AutocompleteQuery{Q: "energy 7"}},
	{"name-and-number-aegislash-0", store.AutocompleteQuery{Q: "aegislash 0"}},
	{"nothing", store.AutocompleteQuery{Q: "zzqxv"}},
	{"hostile-100-distinct-terms", store.AutocompleteQuery{Q: hundredTerms()}},
	{"hostile-100-terms", store.AutocompleteQuery{Q: strings.TrimSpace(strings.Repeat("a e ", 50))}},
	{"hostile-rare-then-common", store.AutocompleteQuery{Q: "qj a"}},
	{"hostile-kana-then-latin", store.AutocompleteQuery{Q: "ピ a"}},
	{"hostile-200-character-prefix", store.AutocompleteQuery{Q: strings.Repeat("a", 200)}},
	{"hostile-repeated-digit", store.AutocompleteQuery{Q: "11111"}},
	{"hostile-common-word-then-a-stop", store.AutocompleteQuery{Q: "v."}},
	{"hostile-common-word-then-a-hyphen", store.AutocompleteQuery{Q: "e-"}},
	{"hostile-hyphened-common-grams", store.AutocompleteQuery{Q: "n-ex"}},
	{"hostile-two-terms-hyphened", store.AutocompleteQuery{Q: "e a-e"}},
	{"hostile-hyphens", store.AutocompleteQuery{Q: "a-e-a-e-a-e"}},
	{"hostile-stops", store.AutocompleteQuery{Q: "v.v.v"}},
}

func benchmarkAutocomplete(b *testing.B, db *store.DB) {
	for _, c := range autocompleteCases {
		b.Run(c.name, func(b *testing.B) {
			q := c.q
			q.Limit = 10
			n := 0
			b.ReportAllocs()
			report := reportCPU(b)
			for b.Loop() {
				names, err := db.Autocomplete(q)
				if err != nil {
					b.Fatal(err)
				}
				n = len(names)
			}
			report()
			b.ReportMetric(float64(n), "names")
		})
	}
	prefixes := typedPrefixes(typicalQueries(b, db, 2000))
	b.Run("typical-distinct-prefixes", func(b *testing.B) {
		found, i := 0, 0
		report := reportCPU(b)
		for b.Loop() {
			names, err := db.Autocomplete(store.AutocompleteQuery{Q: prefixes[i%len(prefixes)], Limit: 10})
			if err != nil {
				b.Fatal(err)
			}
			found += len(names)
			i++
		}
		report()
		b.ReportMetric(float64(found)/float64(b.N), "names")
		b.ReportMetric(float64(len(prefixes)), "queries")
	})
	// The long tail: each prefix once, its own time kept, and the dearest
	// reported, so that no query hides behind the mean (run it with
	// -benchtime 1x: one op is every prefix).
	b.Run("every-prefix-once", func(b *testing.B) {
		type timed struct {
			q string
			d time.Duration
		}
		var all []timed
		for b.Loop() {
			all = all[:0]
			for _, q := range prefixes {
				start := time.Now()
				if _, err := db.Autocomplete(store.AutocompleteQuery{Q: q, Limit: 10}); err != nil {
					b.Fatal(err)
				}
				all = append(all, timed{q, time.Since(start)})
			}
		}
		slices.SortFunc(all, func(a, b timed) int { return cmp.Compare(b.d, a.d) })
		var total time.Duration
		for _, t := range all {
			total += t.d
		}
		b.ReportMetric(float64(total.Nanoseconds())/float64(len(all)), "mean-ns")
		b.ReportMetric(float64(all[len(all)/2].d.Nanoseconds()), "p50-ns")
		b.ReportMetric(float64(all[len(all)/100].d.Nanoseconds()), "p99-ns")
		b.ReportMetric(float64(all[0].d.Nanoseconds()), "slowest-ns")
		b.ReportMetric(float64(len(prefixes)), "queries")
		for _, t := range all[:min(10, len(all))] {
			b.Logf("%v %q", t.d, t.q)
		}
	})
}

// typedPrefixes returns what a person has typed on the way to each query:
// its terms before the last, and the first one to all characters of the
// last, each prefix once.
func typedPrefixes(queries []string) []string {
	rng := rand.New(rand.NewPCG(11, 12))
	var out []string
	for _, q := range queries {
		terms := strings.Fields(q)
		last := []rune(terms[len(terms)-1])
		typed := strings.Join(append(terms[:len(terms)-1:len(terms)-1], string(last[:1+rng.IntN(len(last))])), " ")
		out = append(out, typed)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func BenchmarkAutocompleteReal(b *testing.B) { benchmarkAutocomplete(b, openReal(b)) }

// BenchmarkAutocompleteGenerated runs the same queries on a generated
// catalogue, or on one already imported, with -bench-db FILE:
//
//	go test -C tools ./bench/catalog -run '^$' -bench AutocompleteGenerated -args -bench-db FILE
func BenchmarkAutocompleteGenerated(b *testing.B) { benchmarkAutocomplete(b, openGenerated(b)) }
