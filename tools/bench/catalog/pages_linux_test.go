package catalogbench

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"testing"
	"unsafe"

	"github.com/catalogd/catalogd/catalog/store"
	"github.com/catalogd/catalogd/tools/gen"
	"golang.org/x/sys/unix"
)

// BenchmarkPagesRead counts the pages of the file that one request of each
// catalogue route reads, on a catalogue of -gen-cards cards or the file of
// -bench-db:
//
//	go test -C tools ./bench/catalog -run '^$' -bench PagesRead -benchtime 300x -args -bench-db FILE
//
// Before each request the file's pages are dropped from the page cache
// (posix_fadvise DONTNEED, with no other mapping of it open: the
// counter's own never faults a page in) and the catalogue opened afresh;
// after it, mincore tells how many of the file's pages are in the page
// cache again. bbolt maps the file with MADV_RANDOM, so a page fault
// reads the one page it needs and nothing around it: what came back is
// what the request touched. The pages Open itself reads (the meta pages,
// the roots of the buckets, what it loads) are left out, so a request's
// count is its descents and what it reads at their ends. pages/op is the
// mean, max-pages the dearest request, log2-cards the catalogue's size
// for reading the two against it. The requests are drawn at random
// (seeded) from the whole catalogue: cards and pages of sets at random,
// the typical searches and their prefixes of BenchmarkSearchGenerated
// and BenchmarkAutocompleteGenerated.
//
// It reads the disk, so a request takes milliseconds; and it leaves the
// file out of the page cache.
func BenchmarkPagesRead(b *testing.B) {
	db := openGenerated(b)
	path := db.Path()
	t := drawTargets(b, db, 1000)
	total := int64(0)
	for _, z := range db.Info().Zones {
		total += z.Cards
	}
	if err := db.Close(); err != nil {
		b.Fatal(err)
	}
	counter := newPageCounter(b, path)

	routes := pageRoutes(t)
	for _, r := range routes {
		b.Run(r.name, func(b *testing.B) {
			var sum, most, dearest int
			i := 0
			for b.Loop() {
				n := counter.pages(b, func(db *store.DB) error { return r.read(db, i) })
				sum += n
				if n > most {
					most, dearest = n, i
				}
				i++
			}
			b.Logf("the dearest: request %d, %s", dearest, t.describe(r.name, dearest))
			b.ReportMetric(float64(sum)/float64(b.N), "pages/op")
			b.ReportMetric(float64(most), "max-pages")
			b.ReportMetric(math.Log2(float64(total)), "log2-cards")
		})
	}
}

// pageRoute is one catalogue route as BenchmarkPagesRead and
// TestPagesGrowWithTheLogarithm send it: read sends its i-th request of
// the targets. descents counts the B+tree descents of one request, for
// the routes whose pages are bounded by them alone; 0 for those that also
// walk lists.
type pageRoute struct {
	name     string
	descents int
	read     func(db *store.DB, i int) error
}

// pageRoutes are the catalogue's routes, sending the targets t.
func pageRoutes(t targets) []pageRoute {
	return []pageRoute{
		{"getCard", 2, func(db *store.DB, i int) error {
			_, err := db.AppendCard(nil, t.cards[i%len(t.cards)].id)
			return err
		}},
		{"getCards-100", 0, func(db *store.DB, i int) error {
			ids := make([]string, 0, 100)
			for j := range 100 {
				ids = append(ids, t.cards[(i*100+j)%len(t.cards)].id)
			}
			return db.Cards(ids, func([]byte) {}, func(id string) {})
		}},
		{"getSetCardsByNumber", 3, func(db *store.DB, i int) error {
			c := t.cards[i%len(t.cards)]
			return db.SetCardsByNumber(c.set, c.number, func([]byte) {})
		}},
		{"listSetCards", 4, func(db *store.DB, i int) error {
			p := t.pages[i%len(t.pages)]
			_, err := db.SetCards(p.set, p.page, 50, func([]byte) {})
			return err
		}},
		{"searchCards", 0, func(db *store.DB, i int) error {
			return db.Search(store.SearchQuery{Q: t.queries[i%len(t.queries)], Limit: 20}, func([]byte) {})
		}},
		{"searchCards-fuzzy", 0, func(db *store.DB, i int) error {
			return db.Search(store.SearchQuery{Q: t.mistyped[i%len(t.mistyped)], Limit: 20, Fuzzy: true}, func([]byte) {})
		}},
		{"autocompleteNames", 0, func(db *store.DB, i int) error {
			_, err := db.Autocomplete(store.AutocompleteQuery{Q: t.prefixes[i%len(t.prefixes)], Limit: 10})
			return err
		}},
	}
}

// targets are the requests BenchmarkPagesRead sends.
type targets struct {
	cards             []lookupTarget
	pages             []pageTarget
	queries, mistyped []string
	prefixes          []string
}

type lookupTarget struct{ id, set, number string }

type pageTarget struct {
	set  string
	page int64
}

// describe names the i-th request of a route, as its read sends it.
func (t targets) describe(route string, i int) string {
	switch route {
	case "searchCards":
		return fmt.Sprintf("q=%q", t.queries[i%len(t.queries)])
	case "searchCards-fuzzy":
		return fmt.Sprintf("q=%q", t.mistyped[i%len(t.mistyped)])
	case "autocompleteNames":
		return fmt.Sprintf("q=%q", t.prefixes[i%len(t.prefixes)])
	case "listSetCards":
		return fmt.Sprintf("%+v", t.pages[i%len(t.pages)])
	}
	return fmt.Sprintf("%+v", t.cards[i%len(t.cards)])
}

// drawTargets draws n cards and n pages of 50 at random from db, a set
// at random and then a page of it, and n typical queries.
func drawTargets(b *testing.B, db *store.DB, n int) targets {
	b.Helper()
	t := drawLookups(b, db, n)
	t.queries = typicalQueries(b, db, n)
	t.mistyped = mistyped(t.queries)
	t.prefixes = typedPrefixes(t.queries)
	rng := rand.New(rand.NewPCG(5, 6))
	rng.Shuffle(len(t.prefixes), func(i, j int) { t.prefixes[i], t.prefixes[j] = t.prefixes[j], t.prefixes[i] })
	return t
}

// drawLookups draws n cards and n pages of 50 at random from db: a set
// at random, then a page of it, then a card of the page.
func drawLookups(b testing.TB, db *store.DB, n int) targets {
	b.Helper()
	sets := setIDs(b, db)
	rng := rand.New(rand.NewPCG(3, 4))
	var t targets
	for tries := 0; len(t.cards) < n; tries++ {
		if tries == 100*n {
			b.Fatal("the catalogue's sets hold too few cards")
		}
		set := sets[rng.IntN(len(sets))]
		var page []lookupTarget
		total, err := db.SetCards(set, 1, 1, func([]byte) {})
		if err != nil || total == 0 {
			continue
		}
		p := 1 + rng.Int64N((total+49)/50)
		t.pages = append(t.pages, pageTarget{set, p})
		if _, err := db.SetCards(set, p, 50, func(card []byte) {
			var c struct{ ID, Number string }
			if json.Unmarshal(card, &c) == nil {
				page = append(page, lookupTarget{c.ID, set, c.Number})
			}
		}); err != nil {
			b.Fatal(err)
		}
		if len(page) > 0 {
			t.cards = append(t.cards, page[rng.IntN(len(page))])
		}
	}
	return t
}

// pageCounter counts the pages of one catalogue file that are in the
// page cache, through a mapping of its own that is never read: mincore
// says which pages the kernel holds, and the mapping faults none in.
type pageCounter struct {
	path string
	file *os.File
	data []byte
	in   []byte
}

func newPageCounter(b testing.TB, path string) *pageCounter {
	b.Helper()
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		b.Fatal(err)
	}
	data, err := unix.Mmap(int(f.Fd()), 0, int(st.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		f.Close()
		b.Fatal(err)
	}
	pc := &pageCounter{path: path, file: f, data: data, in: make([]byte, (len(data)+os.Getpagesize()-1)/os.Getpagesize())}
	b.Cleanup(pc.close)
	return pc
}

// close unmaps the file and closes it; again, it does nothing.
func (pc *pageCounter) close() {
	if pc.data != nil {
		unix.Munmap(pc.data)
		pc.file.Close()
		pc.data = nil
	}
}

// cached returns how many of the file's pages are in the page cache.
func (pc *pageCounter) cached(b testing.TB) int {
	// x/sys/unix has no wrapper for mincore(2).
	_, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(unsafe.SliceData(pc.data))), uintptr(len(pc.data)), uintptr(unsafe.Pointer(unsafe.SliceData(pc.in))))
	if errno != 0 {
		b.Fatal(fmt.Errorf("mincore %s: %w", pc.path, errno))
	}
	n := 0
	for _, v := range pc.in {
		n += int(v & 1)
	}
	return n
}

// pages drops the file from the page cache, opens it, and returns how
// many of its pages read reads.
func (pc *pageCounter) pages(b testing.TB, read func(*store.DB) error) int {
	if err := unix.Fadvise(int(pc.file.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
		b.Fatal(err)
	}
	if n := pc.cached(b); n > 2 {
		b.Fatalf("%d pages of %s stay in the page cache: is it open elsewhere?", n, pc.path)
	}
	db, err := store.Open(pc.path)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	before := pc.cached(b)
	if before == 0 {
		// Since Linux 5.0 mincore tells the page cache only of files the
		// caller owns or may write, and counts none of the others'.
		b.Fatalf("mincore sees none of the pages Open read of %s: the file must be one this user may write", pc.path)
	}
	if err := read(db); err != nil {
		b.Fatal(fmt.Errorf("%s: %w", pc.path, err))
	}
	return pc.cached(b) - before
}

// TestPagesGrowWithTheLogarithm: with a hundred times the cards, a card,
// a card by its printed number and a page of a set each read at most
// two more pages for each of their descents of a tree (a page of a tree
// holds at least 16 keys, and 16² > 100), however the data lies. What
// they read besides the descents (a page's run of cards) does not grow.
func TestPagesGrowWithTheLogarithm(t *testing.T) {
	dir := t.TempDir()
	const samples = 40
	perRequest := map[string][2]float64{}
	var routes []pageRoute
	for size, cards := range []int{1_000, 100_000} {
		db, err := importGenerated(dir, gen.Options{Cards: cards, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		targets := drawLookups(t, db, samples)
		path := db.Path()
		db.Close()
		counter := newPageCounter(t, path)
		routes = slices.DeleteFunc(pageRoutes(targets), func(r pageRoute) bool { return r.descents == 0 })
		for _, r := range routes {
			sum := 0
			for i := range samples {
				sum += counter.pages(t, func(db *store.DB) error { return r.read(db, i) })
			}
			pair := perRequest[r.name]
			pair[size] = float64(sum) / samples
			perRequest[r.name] = pair
		}
		counter.close()
		os.Remove(path)
	}
	for _, r := range routes {
		small, large := perRequest[r.name][0], perRequest[r.name][1]
		t.Logf("%s: %.1f pages at 1,000 cards, %.1f at 100,000", r.name, small, large)
		if small <= 0 || large > small+float64(2*r.descents) {
			t.Errorf("%s: %.1f pages a request at 1,000 cards and %.1f at 100,000; at most %d more", r.name, small, large, 2*r.descents)
		}
	}
}
