package catalogbench

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/catalogd/catalogd/catalog/store"
	"github.com/catalogd/catalogd/tools/gen"
)

// The read paths of getCard and listSetCards, in process, over the bbolt
// file (page cache warm):
//
//	go test -C tools ./bench/catalog -run '^$' -bench 'AppendCard|SetCards' -benchmem -args -gen-cards=1000000

// cardIDs returns the id of every card of db and the id and size of every
// set, through the public API; read once per file, for every benchmark of
// the run (at 10 million cards, reading them takes a while).
func cardIDs(b *testing.B, db *store.DB) (cards []string, sets map[string]int64) {
	b.Helper()
	type ids struct {
		cards []string
		sets  map[string]int64
	}
	if v, ok := idsRead.Load(db.Path()); ok {
		return v.(ids).cards, v.(ids).sets
	}
	defer func() { idsRead.Store(db.Path(), ids{cards, sets}) }()
	list := setIDs(b, db)
	sets = make(map[string]int64, len(list))
	for _, id := range list {
		for page := int64(1); ; page++ {
			n := 0
			total, err := db.SetCards(id, page, 200, func(card []byte) {
				cards = append(cards, cardID(b, card))
				n++
			})
			if err != nil {
				b.Fatal(err)
			}
			sets[id] = total
			if n < 200 {
				break
			}
		}
	}
	if len(cards) == 0 {
		b.Fatal("no cards")
	}
	return cards, sets
}

// cardID returns the id of a card's canonical JSON, which starts with it:
// decoding ten million cards whole would take minutes.
func cardID(b *testing.B, card []byte) string {
	rest, ok := bytes.CutPrefix(card, []byte(`{"id":"`))
	end := bytes.IndexByte(rest, '"')
	if ok && end >= 0 && bytes.IndexByte(rest[:end], '\\') < 0 {
		return string(rest[:end])
	}
	var c struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(card, &c); err != nil {
		b.Fatal(err)
	}
	return c.ID
}

// setIDs returns the id of every set of db, in the order listSets gives.
func setIDs(b testing.TB, db *store.DB) []string {
	b.Helper()
	data, err := db.SetsJSON("")
	if err != nil {
		b.Fatal(err)
	}
	var sets []struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(data, &sets); err != nil {
		b.Fatal(err)
	}
	ids := make([]string, len(sets))
	for i, s := range sets {
		ids[i] = s.ID
	}
	return ids
}

// idsRead holds what cardIDs read, by file.
var idsRead sync.Map

// benchmarkAppendCard looks up every card of db in a shuffled order, as a
// long tail of requests does.
func benchmarkAppendCard(b *testing.B, db *store.DB) { benchmarkAppendCardOf(b, db, 0) }

// benchmarkAppendCardOf looks up the first n cards of the shuffled order
// over and over, all of them when n is 0: 1,000 is the hot spot of the load
// harness.
func benchmarkAppendCardOf(b *testing.B, db *store.DB, n int) {
	ids, _ := cardIDs(b, db)
	ids = slices.Clone(ids)
	rng := rand.New(rand.NewPCG(1, 2))
	rng.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
	if n > 0 && n < len(ids) {
		ids = ids[:n]
	}
	buf := make([]byte, 0, 4<<10)
	// Every page mapped once (cardIDs read every card by set): what is
	// timed is a lookup, not the page faults of a first one.
	for _, id := range ids {
		buf, _ = db.AppendCard(buf[:0], id)
	}
	i := 0
	b.ReportAllocs()
	report := reportCPU(b)
	for b.Loop() {
		var err error
		if buf, err = db.AppendCard(buf[:0], ids[i%len(ids)]); err != nil {
			b.Fatal(err)
		}
		i++
	}
	report()
}

// BenchmarkCardsGenerated looks up 100 cards at once (getCards), drawn
// in turn from every card of the catalogue shuffled, copying each as the
// server does into its answer; ns/op is a batch:
//
//	go test -C tools ./bench/catalog -run '^$' -bench CardsGenerated -benchtime 20000x -args -bench-db FILE
func BenchmarkCardsGenerated(b *testing.B) {
	db := openGenerated(b)
	ids, _ := cardIDs(b, db)
	ids = slices.Clone(ids)
	rng := rand.New(rand.NewPCG(1, 2))
	rng.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
	const batch = 100
	buf := make([]byte, 0, 256<<10)
	copyCard := func(card []byte) { buf = append(buf, card...) }
	missing := func(id string) { b.Fatalf("%s not found", id) }
	for i := 0; i+batch <= len(ids); i += batch { // every page mapped once
		buf = buf[:0]
		if err := db.Cards(ids[i:i+batch], copyCard, missing); err != nil {
			b.Fatal(err)
		}
	}
	i := 0
	b.ReportAllocs()
	report := reportCPU(b)
	for b.Loop() {
		if i+batch > len(ids) {
			i = 0
		}
		buf = buf[:0]
		if err := db.Cards(ids[i:i+batch], copyCard, missing); err != nil {
			b.Fatal(err)
		}
		i += batch
	}
	report()
}

// benchmarkSetCards reads the first page of 50 (the default page size) of
// sets taken at random, copying each card as the server does into its
// answer.
func benchmarkSetCards(b *testing.B, db *store.DB) {
	_, sizes := cardIDs(b, db)
	var sets []string
	for id, n := range sizes {
		if n > 0 {
			sets = append(sets, id)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	buf := make([]byte, 0, 64<<10)
	i, n := 0, 0
	b.ReportAllocs()
	report := reportCPU(b)
	for b.Loop() {
		buf = buf[:0]
		_, err := db.SetCards(sets[rng.IntN(len(sets))], 1, 50, func(card []byte) {
			buf = append(buf, card...)
			n++
		})
		if err != nil {
			b.Fatal(err)
		}
		i++
	}
	report()
	b.ReportMetric(float64(n)/float64(i), "cards/op")
}

func BenchmarkAppendCardReal(b *testing.B)      { benchmarkAppendCard(b, openReal(b)) }
func BenchmarkAppendCardGenerated(b *testing.B) { benchmarkAppendCard(b, openGenerated(b)) }
func BenchmarkSetCardsReal(b *testing.B)        { benchmarkSetCards(b, openReal(b)) }
func BenchmarkSetCardsGenerated(b *testing.B)   { benchmarkSetCards(b, openGenerated(b)) }

// BenchmarkAppendCardHotSpot is AppendCardGenerated on 1,000 of its cards.
func BenchmarkAppendCardHotSpot(b *testing.B) { benchmarkAppendCardOf(b, openGenerated(b), 1000) }

// BenchmarkOpen opens and closes a catalogue: what serve waits for before
// it is ready. Nothing it reads grows with the catalogue.
//
//	go test -C tools ./bench/catalog -run '^$' -bench Open -args -bench-db FILE
func BenchmarkOpen(b *testing.B) {
	path := openGenerated(b).Path()
	for b.Loop() {
		db, err := store.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		db.Close()
	}
}

// BenchmarkFirstExport opens a catalogue and lays its export out, as the
// first download of a generation does, then closes it. With the page cache
// dropped first and one iteration, it is what that download waits for
// from a cold disk:
//
//	sync; echo 3 > /proc/sys/vm/drop_caches
//	go test -C tools ./bench/catalog -run '^$' -bench FirstExport -benchtime 1x -args -bench-db FILE
func BenchmarkFirstExport(b *testing.B) {
	path := openGenerated(b).Path()
	for b.Loop() {
		db, err := store.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := db.Export(""); err != nil {
			b.Fatal(err)
		}
		db.Close()
	}
}

// BenchmarkSetList lists every set, as listSets does, and reports the
// bytes of the list.
func BenchmarkSetList(b *testing.B) {
	db := openGenerated(b)
	n := 0
	for b.Loop() {
		pieces, err := db.SetList("")
		if err != nil {
			b.Fatal(err)
		}
		n = 0
		for _, p := range pieces {
			n += len(p)
		}
	}
	b.ReportMetric(float64(n), "bytes")
}

// BenchmarkPagesOfALargeSet reads pages of 50 of one set of some 216,000
// cards (4,320 pages) in a shuffled order, as a mirror of that set does:
// the cost of a page should not grow with the cards before it. It
// generates and imports 400,000 cards first, some 15 s and 200 MB of disk.
//
//	go test -C tools ./bench/catalog -run '^$' -bench PagesOfALargeSet -benchtime 4320x
func BenchmarkPagesOfALargeSet(b *testing.B) {
	db, err := importGenerated(b.TempDir(), gen.Options{Cards: 400_000, CardsPerSet: 200_000, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	_, sizes := cardIDs(b, db)
	largest, size := "", int64(0)
	for id, n := range sizes {
		if n > size || n == size && id < largest {
			largest, size = id, n
		}
	}
	pages := make([]int64, (size+49)/50)
	for i := range pages {
		pages[i] = int64(i) + 1
	}
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(pages), func(i, j int) { pages[i], pages[j] = pages[j], pages[i] })
	buf := make([]byte, 0, 64<<10)
	i := 0
	report := reportCPU(b)
	for b.Loop() {
		buf = buf[:0]
		if _, err := db.SetCards(largest, pages[i%len(pages)], 50, func(card []byte) { buf = append(buf, card...) }); err != nil {
			b.Fatal(err)
		}
		i++
	}
	report()
	b.ReportMetric(float64(size), "set-cards")
}
