package main

import (
	"net/http"
	"slices"
	"testing"
	"time"
)

func TestTally(t *testing.T) {
	tl := newTally()
	tl.add(answer{req: request{kind: getCard}, latency: 3 * time.Millisecond, status: http.StatusOK, mark: -1})
	tl.add(answer{req: request{kind: getCard}, latency: time.Millisecond, status: http.StatusNotModified, mark: -1})
	tl.dropped()
	c := tl.take()
	tl.add(answer{req: request{kind: getCard}, latency: 2 * time.Millisecond, problem: "status 500", mark: -1})
	if c.requests != 2 || c.ok != 1 || c.notModified != 1 || c.dropped != 1 || !slices.Equal(c.latencies, []time.Duration{3 * time.Millisecond, time.Millisecond}) {
		t.Fatalf("first interval %+v", c)
	}
	if c := tl.take(); c.requests != 1 || c.failed != 1 || c.dropped != 0 || len(c.latencies) != 1 {
		t.Fatalf("second interval %+v", c)
	}
	tot := tl.total
	if tot.requests != 3 || tot.ok != 1 || tot.notModified != 1 || tot.failed != 1 || tot.dropped != 1 {
		t.Fatalf("total %+v", tot)
	}
	if !slices.Equal(tot.latencies, []time.Duration{3 * time.Millisecond, time.Millisecond, 2 * time.Millisecond}) {
		t.Fatalf("total latencies %v", tot.latencies)
	}
}
