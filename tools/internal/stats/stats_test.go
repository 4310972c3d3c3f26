package stats

import (
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	hundred := make([]time.Duration, 100)
	for i := range hundred {
		hundred[i] = time.Duration(i + 1)
	}
	for _, tc := range []struct {
		name   string
		sorted []time.Duration
		p      float64
		want   time.Duration
	}{
		{"Empty", nil, 0.5, 0},
		{"One", []time.Duration{7}, 0.99, 7},
		{"MedianOfTwo", []time.Duration{1, 2}, 0.5, 1},
		{"MedianOfThree", []time.Duration{1, 2, 3}, 0.5, 2},
		{"P50OfHundred", hundred, 0.50, 50},
		{"P99OfHundred", hundred, 0.99, 99},
		{"P100", hundred, 1, 100},
		{"P99OfTen", hundred[:10], 0.99, 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Percentile(tc.sorted, tc.p); got != tc.want {
				t.Fatalf("Percentile(%d values, %v) = %d, want %d", len(tc.sorted), tc.p, got, tc.want)
			}
		})
	}
}
