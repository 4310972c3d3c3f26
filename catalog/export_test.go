package catalog

import (
	"bytes"
	"encoding/json"
	"io"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"
)

// TestExportReaderSeeks reads the export whole, then from random offsets
// in random lengths, as resumed downloads and ranges do: every read gives
// the bytes of the whole at that offset.
func TestExportReaderSeeks(t *testing.T) {
	sets, cards := sampleSnapshot(t)
	db := buildCatalogue(t, sets, cards, postingMemory)
	for _, zone := range []string{"", ZoneIntl, ZoneJP, ZoneCHN} {
		e, err := db.Export(zone)
		if err != nil {
			t.Fatal(err)
		}
		r, err := e.Open()
		if err != nil {
			t.Fatal(err)
		}
		whole, err := io.ReadAll(r)
		if err != nil {
			t.Fatal(err)
		}
		if int64(len(whole)) != e.Size() {
			t.Fatalf("zone %q: read %d bytes, Size %d", zone, len(whole), e.Size())
		}
		var snap struct{ Sets, Cards []json.RawMessage }
		if err := json.Unmarshal(whole, &snap); err != nil {
			t.Fatalf("zone %q: export is not JSON: %v", zone, err)
		}
		wantCards := 0
		for _, c := range cards {
			if zone == "" || c.Zone == zone {
				wantCards++
			}
		}
		sets, err := db.SetsJSON(zone)
		if err != nil {
			t.Fatal(err)
		}
		if len(snap.Cards) != wantCards || !bytes.Contains(whole, sets) {
			t.Errorf("zone %q: %d cards, want %d, or the sets are not the list of sets", zone, len(snap.Cards), wantCards)
		}
		rng := rand.New(rand.NewPCG(1, uint64(len(zone))))
		buf := make([]byte, 5000)
		for range 300 {
			off := rng.Int64N(e.Size() + 10)
			n := rng.IntN(len(buf))
			if _, err := r.Seek(off, io.SeekStart); err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadFull(r, buf[:n])
			want := whole[min(off, int64(len(whole))):min(off+int64(n), int64(len(whole)))]
			if !bytes.Equal(buf[:got], want) || (got < n && err == nil) {
				t.Fatalf("zone %q: %d bytes at %d: got %d (%v), differing from the whole", zone, n, off, got, err)
			}
		}
		r.Close()
		if _, err := r.Read(buf); err == nil {
			t.Error("a read after Close succeeded")
		}
	}
}

// TestChangesOfAFollowingCatalogue writes a catalogue that follows another,
// committing every few kilobytes so that the change lists are put across
// many transactions, and checks its list against the two catalogues.
func TestChangesOfAFollowingCatalogue(t *testing.T) {
	sets, cards := sampleSnapshot(t)
	first := buildCatalogue(t, sets, cards, postingMemory)

	// Drop every 5th card, rename every 7th, and add one.
	var next []Card
	for i, c := range cards {
		switch {
		case i%5 == 0:
			continue
		case i%7 == 0:
			c.Name += " (reprint)"
		}
		next = append(next, c)
	}
	added := cards[1]
	added.ID += "-new"
	next = append(next, added)

	path := filepath.Join(t.TempDir(), "next.db")
	w, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w.commitAt = 4096
	for _, s := range sets {
		if err := w.AddSet(s); err != nil {
			t.Fatal(err)
		}
	}
	for i := range next {
		if err := w.AddCard(&next[i]); err != nil {
			t.Fatal(err)
		}
	}
	w.Follow(first, 5)
	if _, err := w.Finish(Info{Generation: "g2"}); err != nil {
		t.Fatal(err)
	}
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if got := db.SyncGenerations(); !slices.Equal(got, []string{"g", "g2"}) {
		t.Fatalf("sync generations %v, want [g g2]", got)
	}

	var want []string
	for i, c := range cards {
		switch {
		case i%5 == 0:
			want = append(want, "remove "+c.ID)
		case i%7 == 0:
			want = append(want, "upsert "+c.ID)
		}
	}
	want = append(want, "upsert "+added.ID)
	slices.Sort(want)
	var got, ids []string
	after := ""
	for {
		next, err := db.Changes(ChangesQuery{Since: "g", After: after, Limit: 3}, func(c Change) error {
			if c.Kind != "card" {
				t.Errorf("a change of %s %s: no set changed", c.Kind, c.ID)
			}
			op := "remove "
			if c.Record != nil {
				op = "upsert "
				if rec, err := db.AppendCard(nil, c.ID); err != nil || !bytes.Equal(rec, c.Record) {
					t.Errorf("card %s: the change's record differs from the card served", c.ID)
				}
			}
			got = append(got, op+c.ID)
			ids = append(ids, c.ID)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if next == "" {
			break
		}
		after = next
	}
	if !slices.IsSorted(ids) {
		t.Errorf("changes not in id order: %v", ids)
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("changes:\n%v\nwant:\n%v", got, want)
	}
	if _, err := db.Changes(ChangesQuery{Since: "nope", Limit: 1}, func(Change) error { return nil }); err == nil {
		t.Error("changes since an unknown generation: no error")
	}
	if _, err := db.Changes(ChangesQuery{Since: "g", After: "!!", Limit: 1}, func(Change) error { return nil }); err == nil {
		t.Error("a cursor that is not one: no error")
	}
}
