package store

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"os"
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

// TestExportReaderSeeks reads the export whole, then from random offsets
// in random lengths, as resumed downloads and ranges do: every read gives
// the bytes of the whole at that offset.
func TestExportReaderSeeks(t *testing.T) {
	sets, cards := sampleSnapshot(t)
	db := buildCatalogue(t, sets, cards, build.DefaultLimits().Postings)
	for _, zone := range []string{"", catalog.ZoneIntl, catalog.ZoneJP, catalog.ZoneCHN} {
		e, err := db.Export(zone)
		if err != nil {
			t.Fatal(err)
		}
		r, err := e.Open()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() }) // before the catalogue's, which waits for it
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
	first := buildCatalogue(t, sets, cards, build.DefaultLimits().Postings)

	// Drop every 5th card, rename every 7th, and add one.
	var next []catalog.Card
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
	w := createCommitting(t, path, 4096)
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
	if _, err := w.Finish(context.Background(), Info{Generation: "g2"}); err != nil {
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
		next, _, err := db.Changes(ChangesQuery{Since: "g", After: after, Limit: 3}, func(c Change) error {
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
	if _, _, err := db.Changes(ChangesQuery{Since: "nope", Limit: 1}, func(Change) error { return nil }); err == nil {
		t.Error("changes since an unknown generation: no error")
	}
	if _, _, err := db.Changes(ChangesQuery{Since: "g", After: "!!", Limit: 1}, func(Change) error { return nil }); err == nil {
		t.Error("a cursor that is not one: no error")
	}
}

// readExport reads the export of zone whole, and returns what it read, its
// Size and the error that ended the read.
func readExport(t *testing.T, db *DB, zone string) ([]byte, int64, error) {
	t.Helper()
	e, err := db.Export(zone)
	if err != nil {
		t.Fatal(err)
	}
	r, err := e.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got, err := io.ReadAll(r)
	return got, e.Size(), err
}

// readExports reads the export of every zone and of each, whole, by zone.
func readExports(t *testing.T, db *DB) map[string][]byte {
	t.Helper()
	exports := map[string][]byte{}
	for _, zone := range []string{"", catalog.ZoneIntl, catalog.ZoneJP, catalog.ZoneCHN} {
		whole, size, err := readExport(t, db, zone)
		if err != nil || int64(len(whole)) != size {
			t.Fatalf("zone %q: read %d bytes of %d: %v", zone, len(whole), size, err)
		}
		exports[zone] = whole
	}
	return exports
}

// openEditedCopy opens a copy of the catalogue at path, changed by edit.
func openEditedCopy(t *testing.T, path string, edit func(*bolt.Tx) error) *DB {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	edited := filepath.Join(t.TempDir(), "c.db")
	if err := os.WriteFile(edited, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return openEdited(t, edited, edit)
}

// TestExportOfStoredSetBytes writes sets whose cards come interleaved, in
// transactions of every size and with the runs of their cards spilled or
// not: the import stores the bytes of each set's cards, and an export laid
// out from them is the export of a file without them, whose sets are
// measured by a walk of their cards.
func TestExportOfStoredSetBytes(t *testing.T) {
	for _, sizes := range []struct{ commitAt, sortLimit int }{{1, build.DefaultLimits().SetSort}, {4 << 10, 1 << 10}, {build.DefaultLimits().CommitAt, build.DefaultLimits().SetSort}} {
		path, _ := writePagedCatalogue(t, sizes.commitAt, sizes.sortLimit)
		db, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		err = db.db.View(func(tx *bolt.Tx) error {
			walked := map[string]int64{}
			c := tx.Bucket(layout.BucketCards).Cursor()
			for k, v := c.First(); k != nil && k[0] != layout.KeyCardID; k, v = c.Next() {
				n, _ := layout.SetPrefixLen(k)
				walked[string(k[:n])] += int64(len(v))
			}
			stored := map[string]int64{}
			err := tx.Bucket(layout.BucketSetBytes).ForEach(func(k, v []byte) error {
				stored[string(k)] = int64(binary.BigEndian.Uint64(v))
				return nil
			})
			if len(walked) != len(pagedSets) || !maps.Equal(stored, walked) {
				t.Errorf("commit %d, sort %d: stored bytes of sets %v, want %v", sizes.commitAt, sizes.sortLimit, stored, walked)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		want := readExports(t, db)
		db.Close()

		for _, edit := range []struct {
			name string
			edit func(*bolt.Tx) error
		}{
			{"without the bucket", func(tx *bolt.Tx) error { return tx.DeleteBucket(layout.BucketSetBytes) }},
			{"without one set", func(tx *bolt.Tx) error {
				return tx.Bucket(layout.BucketSetBytes).Delete(layout.AppendSetPrefix(nil, layout.ZoneByte(catalog.ZoneJP), "M"))
			}},
		} {
			got := readExports(t, openEditedCopy(t, path, edit.edit))
			if !maps.EqualFunc(got, want, bytes.Equal) {
				t.Errorf("commit %d, sort %d, %s: the exports differ from those of the stored bytes", sizes.commitAt, sizes.sortLimit, edit.name)
			}
		}
	}
}

// TestExportOfAWrongSetSize stores, for each set in turn, one byte more or
// less than its cards take, or a malformed size: the download fails at that
// set, after bytes that are all the true export's, and never goes on with
// bytes at other offsets than the layout says.
func TestExportOfAWrongSetSize(t *testing.T) {
	path, _ := writePagedCatalogue(t, build.DefaultLimits().CommitAt, build.DefaultLimits().SetSort)
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	whole := readExports(t, db)[""]
	db.Close()

	for _, s := range pagedSets {
		prefix := layout.AppendSetPrefix(nil, layout.ZoneByte(s.zone), s.code)
		for _, delta := range []int64{-1, 1} {
			db := openEditedCopy(t, path, func(tx *bolt.Tx) error {
				b := tx.Bucket(layout.BucketSetBytes)
				n := int64(binary.BigEndian.Uint64(b.Get(prefix))) + delta
				return b.Put(prefix, binary.BigEndian.AppendUint64(nil, uint64(n)))
			})
			got, _, err := readExport(t, db, "")
			if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("set %q of zone %s do not match", s.code, s.zone)) {
				t.Errorf("set %s-%s, size %+d: read %d bytes, %v; want an error naming the set", s.zone, s.code, delta, len(got), err)
			}
			if !bytes.HasPrefix(whole, got) {
				t.Errorf("set %s-%s, size %+d: the %d bytes read before the error are not the export's", s.zone, s.code, delta, len(got))
			}
		}

		db := openEditedCopy(t, path, func(tx *bolt.Tx) error {
			return tx.Bucket(layout.BucketSetBytes).Put(prefix, []byte{1, 2, 3})
		})
		if _, err := db.Export(""); err == nil || !strings.Contains(err.Error(), "not 8") {
			t.Errorf("set %s-%s, a size of 3 bytes: %v, want an error", s.zone, s.code, err)
		}

		// Sizes no cards can have would lay sets over each other: fewer
		// bytes than cards, more than the file, or negative as an int64.
		for _, n := range []uint64{0, uint64(s.cards) - 1, 1 << 40, 1<<64 - 5001} {
			db := openEditedCopy(t, path, func(tx *bolt.Tx) error {
				return tx.Bucket(layout.BucketSetBytes).Put(prefix, binary.BigEndian.AppendUint64(nil, n))
			})
			if _, err := db.Export(""); err == nil || !strings.Contains(err.Error(), "cannot be") {
				t.Errorf("set %s-%s, a size of %d bytes: %v, want an error", s.zone, s.code, n, err)
			}
		}
	}
}

// TestCursorsOfAnotherVersion checks that cursors before and after the
// list's sum refuse each other: a cursor without the sum is refused, and
// one with it has a zero byte where the record key started, which a
// catalogd that read no sum refused as a key.
func TestCursorsOfAnotherVersion(t *testing.T) {
	q := ChangesQuery{Since: "20261126T102435Z-3ab69628af"}
	key := append([]byte{layout.ChangeCard}, "jp-SV1a-001"...)
	pin := "20261126T110000Z-00000000"
	b, err := base64.RawURLEncoding.DecodeString(encodeCursor(pin, q, key))
	if err != nil {
		t.Fatal(err)
	}
	if at := 1 + len(pin); b[at] == layout.ChangeSet || b[at] == layout.ChangeCard {
		t.Errorf("the byte after the generation is %d, which names a record", b[at])
	}
	old := binary.AppendUvarint(nil, uint64(len(pin)))
	old = append(append(old, pin...), key...)
	if _, _, err := decodeCursor(base64.RawURLEncoding.EncodeToString(old), q); !errors.Is(err, ErrBadCursor) {
		t.Errorf("a cursor without the list's sum: %v, want ErrBadCursor", err)
	}
	for _, key := range [][]byte{key, {layout.ChangeSet, 'X'}, {layout.ChangeNames}} {
		if gotPin, gotKey, err := decodeCursor(encodeCursor(pin, q, key), q); err != nil || gotPin != pin || !bytes.Equal(gotKey, key) {
			t.Errorf("decodeCursor(encodeCursor) = %q, %q, %v", gotPin, gotKey, err)
		}
	}
	for _, key := range [][]byte{{layout.ChangeCard}, {layout.ChangeNames, 'x'}, {9, 'x'}} {
		if _, _, err := decodeCursor(encodeCursor(pin, q, key), q); !errors.Is(err, ErrBadCursor) {
			t.Errorf("a cursor after %q: %v, want ErrBadCursor", key, err)
		}
	}

	// A cursor that carries two generations has a marker that the version
	// before it, which took a zero byte alone, refuses: a 400 that loses
	// nothing, not a 410 for a generation "pin~held" it does not hold.
	held := pin + "~20261126T120000Z-11111111"
	b, err = base64.RawURLEncoding.DecodeString(encodeCursor(held, q, key))
	if err != nil {
		t.Fatal(err)
	}
	if m := b[1+len(held)]; m == 0 || m == layout.ChangeSet || m == layout.ChangeCard || m == layout.ChangeNames {
		t.Errorf("the byte after two generations is %d, which the version before read as its own", m)
	}
	if got, gotKey, err := decodeCursor(encodeCursor(held, q, key), q); err != nil || got != held || !bytes.Equal(gotKey, key) {
		t.Errorf("decodeCursor(encodeCursor(%q)) = %q, %q, %v", held, got, gotKey, err)
	}
	// Starts and markers that disagree, as a forged cursor's would.
	forge := func(start string, marker byte) string {
		b := binary.AppendUvarint(nil, uint64(len(start)))
		b = append(append(b, start...), marker)
		b = binary.BigEndian.AppendUint32(b, listSum(q))
		return base64.RawURLEncoding.EncodeToString(append(b, key...))
	}
	for _, c := range []struct {
		start  string
		marker byte
	}{
		{held, 0}, {pin, heldMarker}, {pin + "~", heldMarker}, {"~" + pin, heldMarker},
		{held + "~x", heldMarker}, {pin + "~\xff", heldMarker},
	} {
		if _, _, err := decodeCursor(forge(c.start, c.marker), q); !errors.Is(err, ErrBadCursor) {
			t.Errorf("a cursor of start %q and marker %d: %v, want ErrBadCursor", c.start, c.marker, err)
		}
	}
}

// TestChangesFromANewerGeneration: a generation whose changes the file
// does not hold is newer than the active one (a replica beside this one
// switched first) or gone; its name's time tells which, for since and for
// the generation a cursor started at. Newer is also recent: a generation
// made hours ago that this server never switched to, or one from the
// future, is one it will not switch to.
func TestChangesFromANewerGeneration(t *testing.T) {
	active := "20261130T120000Z-0a0a0a0a"
	db, err := Open(writeTestCatalogue(t, active))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	now := time.Date(2026, 11, 30, 12, 10, 0, 0, time.UTC)
	db.now = func() time.Time { return now }
	none := func(Change) error { return nil }
	later, earlier := "20261130T120001Z-0b0b0b0b", "20261130T115959Z-0c0c0c0c"
	for since, want := range map[string]error{
		later:                       ErrNewerGeneration,
		"20261130T121400Z-0b0b0b0b": ErrNewerGeneration, // a clock a little ahead
		earlier:                     ErrOutsideHistory,
		"20261130T120000Z-ffffffff": ErrOutsideHistory, // the same second: not newer
		"20261130T121600Z-0b0b0b0b": ErrOutsideHistory, // past the clocks' skew
		"29991231T000000Z-00000000": ErrOutsideHistory,
		"20261130T120001Z":          ErrOutsideHistory, // not a generation's name
		"20261130T120001Z-0B0B0B0B": ErrOutsideHistory,
		"20261130T120001Z-0b0b0b":   ErrOutsideHistory,
		"junk":                      ErrOutsideHistory,
		"99999999T999999Z-0":        ErrOutsideHistory, // no time at all
	} {
		if _, _, err := db.Changes(ChangesQuery{Since: since, Limit: 10}, none); !errors.Is(err, want) {
			t.Errorf("since %s: %v, want %v", since, err, want)
		}
	}
	// Six hours on, a newer generation this server has not switched to is
	// one it will not: a file restored from a backup, say.
	now = time.Date(2026, 11, 30, 18, 0, 1, 0, time.UTC)
	if _, _, err := db.Changes(ChangesQuery{Since: later, Limit: 10}, none); !errors.Is(err, ErrOutsideHistory) {
		t.Errorf("since %s, six hours on: %v, want ErrOutsideHistory", later, err)
	}
	now = time.Date(2026, 11, 30, 12, 10, 0, 0, time.UTC)
	q := ChangesQuery{Since: active, Limit: 10}
	q.After = encodeCursor(later, q, []byte{layout.ChangeCard, 'x'})
	if _, _, err := db.Changes(q, none); !errors.Is(err, ErrNewerGeneration) || !strings.Contains(err.Error(), "where this list of changes started") {
		t.Errorf("a cursor that started at a newer generation: %v, want ErrNewerGeneration", err)
	}
	if _, _, err := db.Changes(ChangesQuery{Since: active, Limit: 10}, none); err != nil {
		t.Errorf("since the active generation: %v", err)
	}

	// A since of two generations: a copy of the first that holds records
	// of the second, which must follow it.
	for since, want := range map[string]error{
		active + "~" + later:   ErrNewerGeneration, // a replica ahead gave pages of it
		active + "~" + earlier: ErrOutsideHistory,
		active + "~" + active:  ErrOutsideHistory,
		earlier + "~" + active: ErrOutsideHistory,
		later + "~" + later:    ErrNewerGeneration,
	} {
		if _, _, err := db.Changes(ChangesQuery{Since: since, Limit: 10}, none); !errors.Is(err, want) {
			t.Errorf("since %s: %v, want %v", since, err, want)
		}
	}
	// A cursor that a replica ahead made carries that replica's
	// generation on to the next since.
	q = ChangesQuery{Since: active, Limit: 10}
	q.After = encodeCursor(active+"~"+later, q, []byte{layout.ChangeCard, 'x'})
	if next, nextSince, err := db.Changes(q, none); err != nil || next != "" || nextSince != active+"~"+later {
		t.Errorf("after a cursor of %s~%s: next %q, next since %q, %v; want the last page, and the two generations", active, later, next, nextSince, err)
	}
	if _, nextSince, err := db.Changes(ChangesQuery{Since: active, Limit: 10}, none); err != nil || nextSince != active {
		t.Errorf("since the active generation: next since %q, %v; want %q", nextSince, err, active)
	}
}

// TestGenerationsSortByTime: a generation's name sorts after the one it
// replaces, even when the import comes in the same second, or after the
// clock was set back a little; otherwise its name says when it was
// imported, and so it does after a generation named by a clock far ahead.
func TestGenerationsSortByTime(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 500, time.UTC)
	for _, c := range []struct {
		after, wantTime string
		follows         bool // the name must sort after after
	}{
		{"", "20261130T120000Z", false},
		{"20261130T115959Z-0c0c0c0c", "20261130T120000Z", true},
		{"20261130T120000Z-0a0a0a0a", "20261130T120001Z", true},  // the same second
		{"20261130T120200Z-0a0a0a0a", "20261130T120201Z", true},  // a clock set back a little
		{"20261130T130000Z-0a0a0a0a", "20261130T120000Z", false}, // an hour ahead: that clock was wrong
		{"junk", "20261130T120000Z", false},
	} {
		gen := NewGeneration(now, c.after)
		stamp, suffix, _ := strings.Cut(gen, "-")
		if _, ok := generationMade(gen); !ok || stamp != c.wantTime || len(suffix) != 8 {
			t.Errorf("NewGeneration after %q = %q, want %s-xxxxxxxx", c.after, gen, c.wantTime)
		}
		if c.follows && gen <= c.after {
			t.Errorf("NewGeneration after %q = %q, which does not sort after it", c.after, gen)
		}
	}
}
