package store

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSeekBelow walks a term's shape of lists (an intersection of one list
// and a union of an intersection and a list) through a zone, by leapfrog
// and a window at a time, and checks each ordinal found against the sets
// themselves. Past the zone the lists share no ordinal until a last one
// they all hold, far on: the walk must stop where the zone does, not walk
// on to that one.
func TestSeekBelow(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const last = 1 << 20
	for round := range 500 {
		hi := 1 + uint32(rng.IntN(300))
		lo := uint32(rng.IntN(int(hi)))
		sets := make([][]uint32, 4)
		lists := make([]storedList, len(sets))
		for i := range sets {
			sets[i] = randomOrdinals(rng, rng.IntN(min(int(hi), 80)), hi)
			for k := range 20 {
				sets[i] = append(sets[i], hi+uint32(i+4*k))
			}
			sets[i] = append(sets[i], last)
			lists[i] = newList(nil, cardsList(nil, sets[i]))
		}
		o := intersection{&lists[0], union{intersection{&lists[1], &lists[2]}, &lists[3]}}
		got := walkBelow(o, lo, hi, 0)
		var want []uint32
		for _, v := range sets[0] {
			if v >= lo && v < hi && (slices.Contains(sets[1], v) && slices.Contains(sets[2], v) || slices.Contains(sets[3], v)) {
				want = append(want, v)
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("round %d, zone [%d, %d): got %v, want %v", round, lo, hi, got, want)
		}
		for i := range lists {
			if l := &lists[i]; l.started && l.cur == last {
				t.Fatalf("round %d, zone [%d, %d): list %d walked on to %d", round, lo, hi, i, l.cur)
			}
		}
		// The same lists a round a call, as the cards' way of autocomplete
		// walks them, going on from where the last call stood.
		for i, s := range sets {
			lists[i] = newList(nil, cardsList(nil, s))
		}
		if got := walkBelow(o, lo, hi, 1); !slices.Equal(got, want) {
			t.Fatalf("round %d, zone [%d, %d), a round a call: got %v, want %v", round, lo, hi, got, want)
		}
		// The same lists a window at a time, as long lists are walked.
		for i, s := range sets {
			lists[i] = newList(nil, cardsList(nil, s))
		}
		w := &windowed{in: o}
		if got := walkBelow(w, lo, hi, 0); !slices.Equal(got, want) {
			t.Fatalf("round %d, zone [%d, %d), a window at a time: got %v, want %v", round, lo, hi, got, want)
		}
		if w.lo >= last/2 {
			t.Fatalf("round %d, zone [%d, %d), a window at a time: walked on to the window at %d", round, lo, hi, w.lo)
		}
	}
}

// walkBelow returns every ordinal of o in [lo, hi), found by seekBelow
// in calls of rounds rounds.
func walkBelow(o ordinals, lo, hi uint32, rounds int) []uint32 {
	var got []uint32
	for next := lo; ; {
		ord, met, ok := seekBelow(o, next, hi, rounds)
		switch {
		case !ok:
			return got
		case !met:
			next = ord
		default:
			got = append(got, ord)
			next = ord + 1
		}
	}
}

// randomOrdinals returns n distinct ordinals below limit, in order.
func randomOrdinals(rng *rand.Rand, n int, limit uint32) []uint32 {
	seen := map[uint32]bool{}
	for len(seen) < n {
		seen[rng.Uint32N(limit)] = true
	}
	out := make([]uint32, 0, n)
	for v := range seen {
		out = append(out, v)
	}
	slices.Sort(out)
	return out
}
