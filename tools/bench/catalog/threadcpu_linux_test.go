package catalogbench

import (
	"time"

	"golang.org/x/sys/unix"
)

// threadCPU returns the processor time the calling thread has used, which
// a benchmark locked to its thread reads to count what a search cost even
// while other processes take turns on the machine's cores.
func threadCPU() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}
