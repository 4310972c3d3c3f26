package build

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/catalogd/catalogd/catalog"
)

func TestSortPending(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	for _, n := range []int{0, 1, 2, 3, 10, 100, 1000} {
		for _, shape := range []string{"sorted", "reversed", "random", "runs"} {
			keys := make([]string, n)
			for i := range keys {
				keys[i] = fmt.Sprintf("%08d", i*7)
			}
			switch shape {
			case "reversed":
				slices.Reverse(keys)
			case "random":
				rng.Shuffle(n, func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
			case "runs":
				// Sorted stretches of a shuffled slice: runs that overlap.
				rng.Shuffle(n, func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
				for i := 0; i < n; {
					j := min(n, i+1+rng.IntN(20))
					slices.Sort(keys[i:j])
					i = j
				}
			}
			want := slices.Sorted(slices.Values(keys))
			w := &Writer{}
			for _, k := range keys {
				w.pending = append(w.pending, pendingCard{key: []byte("x" + k), json: []byte(k), idLen: len(k)})
			}
			w.sortPending((*pendingCard).id)
			got := make([]string, len(w.pending))
			for i, p := range w.pending {
				got[i] = string(p.json)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("%d %s: %v, want %v", n, shape, got, want)
			}
		}
	}
}

// TestHasCardOnAHashCollision: two ids with one hash are still told apart.
func TestHasCardOnAHashCollision(t *testing.T) {
	w, err := Create(filepath.Join(t.TempDir(), "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	for _, id := range []string{"a", "b"} {
		if err := w.AddCard(card(id, catalog.ZoneIntl, "X", "X", "1")); err != nil {
			t.Fatal(err)
		}
	}
	// Make "c" hash like "a", and the pending "b" too.
	h := maphash.String(w.seed, "c")
	w.pendingIDs[h] = 0
	if w.hasCard(h, "c") {
		t.Error(`hasCard("c") with the hash of "a": true`)
	}
	if !w.hasCard(h, "b") {
		t.Error(`hasCard("b") with the hash of "a": false`)
	}
}

// TestCreateWithTakesItsLimits checks that the limits a test gives reach
// the parts they bound: the tests that write with small limits would
// still pass, exercising nothing, if they did not.
func TestCreateWithTakesItsLimits(t *testing.T) {
	small := Limits{CommitAt: 1, SetSort: 2, Postings: 3, RunSort: 4, MergeFanIn: 5, SetListPiece: 6, PlaceSort: 7}
	w, err := CreateWith(filepath.Join(t.TempDir(), "c.db"), small)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	if w.limits != small {
		t.Fatalf("limits %+v, want %+v", w.limits, small)
	}
	for name, s := range map[string]*sorter{"runCounts": w.runCounts, "setOrder": w.setOrder, "cardKeys": w.cardKeys} {
		if s.limit != small.SetSort {
			t.Errorf("%s sorts %d bytes in memory, want %d", name, s.limit, small.SetSort)
		}
	}
	if w.numbers.runs.fanIn != small.MergeFanIn {
		t.Errorf("numbers merged %d runs at once, want %d", w.numbers.runs.fanIn, small.MergeFanIn)
	}
	postings := w.newPostings()
	defer postings.close()
	if postings.limit != small.Postings || postings.runs.fanIn != small.MergeFanIn {
		t.Errorf("posting lists held to %d bytes, %d runs merged at once; want %d and %d", postings.limit, postings.runs.fanIn, small.Postings, small.MergeFanIn)
	}
	parts := w.startPostings(nil)
	defer parts.close()
	for _, p := range parts.parts {
		if p.limit != small.Postings/2 || p.runs.fanIn != small.MergeFanIn {
			t.Errorf("a part of the index's lists held to %d bytes, %d runs merged at once; want %d and %d", p.limit, p.runs.fanIn, small.Postings/2, small.MergeFanIn)
		}
	}
	runs := w.newRunSorter()
	defer runs.close()
	if runs.limit != small.RunSort || runs.runs.fanIn != small.MergeFanIn {
		t.Errorf("autocomplete runs sorted %d bytes in memory, %d runs merged at once; want %d and %d", runs.limit, runs.runs.fanIn, small.RunSort, small.MergeFanIn)
	}
	// A transaction of a byte is full; a piece of a list of sets of more
	// than 6 bytes is written.
	if w.txBytes = 1; !w.txFull() {
		t.Error("a transaction of 1 byte is not full, with commitAt 1")
	}
	var list setListWriter
	if err := list.add(w, []byte(`{"id":"s"}`)); err != nil || list.n != 1 {
		t.Errorf("a set of 10 bytes wrote %d pieces (%v), want 1", list.n, err)
	}
}

func TestAbortRemovesTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.db")
	w, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w.AddSet(catalog.Set{ID: "a", Code: "a", Name: "a", Zone: catalog.ZoneIntl})
	w.Abort()
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("after Abort: %v", err)
	}
}

// TestCreateLeavesAnExistingPath: Create refuses a path that exists, even
// as a link to nothing or a file bbolt could not open, and leaves it as it
// was.
func TestCreateLeavesAnExistingPath(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file.db")
	if err := os.WriteFile(file, []byte("not a catalogue"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.db")
	if err := os.Symlink(filepath.Join(dir, "nowhere"), link); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{file, link} {
		if _, err := Create(path); err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "exists") {
			t.Errorf("Create(%s): error %v, want one saying it exists", path, err)
		}
	}
	if b, err := os.ReadFile(file); err != nil || string(b) != "not a catalogue" {
		t.Errorf("%s after Create: %q, %v", file, b, err)
	}
	if target, err := os.Readlink(link); err != nil || target != filepath.Join(dir, "nowhere") {
		t.Errorf("%s after Create: %q, %v", link, target, err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "nowhere")); !os.IsNotExist(err) {
		t.Errorf("Create followed the link: %v", err)
	}
}

// TestEntrySortReportsItsError: the sort of the index's entries, on a
// goroutine of its own, fails (here it cannot spill, its directory
// gone); a later AddCard and Finish both say so, and Abort ends it.
func TestEntrySortReportsItsError(t *testing.T) {
	dir := t.TempDir()
	w, err := Create(filepath.Join(dir, "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	w.numbers.close()
	w.numbers = newSorter(filepath.Join(dir, "gone"), 1)
	if err := w.AddSet(catalog.Set{ID: "intl-X", Code: "X", Name: "X", Zone: catalog.ZoneIntl}); err != nil {
		t.Fatal(err)
	}
	var addErr error
	for i := 0; i < 100_000 && addErr == nil; i++ {
		addErr = w.AddCard(card(fmt.Sprint(i), catalog.ZoneIntl, "X", "X", fmt.Sprint(i)))
	}
	if addErr == nil || !strings.Contains(addErr.Error(), "search index") {
		t.Fatalf("AddCard after the sort failed: %v, want its error", addErr)
	}
	if _, err := w.Finish(context.Background(), Info{Generation: "g"}); err == nil || !strings.Contains(err.Error(), "search index") {
		t.Errorf("Finish after the sort failed: %v, want its error", err)
	}
	w.Abort()
}

// doneAfter is a context that is done from the n-th time its Err is asked.
type doneAfter struct {
	context.Context
	n, asked int
}

func (c *doneAfter) Err() error {
	if c.asked++; c.asked >= c.n {
		return context.Canceled
	}
	return nil
}

// TestFinishEndsWhenItsContextIsDone: an interrupt while Finish writes the
// index ends it at its next commit, with the context's error and the file
// removed, rather than once the whole index is written.
func TestFinishEndsWhenItsContextIsDone(t *testing.T) {
	for _, n := range []int{1, 2, 5} {
		path := filepath.Join(t.TempDir(), "c.db")
		w := createCommitting(t, path, 4<<10)
		if err := w.AddSet(catalog.Set{ID: "intl-X", Code: "X", Name: "X", Zone: catalog.ZoneIntl}); err != nil {
			t.Fatal(err)
		}
		for i := range 2000 {
			if err := w.AddCard(card(fmt.Sprint(i), catalog.ZoneIntl, "X", "X", fmt.Sprint(i))); err != nil {
				t.Fatal(err)
			}
		}
		ctx := &doneAfter{Context: context.Background(), n: n}
		if _, err := w.Finish(ctx, Info{Generation: "g"}); !errors.Is(err, context.Canceled) {
			t.Errorf("done at its %d-th question: Finish gave %v, want context.Canceled", n, err)
		}
		if ctx.asked != n {
			t.Errorf("done at its %d-th question: asked %d times, want Finish to end at once", n, ctx.asked)
		}
		if _, err := os.Stat(path); !os.IsNotExist(err) {
			t.Errorf("done at its %d-th question: the file stays (%v)", n, err)
		}
	}
}
