package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/catalogd/catalogd/catalog"
	"github.com/catalogd/catalogd/catalog/store/build"
	"github.com/catalogd/catalogd/catalog/store/internal/layout"
)

func card(id, zone, code, setName, number string) *catalog.Card {
	return &catalog.Card{ID: id, Name: "Card " + id, SetName: setName, SetCode: code, Number: number, Language: "en", Variant: catalog.DefaultVariant, Zone: zone}
}

// writeTestCatalogue writes two sets sharing a code across zones and returns
// the file's path.
func writeTestCatalogue(t *testing.T, generation string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "catalog.db")
	w, err := build.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	sets := []catalog.Set{
		{ID: "jp-X", Code: "X", Name: "Jay", Zone: catalog.ZoneJP, ReleasedOn: catalog.Some("2020-01-01"), CardCount: 2},
		{ID: "chn-X", Code: "X", Name: "Chen", Zone: catalog.ZoneCHN, CardCount: 1},
		{ID: "intl-Y", Code: "Y", Name: "Why", Zone: catalog.ZoneIntl, ReleasedOn: catalog.Some("2021-01-01"), CardCount: 0},
	}
	for _, s := range sets {
		if err := w.AddSet(s); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.AddSet(catalog.Set{ID: "jp-X", Code: "Z", Name: "n", Zone: catalog.ZoneJP}); !errors.Is(err, build.ErrDuplicate) {
		t.Fatalf("duplicate set id: %v", err)
	}
	if err := w.AddSet(catalog.Set{ID: "jp-Z", Code: "X", Name: "n", Zone: catalog.ZoneJP}); !errors.Is(err, build.ErrDuplicate) {
		t.Fatalf("duplicate zone and code: %v", err)
	}
	for _, c := range []*catalog.Card{card("jp-X-10", catalog.ZoneJP, "X", "Jay", "10"), card("jp-X-2", catalog.ZoneJP, "X", "Jay", "2/10"), card("chn-X-1", catalog.ZoneCHN, "X", "Chen", "1")} {
		if err := w.AddCard(c); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.AddCard(card("jp-X-2", catalog.ZoneJP, "X", "Jay", "3")); !errors.Is(err, build.ErrDuplicate) {
		t.Fatalf("duplicate card id: %v", err)
	}
	info, err := w.Finish(context.Background(), Info{Generation: generation, ImportedAt: time.Unix(1e9, 0).UTC()})
	if err != nil {
		t.Fatal(err)
	}
	want := []ZoneCount{{Zone: catalog.ZoneIntl, Sets: 1, Cards: 0}, {Zone: catalog.ZoneJP, Sets: 1, Cards: 2}, {Zone: catalog.ZoneCHN, Sets: 1, Cards: 1}}
	if len(info.Zones) != 3 || info.Zones[0] != want[0] || info.Zones[1] != want[1] || info.Zones[2] != want[2] {
		t.Fatalf("zones %+v, want %+v", info.Zones, want)
	}
	return path
}

func TestWriteAndOpen(t *testing.T) {
	path := writeTestCatalogue(t, "g1")
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if g := db.Info().Generation; g != "g1" {
		t.Errorf("generation %q", g)
	}
	if s, err := db.Set("X"); err != nil || s.ID != "jp-X" {
		t.Errorf("Set(X) = %v, %v; want jp-X (zone order)", s.ID, err)
	}
	if s, err := db.Set("chn-X"); err != nil || s.ID != "chn-X" {
		t.Errorf("Set(chn-X) = %v, %v", s.ID, err)
	}
	if _, err := db.Set("x"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Set(x): %v, want not found (codes are case-sensitive)", err)
	}
	err = db.read(func(r *reader) error {
		if got, err := r.setsMatching("X", -1); len(got) != 2 || err != nil {
			t.Errorf("setsMatching(X) = %d sets, %v", len(got), err)
		}
		if got, err := r.setsMatching("X", catalog.ZoneIndex(catalog.ZoneCHN)); len(got) != 1 || err != nil || !bytes.Contains(got[0].JSON, []byte(`"id":"chn-X"`)) {
			t.Errorf("setsMatching(X, chn) = %+v, %v", got, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	all, err := db.SetsJSON("")
	if err != nil {
		t.Fatal(err)
	}
	if got := string(all); !strings.HasPrefix(got, `[{"id":"intl-Y"`) || !strings.HasSuffix(got, `"id":"chn-X","code":"X","name":"Chen","zone":"chn","cardCount":1}]`) {
		t.Errorf("SetsJSON order: %s", got)
	}

	var got []string
	total, err := db.SetCards("X", 1, 10, func(c []byte) { got = append(got, string(c)) })
	set, serr := db.Set("X")
	if err != nil || serr != nil || set.ID != "jp-X" || total != 2 || len(got) != 2 {
		t.Fatalf("SetCards: %v %d %v %q", set.ID, total, err, got)
	}
	if !strings.Contains(got[0], `"id":"jp-X-2"`) || !strings.Contains(got[1], `"id":"jp-X-10"`) {
		t.Errorf("order by number: %q", got)
	}
	if _, err := db.AppendCard(nil, "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("AppendCard(nope): %v", err)
	}
}

func TestOpenRejectsOtherFiles(t *testing.T) {
	dir := t.TempDir()
	if _, err := Open(filepath.Join(dir, "missing.db")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	junk := filepath.Join(dir, "junk.db")
	os.WriteFile(junk, []byte("not a database at all, just some bytes"), 0o644)
	if _, err := Open(junk); err == nil || !strings.Contains(err.Error(), junk) {
		t.Errorf("junk file: %v", err)
	}
	empty := filepath.Join(dir, "empty.db")
	os.WriteFile(empty, nil, 0o644)
	if _, err := Open(empty); err == nil || !strings.Contains(err.Error(), empty+": the file is empty") {
		t.Errorf("empty file: %v", err)
	}
}

// TestSearchScansToTheEnd: a query that every card matches (a term of one
// character, which its character's list serves) walks every entry, and
// stops at the last one whether its block is full or not, with or without
// results.
func TestSearchScansToTheEnd(t *testing.T) {
	for _, n := range []int{2 * layout.IndexBlockSize, 2*layout.IndexBlockSize + 5} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "c.db")
			w, err := build.Create(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := w.AddSet(catalog.Set{ID: "jp-S", Code: "S", Name: "Ess", Zone: catalog.ZoneJP}); err != nil {
				t.Fatal(err)
			}
			for i := range n {
				if err := w.AddCard(card(fmt.Sprintf("jp-S-%d", i), catalog.ZoneJP, "S", "Ess", fmt.Sprint(i))); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := w.Finish(context.Background(), Info{Generation: "g"}); err != nil {
				t.Fatal(err)
			}
			db, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			for _, c := range []struct {
				q    SearchQuery
				want int
			}{
				{SearchQuery{Q: "c", Limit: 1000}, n},
				{SearchQuery{Q: "c", Limit: n}, n},
				{SearchQuery{Q: "c", Limit: n - 1}, n - 1},
				{SearchQuery{Q: "c", Zone: catalog.ZoneCHN, Limit: 1000}, 0},
				{SearchQuery{Q: "q", Limit: 1000}, 0},
			} {
				got := 0
				if err := db.Search(c.q, func([]byte) { got++ }); err != nil || got != c.want {
					t.Errorf("Search(%+v): %d cards, %v; want %d", c.q, got, err, c.want)
				}
			}
		})
	}
}

// TestLiveSwapWaitsForReaders: a swapped-out catalogue stays open while a
// request holds it and closes after.
func TestLiveSwapWaitsForReaders(t *testing.T) {
	a, err := Open(writeTestCatalogue(t, "a"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := Open(writeTestCatalogue(t, "b"))
	if err != nil {
		t.Fatal(err)
	}
	live := NewLive(a)
	held, release := live.Acquire()
	closed := live.Swap(b)
	if live.Current().Info().Generation != "b" {
		t.Fatal("Swap did not replace the catalogue")
	}
	// The held catalogue still answers.
	if _, err := held.AppendCard(nil, "jp-X-2"); err != nil {
		t.Fatalf("held catalogue after swap: %v", err)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			db, rel := live.Acquire()
			defer rel()
			if _, err := db.AppendCard(nil, "chn-X-1"); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	select {
	case <-closed:
		t.Fatal("Swap says the old catalogue closed while a request holds it")
	default:
	}
	release()
	<-closed // Swap's channel closes once the old catalogue has
	if _, err := held.AppendCard(nil, "jp-X-2"); err == nil {
		t.Fatal("the old catalogue was not closed after its last release")
	}
	if err := live.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestReadersAcrossGoroutinesAndClose uses the pooled read transactions
// from many goroutines at once, then checks that Close waits for a call in
// progress, returns once it ends, and that calls after it fail cleanly.
func TestReadersAcrossGoroutinesAndClose(t *testing.T) {
	db, err := Open(writeTestCatalogue(t, "g1"))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 2 * readersPerDB {
		wg.Go(func() {
			for range 50 {
				card, err := db.AppendCard(nil, "jp-X-2")
				if err != nil || !bytes.Contains(card, []byte(`"id":"jp-X-2"`)) {
					t.Errorf("AppendCard: %s, %v", card, err)
					return
				}
				if err := db.Search(SearchQuery{Q: "jay", Limit: 5}, func([]byte) {}); err != nil {
					t.Errorf("Search: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
	if n := len(db.readers); n == 0 || n > readersPerDB {
		t.Errorf("%d idle readers kept, want between 1 and %d", n, readersPerDB)
	}

	inCall, finish := make(chan struct{}), make(chan struct{})
	go db.SetCards("X", 1, 1, func([]byte) {
		close(inCall)
		<-finish
	})
	<-inCall
	closed := make(chan error)
	go func() { closed <- db.Close() }()
	select {
	case err := <-closed:
		t.Fatalf("Close returned (%v) while a call was reading", err)
	case <-time.After(100 * time.Millisecond):
	}
	close(finish)
	select {
	case err := <-closed:
		if err != nil {
			t.Fatalf("Close: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not return after the last call ended")
	}
	if _, err := db.AppendCard(nil, "jp-X-2"); err == nil || errors.Is(err, ErrNotFound) {
		t.Errorf("AppendCard after Close: %v, want an error saying the file is closed", err)
	}
}

// Info hands each caller its own slices: a caller that sorts or edits
// them changes no other caller's view of the catalogue.
func TestInfoIsTheCallersCopy(t *testing.T) {
	db, err := Open(writeTestCatalogue(t, "g1"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	first := db.Info()
	first.Zones[0].Cards = -1
	if again := db.Info(); again.Zones[0].Cards == -1 {
		t.Errorf("a caller's change to Info showed in the next call: %+v", again.Zones)
	}
}

// TestOpenRefusesAFileCutShort opens copies of a catalogue cut at every
// kind of place, as an interrupted copy or a full disk leaves them: each
// is an error naming the cut, never a crash of the process (bbolt maps the
// whole file and would read past its end). Then copies with one page's
// body overwritten in turn: each opens, or is an error that says the file
// is damaged, and none panics.
func TestOpenRefusesAFileCutShort(t *testing.T) {
	path, _ := writePagedCatalogue(t, build.DefaultLimits().CommitAt, build.DefaultLimits().SetSort)
	whole, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	page := os.Getpagesize()
	for _, size := range []int{2 * page, 2*page + 100, len(whole) / 2, len(whole)/2 + 1, len(whole) - page, len(whole) - 1} {
		cut := filepath.Join(t.TempDir(), "cut.db")
		if err := os.WriteFile(cut, whole[:size], 0o644); err != nil {
			t.Fatal(err)
		}
		db, err := Open(cut)
		if err == nil {
			db.Close()
			t.Errorf("a file cut at %d of %d bytes opened", size, len(whole))
		} else if !strings.Contains(err.Error(), "cut short") {
			t.Errorf("a file cut at %d of %d bytes: %v, want it called cut short", size, len(whole), err)
		}
	}

	damaged := 0
	for at := 2 * page; at < len(whole); at += page {
		b := bytes.Clone(whole)
		copy(b[at+16:at+page], bytes.Repeat([]byte{0xA5}, page-16)) // the header kept
		p := filepath.Join(t.TempDir(), "damaged.db")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		db, err := Open(p)
		switch {
		case err == nil:
			db.Close()
		case strings.Contains(err.Error(), "damaged"):
			damaged++
		}
	}
	if damaged == 0 {
		t.Error("no damaged page was read by Open")
	}
}

// A card is found by its id whatever the id's shape: of the usual one
// (zone, code, number), with hyphens in its code, naming another set or
// number than the card's own, or of no shape at all; an id of the usual
// shape that no card has is missing.
func TestCardsByIDOfAnyShape(t *testing.T) {
	sets := []catalog.Set{
		{ID: "intl-S1", Code: "S1", Name: "One", Zone: "intl", CardCount: 4},
		{ID: "intl-SV-P", Code: "SV-P", Name: "Promos", Zone: "intl", CardCount: 1},
	}
	cards := []catalog.Card{
		*card("intl-S1-1", "intl", "S1", "One", "1"),
		*card("intl-S1-9", "intl", "S1", "One", "2"),   // names another number
		*card("intl-SV-P-3", "intl", "S1", "One", "3"), // names another set
		*card("a card of no shape", "intl", "S1", "One", "4"),
		*card("intl-SV-P-007", "intl", "SV-P", "Promos", "007"),
	}
	db := buildCatalogue(t, sets, cards, 0)
	ids := []string{"intl-S1-1", "intl-S1-9", "intl-SV-P-3", "a card of no shape", "intl-SV-P-007", "intl-S1-2", "intl-SV-P-7", "intl-S1-99", "nope"}
	var found, missing []string
	if err := db.Cards(ids, func(c []byte) { found = append(found, cardIDOf(t, c)) }, func(id string) { missing = append(missing, id) }); err != nil {
		t.Fatal(err)
	}
	// "intl-S1-2" is the key of the card numbered 2 but not its id, and
	// "intl-SV-P-7" names the number of "intl-SV-P-007" in another form.
	if want := ids[:5]; !slices.Equal(found, want) {
		t.Errorf("found %q, want %q", found, want)
	}
	if want := ids[5:]; !slices.Equal(missing, want) {
		t.Errorf("missing %q, want %q", missing, want)
	}
	for _, id := range ids[:5] {
		if c, err := db.AppendCard(nil, id); err != nil || cardIDOf(t, c) != id {
			t.Errorf("AppendCard(%q) = %s, %v", id, c, err)
		}
	}
}
