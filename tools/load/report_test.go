package main

import (
	"bufio"
	"strings"
	"testing"
	"time"
)

func TestMerge(t *testing.T) {
	res := merge([]tally{
		{lat: []time.Duration{5, 1, 3}, requests: 3, answered: 4},
		{lat: []time.Duration{4, 2}, requests: 2, errors: 1, firstError: "status 500", answered: 6},
	}, time.Second)
	if res.Requests != 5 || res.Errors != 1 || res.FirstError != "status 500" {
		t.Fatalf("merge = %+v", res)
	}
	if res.P50 != 3 || res.Max != 5 {
		t.Fatalf("p50=%d max=%d, want 3 and 5", res.P50, res.Max)
	}
	if got, want := res.reqPerSec(), 4.0; got != want {
		t.Fatalf("req/s=%v, want %v (errors do not count)", got, want)
	}
	res.ServerCPU = 5 * time.Millisecond
	if got, want := res.cpuPerAnswer(), 500*time.Microsecond; res.Answered != 10 || got != want {
		t.Fatalf("answered %d, CPU per answer %s; want 10 and %s (warm-up answers count)", res.Answered, got, want)
	}
}

func TestCheck(t *testing.T) {
	ok := func(rps float64) driveResult { return driveResult{Requests: int64(rps), Window: time.Second} }
	for _, tc := range []struct {
		name string
		r    row
		want string
	}{
		{"Met", row{closed: true, minRatio: 0.85, res: [2]driveResult{ok(900), ok(1000)}}, "ok"},
		{"Ratio", row{closed: true, minRatio: 0.85, res: [2]driveResult{ok(800), ok(1000)}}, "MISS ratio"},
		{"P99", row{closed: true, minRatio: 0.5, maxP99: time.Millisecond,
			res: [2]driveResult{{Requests: 900, Window: time.Second, P99: 2 * time.Millisecond}, ok(1000)}}, "MISS p99"},
		{"Errors", row{closed: true, minRatio: 0.5, res: [2]driveResult{ok(900), {Requests: 1000, Errors: 1, Window: time.Second}}}, "MISS errors"},
		{"OpenLoop", row{res: [2]driveResult{ok(100), ok(100)}}, "-"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.r.check(); got != tc.want {
				t.Fatalf("check = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestWriteTable(t *testing.T) {
	var b strings.Builder
	writeTable(&b, []string{"route", "req/s"}, []bool{false, true}, [][]string{{"getCard", "12,345"}, {"listSets", "7"}})
	want := `| route    |  req/s |
| -------- | -----: |
| getCard  | 12,345 |
| listSets |      7 |
`
	if got := b.String(); got != want {
		t.Fatalf("table:\n%s\nwant:\n%s", got, want)
	}
}

func TestThousands(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", -45678: "-45,678"} {
		if got := thousands(n); got != want {
			t.Fatalf("thousands(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestReadResponse(t *testing.T) {
	for _, tc := range []struct {
		name       string
		raw        string
		status     int
		n          int64
		keep, fail bool
	}{
		{"ContentLength", "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 5\r\n\r\nhello", 200, 5, true, false},
		{"Chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2;x=y\r\nde\r\n0\r\nTrailer: 1\r\n\r\n", 200, 5, true, false},
		{"Close", "HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 2\r\n\r\nno", 404, 2, false, false},
		{"HTTP10", "HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n", 200, 0, false, false},
		{"ToEOF", "HTTP/1.1 200 OK\r\n\r\nabcdef", 200, 6, false, false},
		{"Garbage", "SSH-2.0-OpenSSH\r\n\r\n", 0, 0, false, true},
		{"Truncated", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", 200, 3, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, n, keep, err := readResponse(bufio.NewReader(strings.NewReader(tc.raw)))
			if (err != nil) != tc.fail {
				t.Fatalf("err = %v, want failure %v", err, tc.fail)
			}
			if tc.fail {
				return
			}
			if status != tc.status || n != tc.n || keep != tc.keep {
				t.Fatalf("status=%d n=%d keep=%v, want %d %d %v", status, n, keep, tc.status, tc.n, tc.keep)
			}
		})
	}
}

// TestPrintSizes: the closed-loop rows measured on every catalogue, side
// by side, the smallest first and the reference of the ratios; then the
// catalogues on which catalogd read pages from the disk, one major fault in a
// hundred answers or more.
func TestPrintSizes(t *testing.T) {
	at := func(rps int64, p50, p99 time.Duration) [2]driveResult {
		// Ten seconds of answers, and a page from the disk for every
		// 400th (as on a warm file: the binary's own pages, say).
		return [2]driveResult{{Requests: rps, Window: time.Second, P50: p50, P99: p99, Answered: 10 * rps, ServerMajorFaults: uint64(rps / 40)}}
	}
	small := sized{cards: 100_000, rows: []row{
		{route: "getCard", traffic: "long-tail", mode: "64 conns", closed: true, res: at(40000, time.Millisecond, 4*time.Millisecond)},
		{route: "getCard", traffic: "long-tail", mode: "open 2000/s", res: at(2000, time.Millisecond, time.Millisecond)},
		{route: "search", traffic: "long-tail", mode: "64 conns", closed: true, res: at(20000, time.Millisecond, 10*time.Millisecond)},
	}}
	large := sized{cards: 1_000_000, rows: []row{
		{route: "getCard", traffic: "long-tail", mode: "64 conns", closed: true, res: at(30000, 2*time.Millisecond, 22*time.Millisecond)},
	}}
	large.rows[0].res[catalogd].ServerMajorFaults = 150_000 // one every other answer
	var b strings.Builder
	printSizes(&b, []sized{large, small}) // the smallest is the reference, whatever the order
	want := `
catalogd on each catalogue, closed loop; ratios to the smallest (100,000 cards):

| route   | traffic   | mode     | 100,000 req/s |     p50 |     p99 | 1,000,000 req/s |     p50 |      p99 | req/s ratio | p99 ratio |
| ------- | --------- | -------- | ------------: | ------: | ------: | --------------: | ------: | -------: | ----------: | --------: |
| getCard | long-tail | 64 conns |        40,000 | 1.00 ms | 4.00 ms |          30,000 | 2.00 ms | 22.00 ms |        0.75 |      5.50 |
on 1,000,000 cards catalogd read pages from the disk: up to 0.500 major faults per answer (getCard long-tail); those figures measure the disk as much as catalogd
`
	if got := b.String(); got != want {
		t.Fatalf("printSizes:\n%s\nwant:\n%s", got, want)
	}
}
