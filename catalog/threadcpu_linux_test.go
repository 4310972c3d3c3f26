package catalog_test

import (
	"syscall"
	"time"
)

// threadCPU returns the processor time the calling thread has used, which
// a benchmark locked to its thread reads to count what a search cost even
// while other processes take turns on the machine's cores.
func threadCPU() time.Duration {
	const rusageThread = 1 // RUSAGE_THREAD, getrusage(2)
	var ru syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
