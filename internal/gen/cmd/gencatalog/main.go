// Command gencatalog writes a synthetic catalogue snapshot for benchmarks.
//
//	gencatalog -cards 1000000 -seed 1 -gzip -o catalogue-1m.json.gz
//	gencatalog -cards 100000 | catalogd import -
package main

import (
	"bufio"
	"compress/gzip"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/catalogd/catalogd/internal/gen"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("gencatalog", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cards := fs.Int("cards", 100000, "number of cards")
	seed := fs.Uint64("seed", 1, "seed; the same flags give the same bytes")
	perSet := fs.Int("per-set", gen.DefaultCardsPerSet, "average number of cards per set")
	distinct := fs.Bool("distinct", false, "names that almost never repeat: the worst case for the search index")
	gz := fs.Bool("gzip", false, "gzip the output")
	level := fs.Int("gzip-level", gzip.BestSpeed, "gzip level, 1 (fast) to 9 (small)")
	out := fs.String("o", "", "output file (default: standard output)")
	stats := fs.Bool("stats", false, "print counts per zone to standard error")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: gencatalog [-cards N] [-seed S] [-per-set N] [-distinct] [-gzip] [-o FILE] [-stats]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 || *cards < 0 || *perSet < 1 {
		fs.Usage()
		return 2
	}
	if *gz && (*level < gzip.HuffmanOnly || *level > gzip.BestCompression) {
		fmt.Fprintln(stderr, "gencatalog: -gzip-level must be between -2 and 9")
		return 2
	}
	st, err := write(*out, stdout, gen.Options{Cards: *cards, Seed: *seed, CardsPerSet: *perSet, DistinctNames: *distinct}, *gz, *level)
	if err != nil {
		fmt.Fprintln(stderr, "gencatalog:", err)
		return 1
	}
	if *stats {
		fmt.Fprintf(stderr, "sets %d, cards %d\n", st.Sets, st.Cards)
		for _, z := range []string{"intl", "jp", "chn"} {
			fmt.Fprintf(stderr, "  %-4s sets %d, cards %d\n", z, st.Zones[z].Sets, st.Zones[z].Cards)
		}
	}
	return 0
}

// write sends the snapshot to path, or to stdout when path is empty. A file
// is written beside its destination and renamed, so a failed run never
// leaves a truncated snapshot under the requested name.
func write(path string, stdout io.Writer, opt gen.Options, gz bool, level int) (st gen.Stats, err error) {
	dst := stdout
	var f *os.File
	if path != "" {
		f, err = os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
		if err != nil {
			return st, err
		}
		defer func() {
			if err != nil {
				f.Close()
				os.Remove(f.Name())
			}
		}()
		dst = f
	}
	// gen.Write hands over large chunks; only gzip's small writes need a buffer.
	w := dst
	var bw *bufio.Writer
	var zw *gzip.Writer
	if gz {
		bw = bufio.NewWriterSize(dst, 256<<10)
		// No name or time in the header: the same flags give the same bytes.
		if zw, err = gzip.NewWriterLevel(bw, level); err != nil {
			return st, err
		}
		w = zw
	}
	if st, err = gen.Write(w, opt); err != nil {
		return st, err
	}
	if zw != nil {
		if err = zw.Close(); err != nil {
			return st, err
		}
		if err = bw.Flush(); err != nil {
			return st, err
		}
	}
	if f != nil {
		if err = f.Chmod(0o644); err != nil {
			return st, err
		}
		if err = f.Close(); err != nil {
			return st, err
		}
		if err = os.Rename(f.Name(), path); err != nil {
			return st, err
		}
	}
	return st, nil
}
