package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/catalogd/catalogd/importer"
	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"
)

const defaultDB = "./catalog.db"

func newImportCommand(e *env) *cobra.Command {
	var (
		db      string
		dryRun  bool
		history int
	)
	cmd := &cobra.Command{
		Use:   "import [--db PATH] [--dry-run] [--history N] SNAPSHOT...",
		Short: "Validate snapshots and replace the catalogue with them",
		Long: `import reads one or more JSON catalogue snapshots ('-' is standard input,
gzip is detected), validates every record and replaces the catalogue file
atomically. Together the snapshots form the whole new catalogue. If any record
is invalid, every problem found (up to 100) is reported and the current
catalogue is left exactly as it was.

The new catalogue is compared, record by record, with the one it replaces,
and carries the changes of the last --history imports, which
GET /catalog/changes serves to partners that keep a copy.`,
		Args: minArgs(1, "snapshot file (or '-' for standard input)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if history < 0 {
				return usageErrorf("import: --history %d: give 0 or more imports", history)
			}
			stdin := 0
			for _, in := range args {
				if in == "-" {
					stdin++
				}
			}
			if stdin > 1 {
				return usageErrorf("import: '-' given %d times: standard input is one snapshot", stdin)
			}
			// Checked before the snapshots are read, not at the rename
			// after them; "" would name the working directory.
			if fi, err := os.Stat(db); db == "" || strings.HasSuffix(db, "/") || err == nil && fi.IsDir() {
				return usageErrorf("import: --db %q: want the path of a catalogue file, not a directory", db)
			}
			return runImport(cmd, e, importer.Config{DB: db, Inputs: args, Stdin: e.stdin, DryRun: dryRun, History: history})
		},
	}
	cmd.Flags().StringVar(&db, "db", defaultDB, "catalogue file to replace")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "validate and build, but leave the catalogue as it is")
	cmd.Flags().IntVar(&history, "history", defaultHistory, "imports whose changes the catalogue keeps for GET /catalog/changes (0: none)")
	return cmd
}

// importMemoryLimit is the heap the import asks the garbage collector to
// stay under. What the import holds is bounded by its buffers, about 100
// MiB whatever the snapshot's size; by default Go would let garbage grow
// the heap to twice that between collections. A GOMEMLIMIT in the
// environment wins.
const importMemoryLimit = 160 << 20

// defaultHistory is the imports whose changes a catalogue keeps: a month of
// daily imports, so that a partner syncing monthly never has to start over.
const defaultHistory = 30

func runImport(cmd *cobra.Command, e *env, cfg importer.Config) error {
	db := cfg.DB
	start := time.Now()
	if debug.SetMemoryLimit(-1) == math.MaxInt64 {
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(importMemoryLimit))
	}
	bar := newProgress(e.stderr)
	if bar != nil {
		cfg.Progress = func(read, total int64) {
			if total > 0 {
				bar.ChangeMax64(total)
			}
			bar.Set64(read)
		}
	}
	res, err := importer.Import(cmd.Context(), cfg)
	if bar != nil {
		bar.Finish()
		fmt.Fprintln(e.stderr)
	}
	var notSynced error
	if errors.Is(err, importer.ErrNotSynced) {
		// Replaced: say so as for any import, then fail on the sync.
		notSynced, err = err, nil
	}
	if err != nil {
		var verr *importer.ValidationError
		if errors.As(err, &verr) {
			for _, p := range verr.Errors {
				fmt.Fprintln(e.stderr, p)
			}
			more := ""
			if verr.Truncated {
				more = " (stopped looking after that many; there may be more)"
			}
			fmt.Fprintf(e.stderr, "catalogd: import failed: %s%s; the catalogue %s was not changed\n", countOf(len(verr.Errors), "problem"), more, db)
			return &reportedError{err: err}
		}
		if errors.Is(err, context.Canceled) {
			return fmt.Errorf("import: interrupted; the catalogue %s was not changed", db)
		}
		return fmt.Errorf("%w; the catalogue %s was not changed", err, db)
	}
	var sets, cards int64
	for _, z := range res.Info.Zones {
		sets += z.Sets
		cards += z.Cards
	}
	took := time.Since(start).Round(time.Millisecond)
	if res.DryRun {
		fmt.Fprintf(e.stdout, "dry run: %d sets and %d cards are valid; %s was not changed (%s)\n", sets, cards, db, took)
		return nil
	}
	fmt.Fprintf(e.stdout, "imported %d sets and %d cards into %s, generation %s (%s)\n", sets, cards, res.Path, res.Info.Generation, took)
	if n := len(res.Info.History); n > 0 {
		last := res.Info.History[n-1]
		fmt.Fprintf(e.stdout, "%s changed since generation %s; GET /catalog/changes answers since the last %s\n", countOf(int(last.Changes), "record"), last.From, countOf(n, "generation"))
	}
	if res.Unfollowed != nil {
		fmt.Fprintf(e.stderr, "catalogd: warning: the new catalogue starts a history of its own, as the one it replaced could not be read: %v\n", res.Unfollowed)
	}
	if notSynced != nil {
		return fmt.Errorf("%w; serve reads the new catalogue, but a crash before the system writes the directory may bring the previous one back", notSynced)
	}
	return nil
}

// newProgress returns a progress bar on w when w is a terminal, else nil:
// logs and pipes get no control characters.
func newProgress(w io.Writer) *progressbar.ProgressBar {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return nil
	}
	return progressbar.NewOptions64(-1,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription("importing"),
		progressbar.OptionShowBytes(true),
		progressbar.OptionSetWidth(30),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionSetPredictTime(true),
	)
}

// countOf is n and the noun, plural unless n is 1.
func countOf(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}
