// Package gcheadroom keeps the garbage collector from running more often
// than once per a fixed amount of allocation.
//
// Go sets the heap goal of each cycle at the live heap plus GOGC percent of
// it (and of the stacks and globals), and at least 4 MiB × GOGC/100. A
// server whose live heap is a few MiB and which allocates a few KiB per
// request therefore collects dozens of times a second under load, and each
// cycle costs about what marking the whole live heap costs, whatever little
// was allocated since the last. Raising GOGC once would not do: it raises
// the goal in proportion to the live heap, so a heap that caches grow to
// tens of MiB would be allowed several times its size. Keep instead sets
// GOGC after every cycle so that the next goal is the live heap plus a
// fixed headroom, and never lower than Go's own default.
package gcheadroom

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// heapMinimumAt100 is the runtime's floor of the heap goal at GOGC=100;
// the floor scales with GOGC.
const heapMinimumAt100 = 4 << 20

// maxPercent bounds what Keep sets, far above any useful value, so that
// the runtime's goal arithmetic cannot overflow.
const maxPercent = 1 << 20

// Percent is the smallest GOGC, and at least 100, at which the runtime's
// next heap goal is live + headroom or more: the larger of the scaled floor
// and live + (live + roots) × GOGC/100, where roots are the stacks and
// globals the last cycle scanned.
func Percent(headroom, live, roots uint64) int {
	target := float64(live) + float64(headroom)
	byFloor := math.Ceil(target * 100 / heapMinimumAt100)
	byLive := math.Inf(1)
	if base := live + roots; base > 0 {
		byLive = math.Ceil(float64(headroom) * 100 / float64(base))
	}
	p := min(byFloor, byLive, maxPercent)
	return int(max(p, 100))
}

// Keep sets GOGC now and after every garbage collection so that each cycle
// leaves headroom bytes of allocation before the next one, until stop is
// called. When the last Keep of the process stops, the GOGC in force before
// the first is put back. Memory limits (GOMEMLIMIT, debug.SetMemoryLimit)
// still apply: the runtime collects early when the limit is near, whatever
// GOGC says.
func Keep(headroom uint64) (stop func()) {
	k := &keeper{headroom: headroom, samples: []metrics.Sample{
		{Name: "/gc/heap/live:bytes"},
		{Name: "/gc/scan/stack:bytes"},
		{Name: "/gc/scan/globals:bytes"},
	}}
	mu.Lock()
	replaced := k.tuneLocked()
	if keeping == 0 {
		before = replaced
	}
	keeping++
	mu.Unlock()
	k.arm()
	return k.stop
}

// GOGC is the process's, so the keepers share what they know of it.
var (
	mu      sync.Mutex
	keeping int // keepers not stopped
	before  int // GOGC before the first of them
)

type keeper struct {
	headroom uint64
	samples  []metrics.Sample
	stopped  bool // guarded by mu
}

// sentinel is what each cycle collects to say it has run. It holds a
// pointer so that it is never packed with other small objects, whose
// liveness would keep it.
type sentinel struct{ _ *sentinel }

// arm schedules a tuning for the end of the next cycle: an object nothing
// points to is unreachable at the next collection, which then runs its
// cleanup.
func (k *keeper) arm() {
	runtime.AddCleanup(new(sentinel), (*keeper).afterCycle, k)
}

func (k *keeper) afterCycle() {
	mu.Lock()
	defer mu.Unlock()
	if k.stopped {
		return
	}
	k.tuneLocked()
	k.arm()
}

// tuneLocked sets GOGC from the last cycle's figures and returns the one
// it replaced.
func (k *keeper) tuneLocked() int {
	metrics.Read(k.samples)
	live := k.samples[0].Value.Uint64()
	roots := k.samples[1].Value.Uint64() + k.samples[2].Value.Uint64()
	return debug.SetGCPercent(Percent(k.headroom, live, roots))
}

func (k *keeper) stop() {
	mu.Lock()
	defer mu.Unlock()
	if k.stopped {
		return
	}
	k.stopped = true
	if keeping--; keeping == 0 {
		debug.SetGCPercent(before)
	}
}
