package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
)

// With -summary FILE the comparison ends by writing its closed-loop
// figures, with the commit and the machine they were measured on and the
// command that measured them, into FILE between two marker lines:
// tools/benchtable.sh keeps the table at the top of docs/BENCHMARKS.md so.

const (
	summaryBegin = "<!-- figures: begin; tools/benchtable.sh writes what follows -->"
	summaryEnd   = "<!-- figures: end -->"
)

// measuredOn names what a run measured: the product's commit, and the
// machine.
type measuredOn struct {
	commit, machine, command string
}

// summaryTable is the closed-loop rows of each catalogue, one table.
func summaryTable(sizes []sized, on measuredOn) string {
	var rows [][]string
	for _, s := range sizes {
		for _, r := range s.rows {
			if !r.closed {
				continue
			}
			c, x := &r.res[catalogd], &r.res[ceiling]
			rows = append(rows, []string{
				r.route, r.traffic, thousands(int64(s.cards)), r.mode,
				thousands(int64(c.reqPerSec())), thousands(int64(x.reqPerSec())), fmt.Sprintf("%.2f", r.ratio()),
				fmtDur(c.P99), fmtDur(c.cpuPerAnswer()),
				on.commit, on.machine,
			})
		}
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "```sh\n%s\n```\n\n", on.command)
	writeTable(&b, []string{"route", "traffic", "cards", "mode", "catalogd req/s", "ceiling req/s", "ratio", "catalogd p99", "CPU per answer", "commit", "machine"},
		[]bool{false, false, true, false, true, true, true, true, true, false, false}, rows)
	return b.String()
}

// writeSummary replaces what lies between the markers of file with table.
func writeSummary(file, table string) error {
	old, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	from, to, err := summaryPlace(file, old)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	b.Write(old[:from])
	b.WriteString(table)
	b.Write(old[to:])
	return os.WriteFile(file, b.Bytes(), 0o644)
}

// summaryPlace returns where the figures go in the text of file: after
// the line of summaryBegin, up to the line of summaryEnd that follows it.
func summaryPlace(file string, text []byte) (from, to int, err error) {
	begin, end := []byte(summaryBegin+"\n"), []byte("\n"+summaryEnd+"\n")
	i := bytes.Index(text, begin)
	if i < 0 || i > 0 && text[i-1] != '\n' {
		return 0, 0, fmt.Errorf("%s has no line %q to write the figures after", file, summaryBegin)
	}
	from = i + len(begin)
	j := bytes.Index(text[from-1:], end)
	if j < 0 {
		return 0, 0, fmt.Errorf("%s has no line %q after %q", file, summaryEnd, summaryBegin)
	}
	return from, from + j, nil
}

// checkSummaryFile fails when the figures could not be written into file,
// before minutes of measuring rather than after.
func checkSummaryFile(file string) error {
	text, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	_, _, err = summaryPlace(file, text)
	return err
}

// describeRun names the product's commit (with "-dirty" when tracked
// files differ from it), the machine, and the command as it was given but
// for -summary: the command that measures the figures again.
func describeRun(ctx context.Context) (measuredOn, error) {
	out, err := exec.CommandContext(ctx, "git", "-C", "..", "describe", "--always", "--dirty", "--abbrev=7").Output()
	if err != nil {
		return measuredOn{}, fmt.Errorf("the commit measured: git describe: %w", err)
	}
	return measuredOn{
		commit:  strings.TrimSpace(string(out)),
		machine: fmt.Sprintf("%d × %s, %s", runtime.NumCPU(), cpuModel(), runtime.Version()),
		command: "go run -C tools ./load " + strings.Join(withoutSummary(os.Args[1:]), " "),
	}, nil
}

// cpuModel is the processor's name as /proc/cpuinfo gives it.
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}

// withoutSummary returns args without the -summary flag and its value.
func withoutSummary(args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		name, _, hasValue := strings.Cut(strings.TrimLeft(args[i], "-"), "=")
		if !strings.HasPrefix(args[i], "-") || name != "summary" {
			out = append(out, args[i])
			continue
		}
		if !hasValue {
			i++ // the value is the next argument
		}
	}
	return out
}
