package store

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/catalogd/catalogd/catalog"
	"github.com/catalogd/catalogd/catalog/store/build"
	"github.com/catalogd/catalogd/catalog/store/internal/layout"
	bolt "go.etcd.io/bbolt"
)

// groupedSnapshot is a small catalogue of three zones with the name groups
// of its Pokémon.
func groupedSnapshot() ([]catalog.Set, []catalog.Card, [][]string) {
	sets := []catalog.Set{
		{ID: "intl-a", Code: "A", Name: "A", Zone: catalog.ZoneIntl, CardCount: 6},
		{ID: "jp-a", Code: "A", Name: "エー", Zone: catalog.ZoneJP, CardCount: 5},
		{ID: "chn-a", Code: "A", Name: "甲", Zone: catalog.ZoneCHN, CardCount: 3},
	}
	card := func(set catalog.Set, n, name, language string) catalog.Card {
		return catalog.Card{ID: set.ID + "-" + n, Name: name, SetName: set.Name, SetCode: set.Code, Number: n, Language: language, Variant: catalog.DefaultVariant, Zone: set.Zone}
	}
	cards := []catalog.Card{
		card(sets[0], "1", "Bulbasaur", "en"),
		card(sets[0], "2", "Charizard", "en"),
		card(sets[0], "3", "Dark Charizard", "en"),
		card(sets[0], "4", "Mew", "en"),
		card(sets[0], "5", "Mewtwo", "en"),
		card(sets[0], "6", "Pikachu V", "en"),
		card(sets[1], "1", "フシギダネ", "ja"),
		card(sets[1], "2", "リザードン", "ja"),
		card(sets[1], "3", "リザードンex", "ja"),
		card(sets[1], "4", "ミュウツー", "ja"),
		card(sets[1], "5", "リザード", "ja"),
		card(sets[2], "1", "妙蛙種子", "zh-tw"),
		card(sets[2], "2", "噴火龍", "zh-tw"),
		card(sets[2], "3", "皮卡丘ex", "zh-tw"),
	}
	groups := [][]string{
		{"Bulbasaur", "フシギダネ", "妙蛙種子", "妙蛙种子"},
		{"Charmeleon", "リザード", "火恐龍", "火恐龙"},
		{"Charizard", "リザードン", "噴火龍", "喷火龙"},
		{"Mew", "ミュウ", "夢幻", "梦幻"},
		{"Mewtwo", "ミュウツー", "超夢", "超梦"},
		{"Pikachu", "ピカチュウ", "皮卡丘"},
	}
	return sets, cards, groups
}

func writeGroupedCatalogue(t *testing.T, sets []catalog.Set, cards []catalog.Card, groups [][]string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "catalog.db")
	w, err := build.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	// Half the groups before the cards and half after: a card's groups
	// are found whatever the order.
	for _, g := range groups[:len(groups)/2] {
		if err := w.AddNames(g); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range sets {
		if err := w.AddSet(s); err != nil {
			t.Fatal(err)
		}
	}
	for i := range cards {
		if err := w.AddCard(&cards[i]); err != nil {
			t.Fatal(err)
		}
	}
	for _, g := range groups[len(groups)/2:] {
		if err := w.AddNames(g); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.Finish(context.Background(), Info{Generation: "g"}); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestSearchByNameGroups(t *testing.T) {
	sets, cards, groups := groupedSnapshot()
	db := openCatalogue(t, writeGroupedCatalogue(t, sets, cards, groups))
	for _, c := range []struct {
		q, zone string
		want    []string
	}{
		// The name of the group in another language finds the card.
		{"charizard", catalog.ZoneJP, []string{"jp-a-2", "jp-a-3"}},
		{"charizard", catalog.ZoneCHN, []string{"chn-a-2"}},
		{"リザードン", catalog.ZoneIntl, []string{"intl-a-2", "intl-a-3"}},
		{"妙蛙", catalog.ZoneIntl, []string{"intl-a-1"}},
		{"喷火龙", "", []string{"chn-a-2", "intl-a-2", "jp-a-2", "intl-a-3", "jp-a-3"}},
		// The romanized forms of a group's names too.
		{"pikaqiu", catalog.ZoneIntl, []string{"intl-a-6"}},
		{"fushigidane", catalog.ZoneIntl, []string{"intl-a-1"}},
		// Whole words only: Mewtwo is not in Mew's group, nor リザードン in
		// リザード's.
		{"夢幻", "", []string{"intl-a-4"}},
		{"charmeleon", "", []string{"jp-a-5"}},
		{"超梦", "", []string{"jp-a-4", "intl-a-5"}},
	} {
		var got []string
		if err := db.Search(SearchQuery{Q: c.q, Zone: c.zone, Limit: 100}, func(card []byte) { got = append(got, cardIDOf(t, card)) }); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%q in zone %q: %q, want %q", c.q, c.zone, got, c.want)
		}
	}
	if got := db.Info().NameGroups; got != int64(len(groups)) {
		t.Errorf("info: %d name groups, want %d", got, len(groups))
	}
}

// TestNameGroupsChangeAndExport: a change of the name groups is one change
// of kind "names", whose record is every group as now (a removal when none
// is left), listed in every zone; an export ends with the groups.
func TestNameGroupsChangeAndExport(t *testing.T) {
	sets, cards, groups := groupedSnapshot()
	steps := [][][]string{groups, groups, groups[:3], nil, nil}
	var prev *DB
	for i, g := range steps {
		path := filepath.Join(t.TempDir(), "catalog.db")
		w, err := build.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range sets {
			if err := w.AddSet(s); err != nil {
				t.Fatal(err)
			}
		}
		for j := range cards {
			if err := w.AddCard(&cards[j]); err != nil {
				t.Fatal(err)
			}
		}
		for _, names := range g {
			if err := w.AddNames(names); err != nil {
				t.Fatal(err)
			}
		}
		if prev != nil {
			w.Follow(prev, 5)
		}
		gen := "g" + string(rune('0'+i))
		if _, err := w.Finish(context.Background(), Info{Generation: gen}); err != nil {
			t.Fatal(err)
		}
		db := openCatalogue(t, path)
		if prev != nil {
			since := prev.Generation()
			for _, zone := range []string{"", catalog.ZoneJP} {
				var got []string
				_, _, err := db.Changes(ChangesQuery{Since: since, Zone: zone, Limit: 10}, func(c Change) error {
					got = append(got, c.Kind+" "+c.ID+" "+string(c.Record))
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
				var want []string
				switch {
				case i == 1 || i == 4: // the same groups, or none again
				case len(g) == 0:
					want = []string{"names names "}
				default:
					var all []byte
					for k, names := range g {
						if k > 0 {
							all = append(all, ',')
						}
						all = append(all, '[')
						for j, n := range names {
							if j > 0 {
								all = append(all, ',')
							}
							all = catalog.AppendJSONString(all, n)
						}
						all = append(all, ']')
					}
					want = []string{"names names [" + string(all) + "]"}
				}
				if !slices.Equal(got, want) {
					t.Errorf("step %d, zone %q: changes %q, want %q", i, zone, got, want)
				}
			}
		}
		e, err := db.Export(catalog.ZoneJP)
		if err != nil {
			t.Fatal(err)
		}
		r, err := e.Open()
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(r)
		r.Close()
		if err != nil || int64(len(body)) != e.Size() {
			t.Fatalf("step %d: export of %d bytes, size %d: %v", i, len(body), e.Size(), err)
		}
		var snap struct {
			Cards []json.RawMessage
			Names [][]string
		}
		if err := json.Unmarshal(body, &snap); err != nil {
			t.Fatalf("step %d: export %s: %v", i, body, err)
		}
		if len(snap.Cards) != 5 || !slices.EqualFunc(snap.Names, g, slices.Equal) {
			t.Errorf("step %d: export of %d cards and groups %q, want 5 and %q", i, len(snap.Cards), snap.Names, g)
		}
		if hasNames := strings.Contains(string(body), `"names"`); hasNames != (len(g) > 0) {
			t.Errorf("step %d: export names the groups: %v, with %d groups", i, hasNames, len(g))
		}
		prev = db
	}
}

// A name group whose text is missing from the file (a damaged file) fails
// a search that needs it, naming the group, rather than answer without it.
func TestSearchReportsAMissingGroup(t *testing.T) {
	sets, cards, groups := groupedSnapshot()
	path := writeGroupedCatalogue(t, sets, cards, groups)
	bdb, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = bdb.Update(func(tx *bolt.Tx) error {
		// Charizard's group, the third.
		return tx.Bucket(layout.BucketGroups).Delete(layout.AppendGroupTextKey(nil, 2))
	})
	if err2 := bdb.Close(); err == nil {
		err = err2
	}
	if err != nil {
		t.Fatal(err)
	}
	db := openCatalogue(t, path)
	err = db.Search(SearchQuery{Q: "charizard", Zone: catalog.ZoneJP, Limit: 10}, func([]byte) {})
	if !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), "name group 2 is missing") {
		t.Errorf("search with a group missing: %v, want the group named", err)
	}
	// A search that needs no group answers.
	var got []string
	if err := db.Search(SearchQuery{Q: "mewtwo", Zone: catalog.ZoneIntl, Limit: 10}, func(card []byte) { got = append(got, cardIDOf(t, card)) }); err != nil || !slices.Equal(got, []string{"intl-a-5"}) {
		t.Errorf("mewtwo: %q, %v", got, err)
	}
}
