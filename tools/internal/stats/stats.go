// Package stats holds the figures the benchmark harnesses compute alike
// from what they measure.
package stats

import (
	"math"
	"time"
)

// Percentile is the nearest-rank percentile of sorted: the smallest value
// that at least p (0..1) of the values do not exceed. It is 0 for no values.
func Percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	// The tolerance keeps 0.99 × 100 at rank 99 whatever the rounding.
	i := int(math.Ceil(float64(len(sorted))*p-1e-9)) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}
