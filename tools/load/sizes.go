package main

import (
	"cmp"
	"fmt"
	"io"
	"slices"
)

// With -db naming several catalogue files, each is measured in turn as a
// single one is, and one table sets catalogd's figures on each side by
// side: docs/BENCHMARKS.md, "Long-tail traffic".

// sized is what the comparison on one catalogue measured.
type sized struct {
	cards int
	rows  []row
}

// printSizes writes, for each closed-loop route and mode measured on
// every catalogue, catalogd's throughput, p50 and p99 on each, smallest
// first, and for each larger one its throughput and p99 as ratios of the
// smallest's.
func printSizes(w io.Writer, sizes []sized) {
	sizes = slices.Clone(sizes)
	slices.SortStableFunc(sizes, func(a, b sized) int { return cmp.Compare(a.cards, b.cards) })
	header, right := []string{"route", "traffic", "mode"}, []bool{false, false, false}
	for i, s := range sizes {
		c := thousands(int64(s.cards))
		header = append(header, c+" req/s", "p50", "p99")
		if i > 0 {
			header = append(header, "req/s ratio", "p99 ratio")
		}
	}
	for len(right) < len(header) {
		right = append(right, true)
	}
	var rows [][]string
	for _, r := range sizes[0].rows {
		if !r.closed {
			continue // an open loop's rate is set per catalogue
		}
		base := r.res[catalogd]
		line := []string{r.route, r.traffic, r.mode}
		for i, s := range sizes {
			j := slices.IndexFunc(s.rows, func(o row) bool { return o.route == r.route && o.traffic == r.traffic && o.mode == r.mode })
			if j < 0 {
				line = nil
				break
			}
			res := s.rows[j].res[catalogd]
			line = append(line, thousands(int64(res.reqPerSec())), fmtDur(res.P50), fmtDur(res.P99))
			if i > 0 {
				line = append(line, ratioOf(res.reqPerSec(), base.reqPerSec()), ratioOf(float64(res.P99), float64(base.P99)))
			}
		}
		if line != nil {
			rows = append(rows, line)
		}
	}
	fmt.Fprintf(w, "\ncatalogd on each catalogue, closed loop; ratios to the smallest (%s cards):\n\n", thousands(int64(sizes[0].cards)))
	writeTable(w, header, right, rows)
	for _, s := range sizes {
		printDiskWait(w, thousands(int64(s.cards))+" cards", s.rows)
	}
}

// diskWaitBound is the major faults per answer from which a run is taken
// to have measured the disk: one page read from it for every hundred
// answers.
const diskWaitBound = 0.01

// printDiskWait says so when catalogd read pages from the disk in a
// closed-loop run of rows, on the catalogue named: the file was not in the
// page cache, or did not stay there (in a memory cgroup it starts out of
// it), and the figures measure the disk as much as catalogd.
func printDiskWait(w io.Writer, catalogue string, rows []row) {
	worst, route := 0.0, ""
	for _, r := range rows {
		if f := r.res[catalogd].majorFaultsPerAnswer(); r.closed && f > worst {
			worst, route = f, r.route+" "+r.traffic
		}
	}
	if worst >= diskWaitBound {
		fmt.Fprintf(w, "on %s catalogd read pages from the disk: up to %.3f major faults per answer (%s); those figures measure the disk as much as catalogd\n",
			catalogue, worst, route)
	}
}

// ratioOf is a/b to two decimals, or "-" when b is 0.
func ratioOf(a, b float64) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", a/b)
}
