package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/catalogd/catalogd/tools/internal/procfs"
)

const (
	// reloadPromise is how soon docs/CONTRACT.md, Operations, says a new import is
	// picked up.
	reloadPromise = 2 * time.Second
	// reloadWait is how long the soak waits for one before it counts the
	// import as missed.
	reloadWait = 10 * time.Second
)

// catalogue makes the imports of a soak: the core plus a churn part.
type catalogue struct {
	bin, dir, db string
	core         *core
	churnCards   int
	seed         uint64 // of the core; import n's churn part uses seed+1+n
}

// importResult is one import and when the server picked it up.
type importResult struct {
	n                     int
	at                    time.Duration // since traffic started
	seed                  uint64        // of the churn part
	churnSets, churnCards int
	prepare               time.Duration // writing the two snapshots
	took                  time.Duration // catalogd import
	generation            string
	err                   error
	output                string // catalogd import's, when it failed
	reloaded              bool
	reloadedIn            time.Duration // from the end of the import to the reload seen in the metrics
}

var generationRE = regexp.MustCompile(`generation (\S+)`)

// importN writes the core and churn part n and imports them over the db.
func (c *catalogue) importN(ctx context.Context, n int) importResult {
	res := importResult{n: n, seed: c.seed + 1 + uint64(n)}
	corePath := filepath.Join(c.dir, fmt.Sprintf("core-%d.json", n))
	churnPath := filepath.Join(c.dir, fmt.Sprintf("churn-%d.json", n))
	defer os.Remove(corePath)
	defer os.Remove(churnPath)
	start := time.Now()
	if res.err = c.core.writeMarkedCore(corePath, n); res.err != nil {
		return res
	}
	res.churnSets, res.churnCards, res.err = writeChurn(churnPath, c.churnCards, res.seed, n)
	res.prepare = time.Since(start)
	if res.err != nil {
		return res
	}
	cmd := procfs.Import(ctx, c.bin, c.db, corePath, churnPath)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start = time.Now()
	res.err = cmd.Run()
	res.took = time.Since(start)
	if m := generationRE.FindStringSubmatch(out.String()); m != nil {
		res.generation = m[1]
	}
	if res.err != nil {
		res.output = strings.TrimSpace(out.String())
		res.err = fmt.Errorf("catalogd import: %w", res.err)
	}
	return res
}

// waitReload waits until the server's successful reloads reach want, and
// says how long that took.
func waitReload(ctx context.Context, client *http.Client, metrics string, want int) (time.Duration, bool) {
	start := time.Now()
	for time.Since(start) < reloadWait && ctx.Err() == nil {
		if m, err := scrape(ctx, client, metrics); err == nil && int(m[reloadsOK]) >= want {
			return time.Since(start), true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return time.Since(start), false
}

const (
	reloadsOK     = `catalogd_catalog_reloads_total{result="success"}`
	reloadsFailed = `catalogd_catalog_reloads_total{result="failure"}`
)

func (r importResult) String() string {
	s := fmt.Sprintf("import %d: core + churn of %d sets, %d cards (seed %d); written in %s",
		r.n, r.churnSets, r.churnCards, r.seed, round(r.prepare))
	if r.took > 0 {
		s += fmt.Sprintf(", imported in %s", round(r.took))
	}
	if r.err != nil {
		s += "; FAILED: " + r.err.Error()
		if r.output != "" {
			s += "\n" + indent(r.output, "        ")
		}
		return s
	}
	s += "; generation " + r.generation
	switch {
	case !r.reloaded:
		s += fmt.Sprintf("; NOT RELOADED within %s", reloadWait)
	case r.reloadedIn > reloadPromise:
		s += fmt.Sprintf("; reloaded %s later (LATE: more than %s)", round(r.reloadedIn), reloadPromise)
	default:
		s += fmt.Sprintf("; reloaded %s later", round(r.reloadedIn))
	}
	return s
}

func indent(s, prefix string) string {
	return prefix + strings.ReplaceAll(s, "\n", "\n"+prefix)
}

func round(d time.Duration) time.Duration {
	switch {
	case d >= 10*time.Second:
		return d.Round(100 * time.Millisecond)
	case d >= time.Second:
		return d.Round(10 * time.Millisecond)
	}
	return d.Round(time.Millisecond)
}
