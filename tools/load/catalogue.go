package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/catalogd/catalogd/catalog/store"
	"github.com/catalogd/catalogd/tools/gen"
	"github.com/catalogd/catalogd/tools/internal/procfs"
	"github.com/catalogd/catalogd/tools/internal/query"
)

// The most a catalogue file given with -db lends to the requests: a
// uniform sample of its cards (all of them in a smaller catalogue), and
// sets drawn at random until their pages reach dbPages. A ten-million-card
// file's every card and page would not fit in the harness's memory, nor in
// the ceiling's. A generated catalogue lends every card and every set.
const (
	dbCards = 100_000
	dbPages = 10_000
)

// catalogue is the catalogue file catalogd serves and what the requests
// are made of.
type catalogue struct {
	path        string
	bytes       int64
	cards, sets int
	smp         sample
}

// prepareCatalogue generates a snapshot in dir and imports it with the
// catalogd binary bin, or with -db takes the file given.
func prepareCatalogue(ctx context.Context, o options, dir, bin string) (catalogue, error) {
	if o.db != "" {
		st, err := os.Stat(o.db)
		if err != nil {
			return catalogue{}, err
		}
		start := time.Now()
		smp, cards, sets, err := sampleCatalogue(o.db, dbCards, dbPages, o.seed)
		if err != nil {
			return catalogue{}, err
		}
		logf("catalogue %s: %d sets, %d cards, file %.0f MB; %d cards and %d sets sampled in %s", o.db, sets, cards, mb(st.Size()), len(smp.cards), len(smp.sets), since(start))
		return catalogue{path: o.db, bytes: st.Size(), cards: cards, sets: sets, smp: smp}, nil
	}
	snapshot := filepath.Join(dir, "snapshot.json")
	start := time.Now()
	generated, err := gen.WriteFile(snapshot, gen.Options{Cards: o.cards, Seed: o.seed})
	if err != nil {
		return catalogue{}, err
	}
	logf("snapshot: %d sets, %d cards, generated in %s", generated.Sets, generated.Cards, since(start))
	c := catalogue{path: filepath.Join(dir, "catalog.db"), cards: generated.Cards, sets: generated.Sets}
	imp := procfs.Import(ctx, bin, c.path, snapshot)
	imp.Stderr = os.Stderr
	start = time.Now()
	if err := imp.Run(); err != nil {
		return catalogue{}, fmt.Errorf("catalogd import: %w", err)
	}
	st, err := os.Stat(c.path)
	if err != nil {
		return catalogue{}, err
	}
	c.bytes = st.Size()
	logf("import: %s, catalogue file %.0f MB", since(start), mb(c.bytes))
	smp, cards, sets, err := sampleCatalogue(c.path, math.MaxInt, math.MaxInt, o.seed)
	if err == nil && (cards != generated.Cards || sets != generated.Sets) {
		err = fmt.Errorf("%s: %d sets and %d cards, the generator wrote %d and %d", c.path, sets, cards, generated.Sets, generated.Cards)
	}
	c.smp = smp
	return c, err
}

// sampleCatalogue chooses the material of the requests from the catalogue
// file at path, read through catalog/store in bounded memory: the
// list of sets, each set's number of cards, and only the cards drawn: at
// most maxCards, uniformly. The sets are shuffled, and cut once their pages
// reach maxPages. It
// returns the catalogue's numbers of cards and sets with the sample. The
// file is closed before it returns, so that serve opens it alone.
func sampleCatalogue(path string, maxCards, maxPages int, seed uint64) (smp sample, cards, sets int, err error) {
	db, err := store.Open(path)
	if err != nil {
		return sample{}, 0, 0, err
	}
	defer db.Close()
	list, err := db.SetsJSON("")
	if err != nil {
		return sample{}, 0, 0, err
	}
	var all []struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(list, &all); err != nil {
		return sample{}, 0, 0, fmt.Errorf("%s: list of sets: %w", path, err)
	}
	// Sets by id: an id names one set, where a code may name several.
	none := func([]byte) {}
	for _, s := range all {
		n, err := db.SetCards(s.ID, 1, 1, none)
		if err != nil {
			return sample{}, 0, 0, err
		}
		if n > 0 {
			smp.sets = append(smp.sets, sampleSet{code: s.ID, cards: n})
			cards += int(n)
		}
	}
	if cards == 0 {
		return sample{}, 0, 0, fmt.Errorf("%s: no cards", path)
	}

	// Positions in the catalogue's order of cards (set by set), drawn
	// uniformly and read one set at a time.
	rng := rand.New(rand.NewPCG(seed, 0xdb))
	chosen := pick(rng, cards, maxCards)
	slices.Sort(chosen)
	first := 0 // position of the set's first card
	for _, set := range smp.sets {
		end := first + int(set.cards)
		var want []int
		for len(chosen) > 0 && chosen[0] < end {
			want, chosen = append(want, chosen[0]-first), chosen[1:]
		}
		first = end
		if len(want) == 0 {
			continue
		}
		i := 0
		var derr error
		_, err := db.SetCards(set.code, 1, set.cards, func(b []byte) {
			if len(want) > 0 && want[0] == i {
				want = want[1:]
				var c struct{ ID, Name, Number string }
				if err := json.Unmarshal(b, &c); err != nil && derr == nil {
					derr = fmt.Errorf("card of set %q: %w", set.code, err)
				}
				smp.cards = append(smp.cards, card{c.ID, c.Name, c.Number, set.code})
			}
			i++
		})
		if err == nil {
			err = derr
		}
		if err != nil {
			return sample{}, 0, 0, err
		}
	}

	rng.Shuffle(len(smp.sets), func(i, j int) { smp.sets[i], smp.sets[j] = smp.sets[j], smp.sets[i] })
	for i, pages := 0, 0; i < len(smp.sets); i++ {
		if pages += int((smp.sets[i].cards + setPageSize - 1) / setPageSize); pages > maxPages && i > 0 {
			smp.sets = smp.sets[:i]
			break
		}
	}
	rng.Shuffle(len(smp.cards), func(i, j int) { smp.cards[i], smp.cards[j] = smp.cards[j], smp.cards[i] })
	for _, i := range pick(rng, len(smp.cards), sampleCards) {
		smp.hot = append(smp.hot, smp.cards[i])
	}
	for _, i := range pick(rng, len(smp.cards), sampleQueries) {
		smp.queries = append(smp.queries, query.Typical(smp.cards[i].name))
	}
	return smp, cards, len(all), nil
}
