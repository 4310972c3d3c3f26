package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestWriteSummary: the closed-loop rows of every catalogue, with the
// commit, the machine and the command, replace what lay between the
// markers, and nothing else of the file changes.
func TestWriteSummary(t *testing.T) {
	res := func(rps int64, p99, cpu time.Duration) [2]driveResult {
		return [2]driveResult{
			{Requests: rps, Window: time.Second, P99: p99, Answered: rps, ServerCPU: time.Duration(rps) * cpu},
			{Requests: 2 * rps, Window: time.Second},
		}
	}
	sizes := []sized{{cards: 100_000, rows: []row{
		{route: "getCard", traffic: "long-tail", mode: "64 conns", closed: true, res: res(20000, 8*time.Millisecond, 45*time.Microsecond)},
		{route: "getCard", traffic: "long-tail", mode: "open 2000/s", res: res(2000, time.Millisecond, time.Microsecond)},
	}}}
	on := measuredOn{commit: "abc1234", machine: "2 × Some CPU, go1.26.8", command: "go run -C tools ./load -conns 64"}
	file := filepath.Join(t.TempDir(), "BENCHMARKS.md")
	before := "# Benchmarks\n\nWhat the table is.\n\n" + summaryBegin + "\nan older table\n" + summaryEnd + "\n\n## The rest\n"
	if err := os.WriteFile(file, []byte(before), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := writeSummary(file, summaryTable(sizes, on)); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	want := "# Benchmarks\n\nWhat the table is.\n\n" + summaryBegin + "\n" + "```sh\ngo run -C tools ./load -conns 64\n```\n\n" +
		"| route   | traffic   |   cards | mode     | catalogd req/s | ceiling req/s | ratio | catalogd p99 | CPU per answer | commit  | machine                |\n" +
		"| ------- | --------- | ------: | -------- | -------------: | ------------: | ----: | -----------: | -------------: | ------- | ---------------------- |\n" +
		"| getCard | long-tail | 100,000 | 64 conns |         20,000 |        40,000 |  0.50 |      8.00 ms |          45 µs | abc1234 | 2 × Some CPU, go1.26.8 |\n" +
		summaryEnd + "\n\n## The rest\n"
	if string(got) != want {
		t.Fatalf("the file:\n%s\nwant:\n%s", got, want)
	}

	for _, bad := range []string{
		"# Benchmarks\n",
		"# Benchmarks\n" + summaryEnd + "\n" + summaryBegin + "\n",
		"# Benchmarks\n" + summaryBegin + "\nno end\n",
		"# Benchmarks " + summaryBegin + "\n" + summaryEnd + "\n",
	} {
		if err := os.WriteFile(file, []byte(bad), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := checkSummaryFile(file); err == nil || !strings.Contains(err.Error(), "has no line") {
			t.Errorf("%q: err = %v, want the markers missing", bad, err)
		}
		if err := writeSummary(file, "x"); err == nil {
			t.Errorf("%q: written", bad)
		}
	}
	empty := summaryBegin + "\n" + summaryEnd + "\n"
	if err := os.WriteFile(file, []byte(empty), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := writeSummary(file, "x\n"); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(file); string(got) != summaryBegin+"\nx\n"+summaryEnd+"\n" {
		t.Errorf("between markers with nothing between: %q", got)
	}
}

// TestWithoutSummary: the command shown with the figures is the one that
// measures them, without the file they were written to.
func TestWithoutSummary(t *testing.T) {
	for _, tc := range []struct{ args, want string }{
		{"-conns 64 -summary /x/B.md -duration 5s", "-conns 64 -duration 5s"},
		{"-conns 64 --summary=/x/B.md", "-conns 64"},
		{"-summary /x/B.md", ""},
		{"-cards 1000000", "-cards 1000000"},
	} {
		if got := strings.Join(withoutSummary(strings.Fields(tc.args)), " "); got != tc.want {
			t.Errorf("withoutSummary(%s) = %q, want %q", tc.args, got, tc.want)
		}
	}
}
