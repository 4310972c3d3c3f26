package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/catalogd/catalogd/catalog"
	"github.com/catalogd/catalogd/catalog/store/build"
)

// TestSetListsInPieces: lists of sets longer than a piece come out whole
// and in list order (newest release first, undated last, then id), every
// zone's too, and each set counts the cards of all its runs.
func TestSetListsInPieces(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var sets []catalog.Set
	for i := range 3000 {
		s := catalog.Set{ID: fmt.Sprintf("set-%04d", i), Code: fmt.Sprintf("C%d", i), Name: strings.Repeat("n", rng.IntN(20)+1), Zone: catalog.Zones()[rng.IntN(3)]}
		if rng.IntN(5) > 0 {
			s.ReleasedOn = catalog.Some(fmt.Sprintf("%04d-%02d-%02d", 1996+rng.IntN(30), 1+rng.IntN(12), 1+rng.IntN(28)))
		}
		sets = append(sets, s)
	}
	// Cards of the first set in two runs, with another set's between.
	var cards []catalog.Card
	for _, i := range []int{0, 0, 1, 0} {
		s := sets[i]
		cards = append(cards, catalog.Card{ID: fmt.Sprintf("%s-%d", s.ID, len(cards)), Name: "x", SetName: s.Name, SetCode: s.Code, Number: "1", Language: "en", Variant: catalog.DefaultVariant, Zone: s.Zone})
	}
	// Pieces of 4 KiB: the lists take several.
	small := build.DefaultLimits()
	small.SetListPiece = 4 << 10
	db := openCatalogue(t, writeCatalogue(t, sets, cards, small, nil))

	want := slices.Clone(sets)
	slices.SortFunc(want, func(a, b catalog.Set) int {
		switch ad, bd := a.ReleasedOn.HasValue(), b.ReleasedOn.HasValue(); {
		case ad && !bd:
			return -1
		case bd && !ad:
			return 1
		case ad && a.ReleasedOn.Value != b.ReleasedOn.Value:
			return strings.Compare(b.ReleasedOn.Value, a.ReleasedOn.Value)
		}
		return strings.Compare(a.ID, b.ID)
	})
	for _, zone := range append([]string{""}, catalog.Zones()...) {
		pieces, err := db.SetList(zone)
		if err != nil {
			t.Fatal(err)
		}
		if zone == "" && len(pieces) < 2 {
			t.Fatalf("%d pieces: the list does not test pieces", len(pieces))
		}
		var got []catalog.Set
		if err := json.Unmarshal(bytes.Join(pieces, nil), &got); err != nil {
			t.Fatalf("zone %q: %v", zone, err)
		}
		var ids, wantIDs []string
		for _, s := range got {
			ids = append(ids, s.ID)
		}
		for _, s := range want {
			if zone == "" || s.Zone == zone {
				wantIDs = append(wantIDs, s.ID)
			}
		}
		if !slices.Equal(ids, wantIDs) {
			t.Errorf("zone %q: %d sets in another order than %d", zone, len(ids), len(wantIDs))
		}
	}
	for i, want := range map[int]int64{0: 3, 1: 1, 2: 0} {
		if total, err := db.SetCards(sets[i].ID, 1, 10, func([]byte) {}); err != nil || total != want {
			t.Errorf("set %s: %d cards, %v; want %d", sets[i].ID, total, err, want)
		}
	}
}

// TestSearchSetFilterInItsZone: a search's set filter names a set by id or
// by code, and with a zone only the sets of that zone: a set id of
// another zone leaves the filter to the zone's sets of that code, rather
// than to none.
func TestSearchSetFilterInItsZone(t *testing.T) {
	sets := []catalog.Set{
		{ID: "X1", Code: "A", Name: "Jay", Zone: catalog.ZoneJP},
		{ID: "chn-B", Code: "X1", Name: "Chen", Zone: catalog.ZoneCHN},
	}
	cards := []catalog.Card{
		{ID: "jp-A-1", Name: "Pikachu", SetName: "Jay", SetCode: "A", Number: "1", Language: "ja", Variant: catalog.DefaultVariant, Zone: catalog.ZoneJP},
		{ID: "chn-X1-1", Name: "Pikachu", SetName: "Chen", SetCode: "X1", Number: "1", Language: "zh-tw", Variant: catalog.DefaultVariant, Zone: catalog.ZoneCHN},
	}
	db := buildCatalogue(t, sets, cards, 0)
	for _, c := range []struct {
		zone string
		want []string
	}{
		{"", []string{"jp-A-1"}}, // the id first
		{catalog.ZoneJP, []string{"jp-A-1"}},
		{catalog.ZoneCHN, []string{"chn-X1-1"}}, // the code, in the zone asked
		{catalog.ZoneIntl, nil},
	} {
		var got []string
		if err := db.Search(SearchQuery{Q: "pikachu", Set: "X1", Zone: c.zone, Limit: 10}, func(card []byte) { got = append(got, cardIDOf(t, card)) }); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("set X1, zone %q: %v, want %v", c.zone, got, c.want)
		}
	}
}
