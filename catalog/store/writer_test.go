package store

import (
	"bytes"
	"context"
	"encoding/json"
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

// TestOpenRefusesAnOlderFormat: a catalogue written by an older catalogd
// (catalogd/1 stored every card twice) is refused with a message that says
// to import again, not read with the wrong layout.
func TestOpenRefusesAnOlderFormat(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.db")
	db, err := bolt.Open(path, 0o644, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		for _, name := range []string{"sets", "cards", "setCards", "numbers", "postings"} {
			if _, err := tx.CreateBucket([]byte(name)); err != nil {
				return err
			}
		}
		meta, err := tx.CreateBucket(layout.BucketMeta)
		if err != nil {
			return err
		}
		if err := meta.Put(layout.KeyInfo, []byte(`{"generation":"old"}`)); err != nil {
			return err
		}
		return meta.Put(layout.KeyFormat, []byte("catalogd/1"))
	})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()

	_, err = Open(path)
	if err == nil {
		t.Fatal("Open of a catalogd/1 file succeeded")
	}
	for _, want := range []string{path, `"catalogd/1"`, `"` + layout.FormatVersion + `"`, "catalogd import"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %s", err, want)
		}
	}
}

// TestWriterAcrossTransactions writes a catalogue one card per transaction,
// in an order that is neither by set nor by number nor by id, and reads
// every card back by id, by set and by search: a card's JSON, its locator
// and its index entry must agree whichever transaction wrote them.
func TestWriterAcrossTransactions(t *testing.T) {
	for _, commitAt := range []int{1, 4 << 10, build.DefaultLimits().CommitAt} {
		t.Run(fmt.Sprint(commitAt), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "c.db")
			w := createCommitting(t, path, commitAt)
			codes := []string{"B", "A", "AB", "A\x00", "長"}
			for i, code := range codes {
				if err := w.AddSet(catalog.Set{ID: "s" + fmt.Sprint(i), Code: code, Name: "Set " + code, Zone: catalog.ZoneJP}); err != nil {
					t.Fatal(err)
				}
			}
			rng := rand.New(rand.NewPCG(1, 1))
			var cards []*catalog.Card
			for i := range 300 {
				code := codes[i%len(codes)]
				c := card(fmt.Sprintf("id-%03d", rng.IntN(1000)*1000+i), catalog.ZoneJP, code, "Set "+code, fmt.Sprint(rng.IntN(40)))
				c.Name = "Pika " + fmt.Sprint(i%7)
				cards = append(cards, c)
			}
			for _, c := range cards {
				if err := w.AddCard(c); err != nil {
					t.Fatal(err)
				}
			}
			for _, c := range []*catalog.Card{cards[0], cards[150], cards[299]} {
				if err := w.AddCard(card(c.ID, catalog.ZoneJP, "A", "Set A", "1")); !errors.Is(err, build.ErrDuplicate) {
					t.Fatalf("AddCard(%s) again: %v, want a duplicate", c.ID, err)
				}
			}
			db := finishAndOpen(t, w, path)

			for _, c := range cards {
				got, err := db.AppendCard(nil, c.ID)
				if want := c.AppendJSON(nil); err != nil || !bytes.Equal(got, want) {
					t.Fatalf("AppendCard(%s) = %s, %v; want %s", c.ID, got, err, want)
				}
			}
			for _, code := range codes {
				var want []string
				for _, c := range cards {
					if c.SetCode == code {
						want = append(want, string(c.AppendJSON(nil)))
					}
				}
				slices.SortFunc(want, func(a, b string) int { return compareCardJSON(t, a, b) })
				var got []string
				for page := int64(1); ; page++ {
					n := 0
					total, err := db.SetCards(code, page, 7, func(c []byte) { got = append(got, string(c)); n++ })
					if err != nil || total != int64(len(want)) {
						t.Fatalf("SetCards(%q) total %d, %v; want %d", code, total, err, len(want))
					}
					if n == 0 {
						break
					}
				}
				if !slices.Equal(got, want) {
					t.Fatalf("SetCards(%q):\n%q\nwant\n%q", code, got, want)
				}
			}

			// "pi" is looked up through its posting list; "p" (one
			// character) scans the entries: both read across index blocks.
			for _, q := range []string{"pika", "p"} {
				var want []string
				for _, c := range cards {
					want = append(want, string(c.AppendJSON(nil)))
				}
				slices.SortFunc(want, func(a, b string) int { return compareCardJSON(t, a, b) })
				want = want[:100]
				var got []string
				if err := db.Search(SearchQuery{Q: q + " " + q, Limit: 100}, func(c []byte) { got = append(got, string(c)) }); err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(got, want) {
					t.Fatalf("Search(%q): %d cards\n%q\nwant %d\n%q", q, len(got), got, len(want), want)
				}
			}
		})
	}
}

// compareCardJSON orders cards as search and listing do: printed-number
// key, then id.
func compareCardJSON(t *testing.T, a, b string) int {
	t.Helper()
	var ca, cb catalog.Card
	if err := json.Unmarshal([]byte(a), &ca); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(b), &cb); err != nil {
		t.Fatal(err)
	}
	if c := bytes.Compare(catalog.NumberKey(ca.Number), catalog.NumberKey(cb.Number)); c != 0 {
		return c
	}
	return strings.Compare(ca.ID, cb.ID)
}

// finishAndOpen finishes the catalogue w writes at path and opens it.
func finishAndOpen(t *testing.T, w *build.Writer, path string) *DB {
	t.Helper()
	if _, err := w.Finish(context.Background(), Info{Generation: "g", ImportedAt: time.Unix(1e9, 0).UTC()}); err != nil {
		t.Fatal(err)
	}
	return openCatalogue(t, path)
}

// createCommitting starts a Writer at path that commits every commitAt
// bytes.
func createCommitting(t *testing.T, path string, commitAt int) *build.Writer {
	t.Helper()
	small := build.DefaultLimits()
	small.CommitAt = commitAt
	w, err := build.CreateWith(path, small)
	if err != nil {
		t.Fatal(err)
	}
	return w
}
