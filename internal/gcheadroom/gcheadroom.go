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

// heapMinimumAt100 is the floor of the heap goal at GOGC=100 in the
// standard runtime; the floor scales with GOGC. A runtime built with
// another (GOEXPERIMENT=heapminimum512kib) would leave less headroom than
// asked, which TestKeepHoldsTheHeadroomAsTheHeapGrows, reading the goal the
// runtime sets, would show.
const heapMinimumAt100 = 4 << 20

// maxPercent bounds what Keep sets, far above any useful value, so that
// the runtime's goal arithmetic cannot overflow.
const maxPercent = 1 << 20

// percent is the smallest GOGC, and at least 100, at which the runtime's
// next heap goal is live + headroom or more: the larger of the floor,
// heapMinimumAt100 × GOGC/100, and live + (live + roots) × GOGC/100, where
// roots are the stacks and globals the last cycle scanned.
func percent(headroom, live, roots uint64) int {
	byFloor := math.Ceil((float64(live) + float64(headroom)) * 100 / heapMinimumAt100)
	byLive := math.Inf(1)
	if base := live + roots; base > 0 {
		byLive = math.Ceil(float64(headroom) * 100 / float64(base))
	}
	return int(max(min(byFloor, byLive, maxPercent), 100))
}

// Keep sets GOGC now and after every garbage collection so that each cycle
// leaves headroom bytes of allocation before the next one, until stop is
// called; stop puts back the GOGC that Keep replaced. GOGC is the
// process's, so one Keep at a time. Memory limits (GOMEMLIMIT,
// debug.SetMemoryLimit) still apply: the runtime collects early when the
// limit is near, whatever GOGC says.
func Keep(headroom uint64) (stop func()) {
	k := &keeper{headroom: headroom, samples: []metrics.Sample{
		{Name: "/gc/heap/live:bytes"},
		{Name: "/gc/scan/stack:bytes"},
		{Name: "/gc/scan/globals:bytes"},
	}}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.replaced = k.tuneLocked()
	k.armLocked()
	return k.stop
}

type keeper struct {
	headroom uint64
	samples  []metrics.Sample

	mu       sync.Mutex // for the fields below, and samples
	replaced int        // the GOGC before Keep
	armed    runtime.Cleanup
	stopped  bool
}

// sentinel is what a collection frees to say it has run. It holds a
// pointer so that it is never packed with other small objects, whose
// liveness would keep it.
type sentinel struct{ _ *sentinel }

// armLocked schedules a tuning after a coming collection: the first that
// finds the sentinel unreachable, usually the next one (one made while a
// cycle is marking survives that cycle), runs its cleanup soon after on the
// runtime's cleanup goroutine. Tuning is therefore best effort: a cycle it
// misses keeps the GOGC of the one before, which is never below Go's
// default, and GOMEMLIMIT still bounds the heap.
func (k *keeper) armLocked() {
	k.armed = runtime.AddCleanup(new(sentinel), (*keeper).afterCycle, k)
}

func (k *keeper) afterCycle() {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.stopped {
		return
	}
	k.tuneLocked()
	k.armLocked()
}

// tuneLocked sets GOGC from the last cycle's figures and returns the one
// it replaced.
func (k *keeper) tuneLocked() int {
	metrics.Read(k.samples)
	live := k.samples[0].Value.Uint64()
	roots := k.samples[1].Value.Uint64() + k.samples[2].Value.Uint64()
	return debug.SetGCPercent(percent(k.headroom, live, roots))
}

func (k *keeper) stop() {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.stopped {
		return
	}
	k.stopped = true
	k.armed.Stop()
	debug.SetGCPercent(k.replaced)
}
