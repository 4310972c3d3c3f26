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
	begin := bytes.Index(old, []byte(summaryBegin+"\n"))
	end := bytes.Index(old, []byte(summaryEnd+"\n"))
	if begin < 0 || end < begin {
		return fmt.Errorf("%s has no lines %q and %q, in that order, to write the figures between", file, summaryBegin, summaryEnd)
	}
	var b bytes.Buffer
	b.Write(old[:begin+len(summaryBegin)+1])
	b.WriteString(table)
	b.Write(old[end:])
	return os.WriteFile(file, b.Bytes(), 0o644)
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
