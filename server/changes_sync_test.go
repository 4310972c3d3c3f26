package server

import (
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The tests of this file follow clients whose syncs meet what a partner's
// meets in production: imports swapped in while they page, replicas that
// switch at different moments, syncs that stop half-way, and a catalogue
// put back and imported over (docs/CONTRACT.md, Changes).

// TestChangesAfterACatalogueIsPutBack: a client pages across an import,
// so it holds a record as that import left it; then the catalogue file of
// before that import is put back (a backup restored, a release rolled
// back) and the next catalogue is imported over it, without that record's
// change. Its changes never name the record. The client's next sync, from
// the meta.nextSince that names the import it holds records of, is 410,
// and the client downloads the export again; from the since the contract
// gave before nextSince, the sync would succeed and leave the record
// wrong. The same when the file is put back while the client pages, and
// when the client stops after the page that brought the record.
func TestChangesAfterACatalogueIsPutBack(t *testing.T) {
	for _, when := range []string{"after the sync", "while it pages", "after a sync that stopped half-way"} {
		t.Run(when, func(t *testing.T) {
			h := newHistory(t, 21, 30)
			start := h.importAfter(8)
			second := h.importAfter(1)
			backup := filepath.Join(t.TempDir(), "backup.db")
			putFile(t, h.db, backup)
			sets, cards := cloneRecords(h.sets), cloneRecords(h.cards)
			f := newFixtureAt(t, h.db, nil)
			var now string // the catalogue imported over the one put back
			putBack := func() {
				putFile(t, backup, h.db)
				h.sets, h.cards = sets, cards
				h.addSet()
				now = h.importNow()
				swapIn(t, f, h.db)
			}

			// The last two cards by id that the second import left as
			// they were: both are edited after the first page, and the
			// first of them, which a later page of one change brings, is
			// the record the test follows.
			var ids []string
			for _, id := range slices.Sorted(maps.Keys(h.cards)) {
				if c := "card " + id; h.states[start][c] == h.states[second][c] {
					ids = append(ids, id)
				}
			}
			if len(ids) < 2 {
				t.Fatalf("%d of %d cards unchanged", len(ids), len(h.cards))
			}
			edited := ids[len(ids)-2]
			copy := cloneState(h.states[start])
			var firstTo, editGen string
			next := syncOnce(t, f, copy, start, "", 1, false, func(page int) bool {
				if page == 0 {
					firstTo = f.live.Current().Generation()
					h.cards[edited].Name += " (edited)"
					h.cards[ids[len(ids)-1]].Name += " (edited)"
					editGen = h.importNow()
					swapIn(t, f, h.db)
					return false
				}
				if !strings.Contains(copy["card "+edited], "(edited)") || now != "" {
					return false
				}
				switch when {
				case "while it pages":
					putBack()
				case "after a sync that stopped half-way":
					return true
				}
				return false
			})
			if !strings.Contains(copy["card "+edited], "(edited)") {
				t.Fatalf("the copy does not hold the edit swapped in while it paged: %s", copy["card "+edited])
			}
			if _, held, _ := strings.Cut(next, "~"); held != editGen {
				t.Fatalf("next since %q does not name the generation of the edit, %q", next, editGen)
			}
			if now == "" {
				putBack()
			}
			gens := f.live.Current().SyncGenerations()
			if !slices.Contains(gens, firstTo) || slices.Contains(gens, editGen) {
				t.Fatalf("the history %v should hold the first page's to %s and not the edit's %s", gens, firstTo, editGen)
			}

			r := f.get("/catalog/changes?since=" + url.QueryEscape(next))
			r.wantStatus(t, http.StatusGone)
			if !strings.Contains(string(r.body), editGen) || !strings.Contains(string(r.body), "/catalog/export") {
				t.Errorf("the 410 does not name the generation gone and the export: %s", r.body)
			}
			// What the since of before nextSince would have let through:
			// the first page's to, or since again after a sync that
			// stopped.
			old := firstTo
			if when == "after a sync that stopped half-way" {
				old = start
			}
			byOld := cloneState(copy)
			syncOnce(t, f, byOld, old, "", 2, false, nil)
			if byOld["card "+edited] == h.states[now]["card "+edited] {
				t.Fatalf("a sync from %s brought %s back: the case is not the one this test is of", old, edited)
			}
		})
	}
}

// TestChangesAcrossReplicas: behind one address, a client's pages come
// from two replicas, one of which switches to a new catalogue while the
// client pages. Whichever replica serves the last page, its nextSince
// names the generation the one ahead gave pages from; the replica behind
// answers the next sync 503 (retry), and the one ahead brings the copy to
// its catalogue exactly.
func TestChangesAcrossReplicas(t *testing.T) {
	for _, lastOnAhead := range []bool{false, true} {
		t.Run(fmt.Sprint("last page on the replica ahead: ", lastOnAhead), func(t *testing.T) {
			h := newHistory(t, 31, 30)
			start := h.importAfter(4)
			before := h.importAfter(4)
			behindDB := filepath.Join(t.TempDir(), "catalog.db")
			putFile(t, h.db, behindDB)
			behind, ahead := newFixtureAt(t, behindDB, nil), newFixtureAt(t, h.db, nil)

			// Pages of one change: the first from the replica behind, the
			// second and third from each in turn, the rest from one.
			copy := cloneState(h.states[start])
			var after, nextSince string
			pages := 0
			for ; nextSince == ""; pages++ {
				replica := behind
				if pages == 1 || pages > 2 && lastOnAhead {
					replica = ahead
				}
				q := url.Values{"since": {start}, "limit": {"1"}}
				if after != "" {
					q.Set("after", after)
				}
				var p changesPage
				r := replica.get("/catalog/changes?" + q.Encode())
				r.wantStatus(t, http.StatusOK)
				r.json(t, &p)
				copy.apply(t, p, false)
				if pages == 0 { // the replica ahead switches
					h.importAfter(1)
					swapIn(t, ahead, h.db)
				} else if p.Meta.Next != nil {
					// A client that stopped here holds records of the
					// replica ahead, whichever replica gave this page.
					if want := start + "~" + ahead.live.Current().Generation(); p.Meta.NextSince != want {
						t.Fatalf("page %d, not the last: meta.nextSince %q, want %q", pages, p.Meta.NextSince, want)
					}
				}
				if p.Meta.Next != nil {
					after = *p.Meta.Next
				} else {
					nextSince = p.Meta.NextSince
				}
			}
			if pages < 4 {
				t.Fatalf("%d pages: the replicas did not take turns", pages)
			}
			newest := ahead.live.Current().Generation()
			if want := before + "~" + newest; nextSince != want {
				t.Fatalf("next since %q, want %q", nextSince, want)
			}
			r := behind.get("/catalog/changes?since=" + url.QueryEscape(nextSince))
			r.wantStatus(t, http.StatusServiceUnavailable)
			syncOnce(t, ahead, copy, nextSince, "", 3, false, nil)
			diffStates(t, "after the sync from the replica ahead", copy, h.states[newest])
		})
	}
}

// cloneRecords copies the sets or cards of a history, each record too.
func cloneRecords[R any](m map[string]*R) map[string]*R {
	out := make(map[string]*R, len(m))
	for k, v := range m {
		r := *v
		out[k] = &r
	}
	return out
}

// TestChangesAfterASyncThatStopped: a sync from A stops after its first
// page, which brought a set that the import right after A added (so its
// nextSince is A~B, B one step after A). The next import removes the set;
// the sync from A~B removes it from the copy, though the set was at
// neither end of the list since A.
func TestChangesAfterASyncThatStopped(t *testing.T) {
	for _, zone := range []string{"", "jp"} {
		t.Run("zone "+zone, func(t *testing.T) {
			h := newHistory(t, 5, 30)
			a := h.importAfter(2)
			s := h.addSet()
			s.Zone = "jp"
			h.addCard(s, h.id("card-"))
			b := h.importNow()
			f := newFixtureAt(t, h.db, nil)
			copy := cloneState(h.states[a].inZone(zone))
			next := syncOnce(t, f, copy, a, zone, 1, true, func(int) bool { return true })
			if _, ok := copy["set "+s.ID]; !ok || next != a+"~"+b {
				t.Fatalf("the first page did not bring %s, or its nextSince %q is not %s~%s", s.ID, next, a, b)
			}
			delete(h.sets, s.ID)
			for id, c := range h.cards {
				if c.SetCode == s.Code {
					delete(h.cards, id)
				}
			}
			c := h.importNow()
			swapIn(t, f, h.db)
			if got := syncOnce(t, f, copy, next, zone, 2, false, nil); got != c {
				t.Fatalf("nextSince %q, want %q", got, c)
			}
			diffStates(t, "a sync from the nextSince of one that stopped", copy, h.states[c].inZone(zone))
		})
	}
}

// TestChangesWhateverTheClientMeets follows the partner's loop over ten
// runs against two replicas, one of which lags, at random: imports
// swapped in between pages, runs that stop after any page, every zone,
// histories of 2 to 7 imports (a 410 is a new export). Once the replicas
// agree and nothing is imported, one sync from the since stored brings the
// copy to the catalogue exactly.
func TestChangesWhateverTheClientMeets(t *testing.T) {
	for seed := uint64(1); seed <= 32; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 77))
			h := newHistory(t, seed*1000, 2+rng.IntN(6))
			since := h.importAfter(2)
			behindPath := filepath.Join(t.TempDir(), "catalog.db")
			putFile(t, h.db, behindPath)
			ahead, behind := newFixtureAt(t, h.db, nil), newFixtureAt(t, behindPath, nil)
			catchUp := func() {
				putFile(t, h.db, behindPath)
				swapIn(t, behind, behindPath)
			}
			zone := []string{"", "", "jp", "intl", "chn"}[rng.IntN(5)]
			copy := cloneState(h.states[since].inZone(zone))
			var log []string
			// sync runs the loop once, each page from a replica that
			// pick chooses; it stops early when stop says so.
			sync := func(pick func() *fixture, stop func() bool) {
				after, stored := "", since
				defer func() { since = stored }()
				for page := 0; ; page++ {
					f := pick()
					status, p := changesAt(t, f, since, zone, after, 1+rng.IntN(3))
					log = append(log, fmt.Sprintf("page %d from %s: %d, to %s, nextSince %s, %d changes", page, map[bool]string{true: "ahead", false: "behind"}[f == ahead], status, p.Meta.To, p.Meta.NextSince, len(p.Data)))
					switch status {
					case http.StatusOK:
					case http.StatusGone: // a new export
						stored = ahead.live.Current().Generation()
						copy = cloneState(h.states[stored].inZone(zone))
						return
					case http.StatusServiceUnavailable:
						return
					default:
						t.Fatalf("status %d", status)
					}
					copy.apply(t, p, false)
					stored = p.Meta.NextSince
					if p.Meta.Next == nil || stop() {
						return
					}
					after = *p.Meta.Next
				}
			}
			for range 10 {
				sync(func() *fixture {
					if rng.IntN(4) == 0 {
						h.importAfter(1 + rng.IntN(2))
						swapIn(t, ahead, h.db)
					}
					if rng.IntN(3) == 0 {
						catchUp()
					}
					if rng.IntN(3) == 0 {
						return behind
					}
					return ahead
				}, func() bool { return rng.IntN(5) == 0 })
			}
			catchUp()
			sync(func() *fixture { return ahead }, func() bool { return false })
			diffStates(t, "after the runs, and one in quiet", copy, h.states[ahead.live.Current().Generation()].inZone(zone))
			if t.Failed() {
				t.Logf("zone %q:\n%s", zone, strings.Join(log, "\n"))
			}
		})
	}
}

// changesAt asks f for one page of changes; it returns the status, and the
// page when it is 200.
func changesAt(t *testing.T, f *fixture, since, zone, after string, limit int) (int, changesPage) {
	t.Helper()
	q := url.Values{"since": {since}, "limit": {fmt.Sprint(limit)}}
	if zone != "" {
		q.Set("zone", zone)
	}
	if after != "" {
		q.Set("after", after)
	}
	r := f.get("/catalog/changes?" + q.Encode())
	var p changesPage
	if r.status == http.StatusOK {
		if err := json.Unmarshal(r.body, &p); err != nil {
			t.Fatal(err)
		}
	}
	return r.status, p
}

// putFile puts src's bytes at dst, renamed into place as an import is.
func putFile(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst+".new", b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(dst+".new", dst); err != nil {
		t.Fatal(err)
	}
}
