package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/catalogd/catalogd/catalog"
	"github.com/catalogd/catalogd/catalog/store/build"
	"github.com/catalogd/catalogd/catalog/store/internal/layout"
	bolt "go.etcd.io/bbolt"
)

// pagedSets are the sets of writePagedCatalogue and their sizes: one long
// enough for many marks, sizes on either side of a mark, and a code in two
// zones, whose prefixes differ only by the zone byte.
var pagedSets = []struct {
	zone, code string
	cards      int
}{
	{catalog.ZoneJP, "L", 1000},
	{catalog.ZoneJP, "M", layout.PageMarkEvery},
	{catalog.ZoneJP, "N", layout.PageMarkEvery + 1},
	{catalog.ZoneJP, "S", 3},
	{catalog.ZoneIntl, "L", 2*layout.PageMarkEvery + 2},
}

// writePagedCatalogue writes pagedSets, their cards added in a shuffled
// order, committing every commitAt bytes and sorting the keys of cards and
// the runs of sets' cards in sortLimit bytes of memory, and returns the
// file and each set's cards in the order of its pages (printed number, then
// id), by set id.
func writePagedCatalogue(t *testing.T, commitAt, sortLimit int) (string, map[string][]string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "c.db")
	small := build.DefaultLimits()
	small.CommitAt, small.SetSort = commitAt, sortLimit
	w, err := build.CreateWith(path, small)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	var cards []*catalog.Card
	want := map[string][]string{}
	for _, s := range pagedSets {
		id := s.zone + "-" + s.code
		if err := w.AddSet(catalog.Set{ID: id, Code: s.code, Name: "Set " + s.code, Zone: s.zone}); err != nil {
			t.Fatal(err)
		}
		for i := range s.cards {
			// Numbers repeat, so that ids order the cards of a number.
			c := card(fmt.Sprintf("%s-%d", id, rng.IntN(1e6)*1000+i), s.zone, s.code, "Set "+s.code, fmt.Sprint(rng.IntN(s.cards/2+1)))
			cards = append(cards, c)
			want[id] = append(want[id], string(c.AppendJSON(nil)))
		}
		slices.SortFunc(want[id], func(a, b string) int { return compareCardJSON(t, a, b) })
	}
	rng.Shuffle(len(cards), func(i, j int) { cards[i], cards[j] = cards[j], cards[i] })
	for i, c := range cards {
		if err := w.AddCard(c); err != nil {
			t.Fatal(err)
		}
		// A card refused as a duplicate, of the first set, takes no place
		// in it.
		if i%97 == 0 {
			again := card(c.ID, catalog.ZoneJP, "L", "Set L", "0")
			if err := w.AddCard(again); !errors.Is(err, build.ErrDuplicate) {
				t.Fatalf("AddCard(%s) again: %v, want a duplicate", c.ID, err)
			}
		}
	}
	if _, err := w.Finish(context.Background(), Info{Generation: "g", ImportedAt: time.Unix(1e9, 0).UTC()}); err != nil {
		t.Fatal(err)
	}
	return path, want
}

// checkPages reads every page of every set of db at several page sizes and
// compares each with the set's cards in order.
func checkPages(t *testing.T, db *DB, want map[string][]string) {
	t.Helper()
	for id, cards := range want {
		for _, size := range []int64{1, 7, 50, layout.PageMarkEvery, 100, 1000} {
			for page := int64(1); ; page++ {
				var got []string
				total, err := db.SetCards(id, page, size, func(c []byte) { got = append(got, string(c)) })
				if err != nil || total != int64(len(cards)) {
					t.Fatalf("SetCards(%s, page %d of %d): total %d, %v; want %d", id, page, size, total, err, len(cards))
				}
				from := min(int64(len(cards)), (page-1)*size)
				if w := cards[from:min(int64(len(cards)), from+size)]; !slices.Equal(got, w) {
					t.Fatalf("SetCards(%s, page %d of %d):\n%q\nwant\n%q", id, page, size, got, w)
				}
				if len(got) == 0 {
					break
				}
			}
		}
	}
}

// TestPagesSeekTheirMarks reads every page of sets of up to a thousand
// cards, written in transactions of every size, the smallest ending after
// every mark, with the keys of cards sorted in memory or spilled to many
// runs: the marks must name the card at their position, and a page from a
// mark must be the page counted from the set's first card.
func TestPagesSeekTheirMarks(t *testing.T) {
	for _, sizes := range []struct{ commitAt, sortLimit int }{{1, build.DefaultLimits().SetSort}, {4 << 10, 1 << 10}, {build.DefaultLimits().CommitAt, build.DefaultLimits().SetSort}} {
		t.Run(fmt.Sprintf("commit %d sort %d", sizes.commitAt, sizes.sortLimit), func(t *testing.T) {
			path, want := writePagedCatalogue(t, sizes.commitAt, sizes.sortLimit)
			db, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()

			// Every set has a mark for each full PageMarkEvery cards after
			// its first, and no other: the pages below read from them.
			err = db.db.View(func(tx *bolt.Tx) error {
				marks := tx.Bucket(layout.BucketPageMarks)
				if marks == nil {
					return errors.New("no page marks")
				}
				n := 0
				for _, s := range pagedSets {
					prefix := layout.AppendSetPrefix(nil, layout.ZoneByte(s.zone), s.code)
					for at := uint64(layout.PageMarkEvery); at < uint64(s.cards); at += layout.PageMarkEvery {
						if marks.Get(layout.AppendPageMarkKey(nil, prefix, at)) == nil {
							return fmt.Errorf("set %s-%s: no mark of card %d", s.zone, s.code, at)
						}
						n++
					}
				}
				if got := marks.Stats().KeyN; got != n {
					return fmt.Errorf("%d marks, want %d", got, n)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			checkPages(t, db, want)
		})
	}
}

// TestPagesWithoutMarks reads a file without page marks: its pages are the
// same, stepped from each set's first card.
func TestPagesWithoutMarks(t *testing.T) {
	path, want := writePagedCatalogue(t, build.DefaultLimits().CommitAt, build.DefaultLimits().SetSort)
	db := openEdited(t, path, func(tx *bolt.Tx) error { return tx.DeleteBucket(layout.BucketPageMarks) })
	checkPages(t, db, want)
}

// TestPagesPastLostMarks reads every page after a damaged file lost
// marks: a set's first mark, the first in the bucket (no mark before it),
// the first of a set after another's marks, the last in the bucket (no
// mark after it), and one between two others; and beside a key one byte
// longer than a mark's, which is not one. Each page is served from the
// mark before the lost one, or from the set's first card.
func TestPagesPastLostMarks(t *testing.T) {
	path, want := writePagedCatalogue(t, build.DefaultLimits().CommitAt, build.DefaultLimits().SetSort)
	intlL := layout.AppendSetPrefix(nil, layout.ZoneByte(catalog.ZoneIntl), "L")
	jpL := layout.AppendSetPrefix(nil, layout.ZoneByte(catalog.ZoneJP), "L")
	jpN := layout.AppendSetPrefix(nil, layout.ZoneByte(catalog.ZoneJP), "N")
	db := openEdited(t, path, func(tx *bolt.Tx) error {
		marks := tx.Bucket(layout.BucketPageMarks)
		for _, k := range [][]byte{
			layout.AppendPageMarkKey(nil, intlL, layout.PageMarkEvery),
			layout.AppendPageMarkKey(nil, jpL, layout.PageMarkEvery),
			layout.AppendPageMarkKey(nil, jpL, 3*layout.PageMarkEvery),
			layout.AppendPageMarkKey(nil, jpN, layout.PageMarkEvery),
		} {
			if marks.Get(k) == nil {
				return fmt.Errorf("no mark %q to lose", k)
			}
			if err := marks.Delete(k); err != nil {
				return err
			}
		}
		// Read as a mark, it would put the set's first card at 100.
		first, _ := tx.Bucket(layout.BucketCards).Cursor().Seek(jpL)
		return marks.Put(append(layout.AppendPageMarkKey(nil, jpL, 100), 0), bytes.Clone(first))
	})
	checkPages(t, db, want)
}

// TestPagesOfAWrongMark fails the pages served from a mark that names a
// card of another set, rather than answer another page, and answers the
// set's other pages.
func TestPagesOfAWrongMark(t *testing.T) {
	path, want := writePagedCatalogue(t, build.DefaultLimits().CommitAt, build.DefaultLimits().SetSort)
	prefix := layout.AppendSetPrefix(nil, layout.ZoneByte(catalog.ZoneJP), "L")
	db := openEdited(t, path, func(tx *bolt.Tx) error {
		setN := layout.AppendSetPrefix(nil, layout.ZoneByte(catalog.ZoneJP), "N")
		k, _ := tx.Bucket(layout.BucketCards).Cursor().Seek(setN)
		if !bytes.HasPrefix(k, setN) {
			return errors.New("set N has no cards")
		}
		return tx.Bucket(layout.BucketPageMarks).Put(layout.AppendPageMarkKey(nil, prefix, 5*layout.PageMarkEvery), bytes.Clone(k))
	})
	for _, offset := range []int64{5 * layout.PageMarkEvery, 5*layout.PageMarkEvery + 63} {
		_, err := db.SetCards("jp-L", offset+1, 1, func([]byte) { t.Errorf("page of card %d answered", offset) })
		if err == nil || !strings.Contains(err.Error(), "page mark") {
			t.Errorf("page of card %d: %v, want an error naming the page mark", offset, err)
		}
	}
	for _, offset := range []int64{0, layout.PageMarkEvery - 1, layout.PageMarkEvery, 5*layout.PageMarkEvery - 1, 6 * layout.PageMarkEvery, 999} {
		var got []string
		if _, err := db.SetCards("jp-L", offset+1, 1, func(c []byte) { got = append(got, string(c)) }); err != nil || len(got) != 1 || got[0] != want["jp-L"][offset] {
			t.Errorf("page of card %d: %q, %v; want %q", offset, got, err, want["jp-L"][offset])
		}
	}
}

// openEdited changes the catalogue at path as a damaged or older file
// would have it, and opens it for the test.
func openEdited(t *testing.T, path string, edit func(*bolt.Tx) error) *DB {
	t.Helper()
	bdb, err := bolt.Open(path, 0o644, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := bdb.Update(edit); err != nil {
		t.Fatal(err)
	}
	if err := bdb.Close(); err != nil {
		t.Fatal(err)
	}
	return openCatalogue(t, path)
}
