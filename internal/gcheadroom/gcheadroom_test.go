package gcheadroom

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

// goal is the runtime's heap goal at GOGC p: live + (live + roots) × p/100,
// and at least the floor, 4 MiB × p/100.
func goal(p int, live, roots uint64) uint64 {
	return max(live+(live+roots)*uint64(p)/100, heapMinimumAt100*uint64(p)/100)
}

func TestPercentIsTheSmallestThatLeavesTheHeadroom(t *testing.T) {
	const mib = 1 << 20
	cases := []struct {
		name                  string
		headroom, live, roots uint64
	}{
		{"small heap, the floor decides", 16 * mib, 2 * mib, 100 << 10},
		{"heap above the floor", 16 * mib, 8 * mib, 200 << 10},
		{"large heap, Go's default is more", 16 * mib, 40 * mib, 1 * mib},
		{"no heap yet", 16 * mib, 0, 0},
		{"headroom under Go's default", 1 * mib, 512 << 10, 0},
		{"roots larger than the heap", 16 * mib, 1 * mib, 6 * mib},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := percent(c.headroom, c.live, c.roots)
			if p < 100 {
				t.Fatalf("percent = %d, below Go's default", p)
			}
			want := c.live + c.headroom
			if g := goal(p, c.live, c.roots); g < want {
				t.Errorf("percent = %d: goal %d, want at least %d", p, g, want)
			}
			if p > 100 {
				if g := goal(p-1, c.live, c.roots); g >= want {
					t.Errorf("percent = %d, but %d already gives goal %d ≥ %d", p, p-1, g, want)
				}
			}
		})
	}
}

func TestPercentIsBounded(t *testing.T) {
	if p := percent(1<<40, 0, 0); p != maxPercent {
		t.Errorf("percent(1 TiB, 0, 0) = %d, want %d", p, maxPercent)
	}
}

func readGC() (goal, live, percent uint64) {
	s := []metrics.Sample{{Name: "/gc/heap/goal:bytes"}, {Name: "/gc/heap/live:bytes"}, {Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return s[0].Value.Uint64(), s[1].Value.Uint64(), s[2].Value.Uint64()
}

// collectUntil runs collections until ok holds of the runtime's figures:
// Keep tunes in a cleanup, which runs on its own goroutine after a cycle.
func collectUntil(t *testing.T, what string, ok func(goal, live, percent uint64) bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		runtime.GC()
		time.Sleep(time.Millisecond)
		g, l, p := readGC()
		if ok(g, l, p) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: after 10 s of collections, goal %d, live %d, GOGC %d", what, g, l, p)
		}
	}
}

// TestKeepHoldsTheHeadroomAsTheHeapGrows runs the real runtime: the goal
// must sit headroom above the live heap, first with the small heap of a
// test binary and then with 48 MiB more live, and GOGC must come back when
// Keep stops.
func TestKeepHoldsTheHeadroomAsTheHeapGrows(t *testing.T) {
	const headroom = 64 << 20
	before := debug.SetGCPercent(100)
	defer debug.SetGCPercent(before)

	stop := Keep(headroom)
	defer stop()
	near := func(g, l uint64) bool {
		// The goal is whole percents of the live heap and roots: a few
		// KiB over the headroom, never under it.
		return g >= l+headroom && g <= l+headroom+headroom/50
	}
	var small uint64
	collectUntil(t, "small heap", func(g, l, p uint64) bool {
		small = p
		return near(g, l)
	})
	if small <= 100 {
		t.Fatalf("GOGC %d with a small heap: Keep changed nothing", small)
	}

	ballast := make([]byte, 48<<20)
	collectUntil(t, "48 MiB more live", func(g, l, p uint64) bool {
		return l > 48<<20 && p < small && near(g, l)
	})
	runtime.KeepAlive(ballast)

	stop()
	if _, _, p := readGC(); p != 100 {
		t.Errorf("GOGC %d after stop, want the 100 in force before Keep", p)
	}
	// A cleanup still armed must not tune again once stopped.
	runtime.GC()
	runtime.GC()
	time.Sleep(10 * time.Millisecond)
	if _, _, p := readGC(); p != 100 {
		t.Errorf("GOGC %d after collections that followed stop, want 100", p)
	}
}

func TestKeepLeavesGoDefaultWhenItIsMore(t *testing.T) {
	// From 150, so that a Keep that did nothing would fail.
	before := debug.SetGCPercent(150)
	defer debug.SetGCPercent(before)

	ballast := make([]byte, 32<<20)
	runtime.GC()
	stop := Keep(1 << 20)
	defer stop()
	collectUntil(t, "1 MiB headroom over a 32 MiB heap", func(g, l, p uint64) bool {
		return p == 100 && l > 32<<20 && g >= 2*l
	})
	runtime.KeepAlive(ballast)
}
