//go:build !linux

package catalogbench

import "time"

// threadCPU is not measured here: only Linux gives a thread's own time.
func threadCPU() time.Duration { return 0 }
