package server

import (
	"context"
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
	"time"

	"github.com/catalogd/catalogd/catalog"
	"github.com/catalogd/catalogd/catalog/store"
	"github.com/catalogd/catalogd/importer"
)

// history is a catalogue that a test changes at random and imports again
// and again into one file, remembering every generation's records.
type history struct {
	t      *testing.T
	rng    *rand.Rand
	dir    string
	db     string
	keep   int
	sets   map[string]*catalog.Set
	cards  map[string]*catalog.Card
	nextID int
	gens   []string                // every generation imported, oldest first
	states map[string]catalogState // by generation
}

// catalogState is a whole catalogue as a copy holds it: the JSON of every
// set and card, by kind and id.
type catalogState map[string]string

func newHistory(t *testing.T, seed uint64, keep int) *history {
	dir := t.TempDir()
	return &history{
		t: t, rng: rand.New(rand.NewPCG(seed, 1)), dir: dir, db: filepath.Join(dir, "catalog.db"), keep: keep,
		sets: map[string]*catalog.Set{}, cards: map[string]*catalog.Card{}, states: map[string]catalogState{},
	}
}

func (h *history) id(prefix string) string {
	h.nextID++
	return fmt.Sprintf("%s%d", prefix, h.nextID)
}

var testZones = catalog.Zones()

func (h *history) addSet() *catalog.Set {
	code := h.id("S")
	s := &catalog.Set{ID: "set/" + code, Code: code, Name: "Set " + code, Zone: testZones[h.rng.IntN(3)], CardCount: int64(h.rng.IntN(50))}
	if h.rng.IntN(2) == 0 {
		s.ReleasedOn = catalog.Some(fmt.Sprintf("20%02d-%02d-%02d", h.rng.IntN(25), 1+h.rng.IntN(12), 1+h.rng.IntN(28)))
	}
	h.sets[s.ID] = s
	return s
}

func (h *history) addCard(s *catalog.Set, id string) {
	c := &catalog.Card{ID: id, Name: fmt.Sprintf("Card %d", h.rng.IntN(1000)), Language: "en", Variant: catalog.DefaultVariant}
	h.place(c, s)
	c.Number = fmt.Sprint(1 + h.rng.IntN(300))
	h.cards[id] = c
}

// place puts c in set s.
func (h *history) place(c *catalog.Card, s *catalog.Set) {
	c.SetName, c.SetCode, c.Zone = s.Name, s.Code, s.Zone
}

func (h *history) randomSet() *catalog.Set {
	ids := slices.Sorted(maps.Keys(h.sets))
	return h.sets[ids[h.rng.IntN(len(ids))]]
}

func (h *history) randomCards(n int) []*catalog.Card {
	ids := slices.Sorted(maps.Keys(h.cards))
	h.rng.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
	var out []*catalog.Card
	for _, id := range ids[:min(n, len(ids))] {
		out = append(out, h.cards[id])
	}
	return out
}

// change makes random adds, edits and removals of sets and cards.
func (h *history) change() {
	r := h.rng
	for range 1 + r.IntN(3) {
		s := h.addSet()
		for range r.IntN(6) {
			h.addCard(s, h.id("card-"))
		}
	}
	if len(h.sets) > 3 && r.IntN(2) == 0 { // remove a set and its cards
		s := h.randomSet()
		delete(h.sets, s.ID)
		for id, c := range h.cards {
			if c.Zone == s.Zone && c.SetCode == s.Code {
				delete(h.cards, id)
			}
		}
	}
	if r.IntN(2) == 0 { // rename a set: its cards change too
		s := h.randomSet()
		s.Name += "'"
		for _, c := range h.cards {
			if c.Zone == s.Zone && c.SetCode == s.Code {
				c.SetName = s.Name
			}
		}
	}
	for _, c := range h.randomCards(1 + r.IntN(4)) { // edit
		switch r.IntN(4) {
		case 0:
			c.Name += "!"
		case 1:
			c.Number = fmt.Sprint(1 + r.IntN(300)) // moves it within its set
		case 2:
			c.Rarity = catalog.Some("Rare")
		case 3:
			h.place(c, h.randomSet()) // perhaps to another zone
		}
	}
	for _, c := range h.randomCards(r.IntN(3)) { // remove
		delete(h.cards, c.ID)
	}
	if r.IntN(3) == 0 && h.nextID > 5 { // an id used before, perhaps removed
		h.addCard(h.randomSet(), fmt.Sprintf("card-%d", 1+r.IntN(h.nextID)))
	}
}

// importNow imports the catalogue as it is and remembers the generation.
func (h *history) importNow() string {
	h.t.Helper()
	snap := struct {
		Sets  []*catalog.Set  `json:"sets"`
		Cards []*catalog.Card `json:"cards"`
	}{append([]*catalog.Set{}, slices.Collect(maps.Values(h.sets))...), append([]*catalog.Card{}, slices.Collect(maps.Values(h.cards))...)}
	b, err := json.Marshal(snap)
	if err != nil {
		h.t.Fatal(err)
	}
	in := filepath.Join(h.dir, "snapshot.json")
	if err := os.WriteFile(in, b, 0o600); err != nil {
		h.t.Fatal(err)
	}
	res, err := importer.Import(context.Background(), importer.Config{DB: h.db, Inputs: []string{in}, History: h.keep})
	if err != nil {
		h.t.Fatalf("import: %v", err)
	}
	gen := res.Info.Generation
	h.gens = append(h.gens, gen)
	db, err := store.Open(h.db)
	if err != nil {
		h.t.Fatal(err)
	}
	defer db.Close()
	h.states[gen] = readState(h.t, db)
	return gen
}

// importAfter makes n rounds of random changes, then imports.
func (h *history) importAfter(n int) string {
	h.t.Helper()
	for range n {
		h.change()
	}
	return h.importNow()
}

// swapIn opens the catalogue at path and has f serve it, as a reload does.
func swapIn(t *testing.T, f *fixture, path string) *store.DB {
	t.Helper()
	db, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	f.live.Swap(db)
	return db
}

// readState reads a catalogue's records through its export.
func readState(t testing.TB, db *store.DB) catalogState {
	t.Helper()
	e, err := db.Export("")
	if err != nil {
		t.Fatal(err)
	}
	r, err := e.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var snap struct{ Sets, Cards []json.RawMessage }
	if err := json.NewDecoder(r).Decode(&snap); err != nil {
		t.Fatal(err)
	}
	st := catalogState{}
	for kind, recs := range map[string][]json.RawMessage{"set": snap.Sets, "card": snap.Cards} {
		for _, rec := range recs {
			var id struct{ ID string }
			json.Unmarshal(rec, &id)
			st[kind+" "+id.ID] = string(rec)
		}
	}
	return st
}

// inZone is the part of st that a copy of one zone holds.
func (st catalogState) inZone(zone string) catalogState {
	out := catalogState{}
	for k, v := range st {
		if zone == "" || strings.Contains(v, `"zone":"`+zone+`"`) {
			out[k] = v
		}
	}
	return out
}

// changesPage is one answer of listChanges.
type changesPage struct {
	Data []struct {
		Kind, ID, Op string
		Record       json.RawMessage
	}
	Meta struct {
		From, To, NextSince string
		Next                *string
	}
}

// syncOnce follows the partner's loop (docs/CONTRACT.md, Keeping a copy)
// once: every page from since, each applied to the copy as it comes;
// between pages, between(n) may swap in a new catalogue, or stop the loop
// there. It returns the next since, the meta.nextSince of the last page
// applied, after checking it against the pages' to: on the last page, the
// first page's to, alone or joined by "~" to another page's; on another,
// the first generation of since joined to a page's to. Which page's is
// for the caller to check: the newest, but for a generation put back.
// Unless a catalogue is swapped in while it pages, or it follows such a
// sync, every remove names a record the copy holds; otherwise a record
// can be sent again, removed again included, which the copy ignores.
func syncOnce(t *testing.T, f *fixture, copy catalogState, since, zone string, limit int, strictRemoves bool, between func(page int) (stop bool)) string {
	t.Helper()
	var after, first string
	var tos []string
	for page := 0; ; page++ {
		q := url.Values{"since": {since}, "limit": {fmt.Sprint(limit)}}
		if zone != "" {
			q.Set("zone", zone)
		}
		if after != "" {
			q.Set("after", after)
		}
		r := f.get("/catalog/changes?" + q.Encode())
		r.wantStatus(t, http.StatusOK)
		var p changesPage
		r.json(t, &p)
		if len(p.Data) > limit {
			t.Fatalf("%d changes on a page of %d", len(p.Data), limit)
		}
		if page == 0 {
			first = p.Meta.To
		}
		copy.apply(t, p, strictRemoves)
		tos = append(tos, p.Meta.To)
		wantFirst, _, _ := strings.Cut(since, "~")
		if p.Meta.Next == nil {
			wantFirst = first
		}
		gotFirst, held, two := strings.Cut(p.Meta.NextSince, "~")
		crossed := slices.ContainsFunc(tos, func(to string) bool { return to != first })
		if gotFirst != wantFirst || two && !slices.Contains(tos, held) || two != (p.Meta.Next != nil || crossed) {
			t.Fatalf("page %d (last: %t): meta.nextSince is %q; want %q, joined to one of the pages' to %q but on a last page when they are all the first's", page, p.Meta.Next == nil, p.Meta.NextSince, wantFirst, tos)
		}
		if p.Meta.Next == nil || between != nil && between(page) {
			return p.Meta.NextSince
		}
		after = *p.Meta.Next
	}
}

// apply applies the changes of a page to the copy st, in order.
func (st catalogState) apply(t *testing.T, p changesPage, strictRemoves bool) {
	t.Helper()
	for _, c := range p.Data {
		switch c.Op {
		case "upsert":
			st[c.Kind+" "+c.ID] = string(c.Record)
		case "remove":
			if _, ok := st[c.Kind+" "+c.ID]; !ok && strictRemoves {
				t.Errorf("remove of %s %s, which the copy does not hold", c.Kind, c.ID)
			}
			delete(st, c.Kind+" "+c.ID)
		default:
			t.Fatalf("change of op %q", c.Op)
		}
	}
}

func diffStates(t *testing.T, what string, got, want catalogState) {
	t.Helper()
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %s is %.120q, want %.120q", what, k, got[k], v)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s: %s is in the copy, not in the catalogue", what, k)
		}
	}
}

func cloneState(st catalogState) catalogState { return maps.Clone(st) }

// TestChangesBringEveryKeptGenerationUpToDate is the property of the list of
// changes: over random histories, the changes since any generation the file
// keeps, applied to a copy of it, give the active catalogue exactly, in
// every zone, whatever the page size; an older generation is 410.
func TestChangesBringEveryKeptGenerationUpToDate(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			const keep = 4
			h := newHistory(t, seed, keep)
			for range 7 {
				h.change()
				h.importNow()
			}
			f := newFixtureAt(t, h.db, nil)
			active := h.states[h.gens[len(h.gens)-1]]
			kept := f.live.Current().SyncGenerations()
			if len(kept) != keep+1 || !slices.Equal(kept, h.gens[len(h.gens)-keep-1:]) {
				t.Fatalf("the file keeps %v, want the last %d generations of %v", kept, keep+1, h.gens)
			}
			for i, gen := range h.gens {
				if !slices.Contains(kept, gen) {
					r := f.get("/catalog/changes?since=" + gen)
					r.wantStatus(t, http.StatusGone)
					if !strings.Contains(string(r.body), "/catalog/export") {
						t.Errorf("410 does not say to export: %s", r.body)
					}
					continue
				}
				for _, zone := range []string{"", "intl", "jp", "chn"} {
					limit := 1 + (i+len(zone))%4
					if zone == "" && i%2 == 0 {
						limit = 1000
					}
					copy := cloneState(h.states[gen].inZone(zone))
					syncOnce(t, f, copy, gen, zone, limit, true, nil)
					diffStates(t, fmt.Sprintf("since %s (#%d) zone %q limit %d", gen, i, zone, limit), copy, active.inZone(zone))
				}
			}
		})
	}
}

// TestChangesAcrossAnImport swaps new catalogues in while a client pages,
// which then follows the partner's loop: it finishes its pages, syncs again
// from the meta.nextSince of its last page (its first page's to and the
// active generation), and holds the active catalogue. A client that syncs
// again from its first page's to, as the contract said before nextSince,
// holds it too.
func TestChangesAcrossAnImport(t *testing.T) {
	for seed := uint64(10); seed <= 12; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			h := newHistory(t, seed, 30)
			for range 3 {
				h.change()
				h.importNow()
			}
			f := newFixtureAt(t, h.db, nil)
			for _, zone := range []string{"", "jp"} {
				for _, stopAfter := range []int{-1, 2} {
					since := h.gens[0]
					copy := cloneState(h.states[since].inZone(zone))
					next := syncOnce(t, f, copy, since, zone, 2, false, func(page int) bool {
						if page <= 1 {
							// Many changes, so that some land before the
							// cursor and some after it.
							h.importAfter(3)
							swapIn(t, f, h.db)
						}
						return page == stopAfter
					})
					what := fmt.Sprintf("zone %q, a sync across two imports that stops after page %d", zone, stopAfter)
					firstTo, held, crossed := strings.Cut(next, "~")
					if !crossed {
						t.Fatalf("%s: no import was swapped in while paging: next since %q", what, next)
					}
					if active := f.live.Current().Generation(); held != active {
						t.Fatalf("%s: next since %q does not name the catalogue swapped in, %s", what, next, active)
					}
					byFirstTo := cloneState(copy)
					syncOnce(t, f, copy, next, zone, 3, false, nil)
					active := h.states[f.live.Current().Generation()].inZone(zone)
					diffStates(t, what+", then one from its nextSince", copy, active)
					if stopAfter < 0 {
						syncOnce(t, f, byFirstTo, firstTo, zone, 3, false, nil)
						diffStates(t, what+", then one from its first page's to", byFirstTo, active)
					}
				}
			}
		})
	}
}

func TestChangesOfTheSameSnapshotAreEmpty(t *testing.T) {
	h := newHistory(t, 99, 30)
	h.change()
	first := h.importNow()
	second := h.importNow()
	f := newFixtureAt(t, h.db, nil)
	r := f.get("/catalog/changes?since=" + first)
	r.wantStatus(t, http.StatusOK)
	want := `{"data":[],"meta":{"from":"` + first + `","to":"` + second + `","next":null,"nextSince":"` + second + `"}}`
	if string(r.body) != want {
		t.Errorf("changes between two imports of one snapshot: %s, want %s", r.body, want)
	}
	if h := f.live.Current().Info().History; len(h) != 1 || h[0].Changes != 0 {
		t.Errorf("history %+v, want one step of no changes", h)
	}
	r = f.get("/catalog/changes?since=" + second)
	r.wantStatus(t, http.StatusOK)
}

func TestChangesParameters(t *testing.T) {
	h := newHistory(t, 7, 30)
	h.change()
	first := h.importNow()
	h.change()
	second := h.importNow()
	f := newFixtureAt(t, h.db, nil)
	for target, param := range map[string]string{
		"/catalog/changes":                                              "since",
		"/catalog/changes?since=":                                       "since",
		"/catalog/changes?since=%FF":                                    "since",
		"/catalog/changes?since=" + first + "~":                         "since",
		"/catalog/changes?since=~" + second:                             "since",
		"/catalog/changes?since=" + first + "~" + second + "~" + second: "since",
		"/catalog/changes?since=" + first + "&limit=0":                  "limit",
		"/catalog/changes?since=" + first + "&limit=1001":               "limit",
		"/catalog/changes?since=" + first + "&after=%21%21":             "after",
		"/catalog/changes?since=" + first + "&after=":                   "after",
		"/catalog/changes?since=" + first + "&after=AAAA":               "after",
		"/catalog/changes?since=" + first + "&zone=mars":                "zone",
	} {
		r := f.get(target)
		r.wantStatus(t, http.StatusBadRequest)
		if !strings.Contains(string(r.body), `"parameter":"`+param+`"`) {
			t.Errorf("%s: the 400 does not name %s: %s", target, param, r.body)
		}
	}
	f.get("/catalog/changes?since=19990101T000000Z-00000000").wantStatus(t, http.StatusGone)
	// Two generations: the second must follow the first in the history.
	f.get("/catalog/changes?since="+first+"~"+second).wantStatus(t, http.StatusOK)
	for _, since := range []string{second + "~" + first, first + "~" + first, first + "~19990101T000000Z-00000000", "19990101T000000Z-00000000~" + second} {
		f.get("/catalog/changes?since="+since).wantStatus(t, http.StatusGone)
	}
	// A generation newer than the one served is one a replica beside this
	// one serves already: this one is about to, so retry, not download.
	newer := time.Now().Add(time.Minute).UTC().Format("20060102T150405Z") + "-00000000"
	r503 := f.get("/catalog/changes?since=" + newer)
	r503.wantStatus(t, http.StatusServiceUnavailable)
	if r503.header.Get("Retry-After") != "2" || !strings.Contains(string(r503.body), "retry") || strings.Contains(string(r503.body), "export") {
		t.Errorf("since a newer generation: Retry-After %q, %s; want 2 and a problem saying to retry", r503.header.Get("Retry-After"), r503.body)
	}
	// One no replica will switch to, made up or from far ahead, is gone:
	// retrying would not end.
	for _, since := range []string{"29991231T000000Z-00000000", "29991231T000000Z"} {
		f.get("/catalog/changes?since="+since).wantStatus(t, http.StatusGone)
	}
	// Every bad parameter is named in the one 400, the cursor among them.
	r := f.get("/catalog/changes?since=" + first + "&after=AAAA&limit=0")
	r.wantStatus(t, http.StatusBadRequest)
	if !strings.Contains(string(r.body), `"parameter":"after"`) || !strings.Contains(string(r.body), `"parameter":"limit"`) {
		t.Errorf("a bad cursor and a bad limit: %s", r.body)
	}

	// A cursor is of one list: given with another since or zone it would
	// skip that list's changes before its record.
	var p changesPage
	f.get("/catalog/changes?since="+first+"&zone=jp&limit=1").json(t, &p)
	if p.Meta.Next == nil {
		t.Fatal("no second page of one change")
	}
	after := url.QueryEscape(*p.Meta.Next)
	f.get("/catalog/changes?since="+first+"&zone=jp&limit=1&after="+after).wantStatus(t, http.StatusOK)
	for _, other := range []string{"since=" + second + "&zone=jp", "since=" + first, "since=" + first + "&zone=intl"} {
		r := f.get("/catalog/changes?" + other + "&limit=1&after=" + after)
		r.wantStatus(t, http.StatusBadRequest)
		if !strings.Contains(string(r.body), `"parameter":"after"`) || !strings.Contains(string(r.body), "another list") {
			t.Errorf("%s with a cursor of since=%s&zone=jp: %s; want a 400 on after that says it is another list's", other, first, r.body)
		}
	}

	r = f.get("/catalog/changes?since=" + first + "&limit=1")
	r.wantStatus(t, http.StatusOK)
	f.do(http.MethodGet, "/catalog/changes?since="+first+"&limit=1", "If-None-Match", r.header.Get("ETag")).wantStatus(t, http.StatusNotModified)
}
