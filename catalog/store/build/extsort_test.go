package build

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestSorter(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	for _, c := range []struct{ limit, fanIn int }{{4 << 10, mergeFanIn}, {4 << 10, 2}, {4 << 10, 3}, {64 << 10, mergeFanIn}, {16 << 20, mergeFanIn}} {
		limit := c.limit
		t.Run(fmt.Sprint(limit, "/", c.fanIn), func(t *testing.T) {
			s := newSorter(t.TempDir(), limit)
			s.runs.fanIn = c.fanIn
			defer s.close()
			most, spills := 0, 0 // runs held at once, buffers spilled
			var want []string
			for i := range 5000 {
				// Keys that share their first eight bytes, and keys shorter
				// than eight bytes.
				key := fmt.Sprintf("%0*d", 1+rng.IntN(12), rng.IntN(1_000_000))
				key += fmt.Sprintf("#%d", i)
				value := fmt.Sprintf("v%d", rng.IntN(1000))
				if rng.IntN(10) == 0 {
					value = ""
				}
				want = append(want, key+"="+value)
				before := len(s.index)
				if err := s.add([]byte(key), []byte(value)); err != nil {
					t.Fatal(err)
				}
				if len(s.index) <= before {
					spills++
					// Let the spill in flight finish before counting runs.
					if _, err := s.waitSpill(); err != nil {
						t.Fatal(err)
					}
				}
				most = max(most, len(s.runs.files))
				checkLevels(t, &s.runs)
			}
			slices.Sort(want)
			var got []string
			err := s.each(func(key, value []byte) error {
				got = append(got, string(key)+"="+string(value))
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("%d entries out of order or lost; %d runs", len(got), len(s.runs.files))
			}
			if limit < 64<<10 && spills < 2*c.fanIn {
				t.Errorf("limit %d: %d spills, want enough to merge runs", limit, spills)
			}
			// Runs grow by fanIn-1 a level, and a level holds fanIn times
			// the buffers of the one below.
			levels := 1
			for n := c.fanIn; n <= spills; n *= c.fanIn {
				levels++
			}
			if bound := (c.fanIn - 1) * levels; most > bound {
				t.Errorf("%d spills: up to %d runs held at once, want at most %d", spills, most, bound)
			}
		})
	}
}

// A run the spill's goroutine cannot write fails the sort, at the next
// spill or at its end, and what was added is not answered as if whole.
func TestSorterReportsASpillThatFails(t *testing.T) {
	for _, entries := range []int{12, 400} { // one spill, then many
		dir := filepath.Join(t.TempDir(), "gone")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		s := newSorter(dir, 1<<10)
		if err := os.Remove(dir); err != nil {
			t.Fatal(err)
		}
		var err error
		for i := 0; i < entries && err == nil; i++ {
			err = s.add(fmt.Appendf(nil, "key %04d", i), make([]byte, 20))
		}
		if err == nil {
			err = s.each(func(key, value []byte) error { return nil })
		}
		if !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%d entries into a directory that is gone: %v, want the run's creation to fail", entries, err)
		}
		s.close()
	}
}

// checkLevels checks the shape sortedRuns keeps: levels that never rise from
// the oldest run to the newest, and fewer than fanIn runs of any level.
func checkLevels(t *testing.T, r *sortedRuns) {
	t.Helper()
	if len(r.levels) != len(r.files) {
		t.Fatalf("%d levels for %d runs", len(r.levels), len(r.files))
	}
	count := map[int]int{}
	for i, l := range r.levels {
		count[l]++
		if i > 0 && l > r.levels[i-1] {
			t.Fatalf("levels %v rise", r.levels)
		}
		if count[l] >= r.fanIn {
			t.Fatalf("levels %v: %d runs of level %d, want fewer than %d", r.levels, count[l], l, r.fanIn)
		}
	}
}
