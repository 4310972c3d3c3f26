package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/catalogd/catalogd/catalog"
	"github.com/catalogd/catalogd/catalog/store/build"
	"github.com/catalogd/catalogd/catalog/store/internal/layout"
)

// manyCards writes a catalogue of n cards in sets of 200, every tenth id
// of no usual shape (found by its locator), and a long name every
// hundredth (a card larger than a page), and returns its path and ids.
func manyCards(t *testing.T, n int) (string, []string) {
	t.Helper()
	var sets []catalog.Set
	var cards []catalog.Card
	var ids []string
	for i := range n {
		code := fmt.Sprintf("S%d", i/200)
		if i%200 == 0 {
			sets = append(sets, catalog.Set{ID: "intl-" + code, Code: code, Name: "Set " + code, Zone: catalog.ZoneIntl, CardCount: 200})
		}
		id := fmt.Sprintf("intl-%s-%03d", code, i%200)
		if i%10 == 3 {
			id = fmt.Sprintf("card %d, of no shape", i)
		}
		c := card(id, catalog.ZoneIntl, code, "Set "+code, fmt.Sprintf("%03d", i%200))
		if i%100 == 7 {
			c.Name = string(bytes.Repeat([]byte("Long name "), 500))
		}
		cards = append(cards, *c)
		ids = append(ids, id)
	}
	return writeCatalogue(t, sets, cards, build.DefaultLimits(), nil), ids
}

// TestFindAllAgreesWithBbolt descends every key of a cards' tree of
// several levels, and keys between them, a batch at a time, and compares
// each value with bbolt's own Get.
func TestFindAllAgreesWithBbolt(t *testing.T) {
	path, _ := manyCards(t, 20_000)
	db := openCatalogue(t, path)
	err := db.read(func(r *reader) error {
		b := r.tx.Bucket(layout.BucketCards)
		if r.cardsRoot == 0 || b.Stats().Depth < 3 {
			t.Fatalf("the cards' tree has depth %d, root %d: too small to test", b.Stats().Depth, r.cardsRoot)
		}
		var keys [][]byte
		b.ForEach(func(k, _ []byte) error {
			keys = append(keys, k, append(slices.Clone(k), 0), k[:len(k)-1])
			return nil
		})
		keys = append(keys, nil, []byte{}, []byte{0xff, 0xff, 0xff})
		rng := rand.New(rand.NewPCG(1, 2))
		rng.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
		vals, at := make([][]byte, cardBatchSize), make([]uint64, cardBatchSize)
		found := 0
		for len(keys) > 0 {
			n := min(len(keys), cardBatchSize)
			if !r.pages.findAll(r.cardsRoot, keys[:n], vals[:n], at[:n]) {
				t.Fatal("findAll found a page not as bbolt writes it")
			}
			for i, k := range keys[:n] {
				want := b.Get(k)
				if k == nil {
					want = nil
				}
				if !bytes.Equal(vals[i], want) || (vals[i] == nil) != (want == nil) {
					t.Fatalf("key %q: %d bytes, bbolt has %d", k, len(vals[i]), len(want))
				}
				if want != nil {
					found++
				}
			}
			keys = keys[n:]
		}
		if found < 20_000 {
			t.Errorf("%d keys found, want every card's and every locator's", found)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestCardsInBatches asks for every card at once, shuffled, with ids no
// card has between them, and gets what AppendCard gives one by one, in
// the order asked.
func TestCardsInBatches(t *testing.T) {
	path, ids := manyCards(t, 5_000)
	db := openCatalogue(t, path)
	asked := slices.Clone(ids)
	for i := range 300 {
		asked = append(asked, fmt.Sprintf("intl-S%d-%03d", i, 250), fmt.Sprintf("card %d, of no shape", i*10+4), "intl-S1-7/200")
	}
	rand.New(rand.NewPCG(3, 4)).Shuffle(len(asked), func(i, j int) { asked[i], asked[j] = asked[j], asked[i] })
	var got []string
	err := db.Cards(asked, func(c []byte) { got = append(got, string(c)) }, func(id string) { got = append(got, "missing "+id) })
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, id := range asked {
		c, err := db.AppendCard(nil, id)
		switch {
		case errors.Is(err, ErrNotFound):
			want = append(want, "missing "+id)
		case err != nil:
			t.Fatal(err)
		default:
			want = append(want, string(c))
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%d answers, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("answer %d (%q): %.80q, want %.80q", i, asked[i], got[i], want[i])
		}
	}
}

// TestCardsOfADamagedTree zeroes the flags of a page of the cards' tree,
// its root, a branch below it and a leaf, one at a time; the batch then
// fails as a damaged catalogue rather than answer from what it read.
func TestCardsOfADamagedTree(t *testing.T) {
	path, ids := manyCards(t, 5_000)
	original, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	db := openCatalogue(t, path)
	var root uint64
	db.read(func(r *reader) error { root = r.cardsRoot; return nil })
	pageSize := os.Getpagesize()
	if root == 0 {
		t.Fatal("the cards' tree is inline")
	}
	// Down the first child of each branch, reading the file as bbolt
	// lays it out (treepages.go).
	pages := []uint64{root}
	for {
		at := int(pages[len(pages)-1]) * pageSize
		if original[at+8] != branchPageFlag {
			break
		}
		pages = append(pages, binary.NativeEndian.Uint64(original[at+pageHeaderSize+8:]))
	}
	if len(pages) < 3 {
		t.Fatalf("the cards' tree has %d levels", len(pages))
	}
	for _, page := range pages {
		t.Run(fmt.Sprint(page), func(t *testing.T) {
			damaged := slices.Clone(original)
			damaged[int(page)*pageSize+8], damaged[int(page)*pageSize+9] = 0, 0
			p := filepath.Join(t.TempDir(), "damaged.db")
			if err := os.WriteFile(p, damaged, 0o600); err != nil {
				t.Fatal(err)
			}
			err := openCatalogue(t, p).Cards(ids, func([]byte) {}, func(string) {})
			if !errors.Is(err, ErrDamaged) {
				t.Fatalf("Cards: %v, want ErrDamaged", err)
			}
		})
	}
}
