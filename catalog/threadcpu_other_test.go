//go:build !linux

package catalog_test

import "time"

// threadCPU is not measured here: only Linux gives a thread's own time.
func threadCPU() time.Duration { return 0 }
