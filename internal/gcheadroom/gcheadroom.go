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

// heapMinimumAt100 is the runtime's floor of the heap goal at GOGC=100
// (the floor scales with GOGC): what Keep assumes until the goals it sees
// say otherwise, as with GOEXPERIMENT=heapminimum512kib.
const heapMinimumAt100 = 4 << 20

// maxPercent bounds what Keep sets, far above any useful value, so that
// the runtime's goal arithmetic cannot overflow.
const maxPercent = 1 << 20

// percent is the smallest GOGC, and at least 100, at which the runtime's
// next heap goal is live + headroom or more: the larger of the floor,
// floorAt100 × GOGC/100, and live + (live + roots) × GOGC/100, where roots
// are the stacks and globals the last cycle scanned.
func percent(headroom, live, roots uint64, floorAt100 float64) int {
	byFloor := math.Ceil((float64(live) + float64(headroom)) * 100 / floorAt100)
	byLive := math.Inf(1)
	if base := live + roots; base > 0 {
		byLive = math.Ceil(float64(headroom) * 100 / float64(base))
	}
	return int(max(min(byFloor, byLive, maxPercent), 100))
}

// Keep sets GOGC now and after every garbage collection so that each cycle
// leaves headroom bytes of allocation before the next one, until stop is
// called. When the last Keep of the process stops, the GOGC in force before
// the first is put back. Memory limits (GOMEMLIMIT, debug.SetMemoryLimit)
// still apply: the runtime collects early when the limit is near, whatever
// GOGC says.
func Keep(headroom uint64) (stop func()) {
	k := &keeper{headroom: headroom, floorAt100: heapMinimumAt100, samples: []metrics.Sample{
		{Name: "/gc/heap/live:bytes"},
		{Name: "/gc/scan/stack:bytes"},
		{Name: "/gc/scan/globals:bytes"},
		{Name: "/gc/heap/goal:bytes"},
		{Name: "/gc/gomemlimit:bytes"},
	}}
	mu.Lock()
	defer mu.Unlock()
	replaced := k.tuneLocked()
	if keeping == 0 {
		before = replaced
	}
	keeping++
	k.armLocked()
	return k.stop
}

// GOGC is the process's, so the keepers share what they know of it.
var (
	mu      sync.Mutex
	keeping int // keepers not stopped
	before  int // GOGC before the first of them
)

// Guarded by mu.
type keeper struct {
	headroom   uint64
	floorAt100 float64 // the runtime's floor of the heap goal at GOGC=100, as far as known
	samples    []metrics.Sample
	armed      runtime.Cleanup
	stopped    bool
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
	mu.Lock()
	defer mu.Unlock()
	if k.stopped {
		return
	}
	k.tuneLocked()
	k.armLocked()
}

// tuneLocked sets GOGC from the last cycle's figures and returns the one
// it replaced. Without a memory limit, a goal short of the headroom means
// the runtime's floor is smaller than assumed; the goal is then an upper
// bound of the floor (the floor itself when the floor set it), and a
// second try or two with it reach the headroom. Under a memory limit the
// goal may be the limit's, which says nothing of the floor.
func (k *keeper) tuneLocked() int {
	metrics.Read(k.samples[:3])
	live := k.samples[0].Value.Uint64()
	roots := k.samples[1].Value.Uint64() + k.samples[2].Value.Uint64()
	var replaced int
	for try := range 4 {
		p := percent(k.headroom, live, roots, k.floorAt100)
		if r := debug.SetGCPercent(p); try == 0 {
			replaced = r
		}
		metrics.Read(k.samples[3:])
		goal, limit := k.samples[3].Value.Uint64(), k.samples[4].Value.Uint64()
		if goal >= live+k.headroom || p == maxPercent || limit != math.MaxInt64 {
			break
		}
		k.floorAt100 = float64(goal) * 100 / float64(p)
	}
	return replaced
}

func (k *keeper) stop() {
	mu.Lock()
	defer mu.Unlock()
	if k.stopped {
		return
	}
	k.stopped = true
	k.armed.Stop()
	if keeping--; keeping == 0 {
		debug.SetGCPercent(before)
	}
}
