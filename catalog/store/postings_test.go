package store

import (
	"fmt"
	"testing"

	"github.com/catalogd/catalogd/catalog"
	"github.com/catalogd/catalogd/catalog/store/build"
	"github.com/catalogd/catalogd/catalog/store/internal/layout"
	bolt "go.etcd.io/bbolt"
)

// TestBitmapsTwoToAPage: the lists of a catalogue whose cards all share a
// name are bitmaps, and bbolt puts two of them, with their keys, in a page
// of the postings, which they fill: a bitmap of 2 KiB and more had a page
// to itself, half empty (layout.BitmapSpan).
func TestBitmapsTwoToAPage(t *testing.T) {
	const n = 4 * layout.BitmapSpan
	sets := []catalog.Set{{ID: "intl-S1", Code: "S1", Name: "Set", Zone: catalog.ZoneIntl}}
	cards := make([]catalog.Card, n)
	for i := range cards {
		cards[i] = catalog.Card{ID: fmt.Sprintf("intl-S1-%d", i), Name: "Pikachu", SetName: "Set", SetCode: "S1",
			Number: fmt.Sprint(i), Language: "en", Variant: catalog.DefaultVariant, Zone: catalog.ZoneIntl}
	}
	db := openCatalogue(t, writeCatalogue(t, sets, cards, build.DefaultLimits(), nil))
	bitmaps := 0
	var stats bolt.BucketStats
	err := db.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(layout.BucketPostings)
		stats = b.Stats()
		return b.ForEach(func(k, v []byte) error {
			if len(v) == layout.BitmapBlockLen && v[0] == layout.BlockBitmap {
				bitmaps++
			}
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	// Every span of the lists of pik, ika, kac, ach, chu, their grams and
	// characters.
	if bitmaps < 3*4*5 {
		t.Fatalf("%d bitmap blocks: the lists of a name every card bears should be bitmaps", bitmaps)
	}
	// A bitmap alone on a page of 4 KiB left some 2 KiB of it empty.
	if empty := stats.LeafAlloc - stats.LeafInuse; empty > bitmaps*layout.BitmapBlockLen/8 {
		t.Errorf("%d bitmap blocks, and %d bytes of the postings' pages empty: they should fit two to a page", bitmaps, empty)
	}
}
