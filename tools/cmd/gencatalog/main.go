// Command gencatalog writes a synthetic catalogue snapshot to standard
// output, for benchmarks:
//
//	gencatalog -cards 100000 | catalogd import -
//	gencatalog -cards 1000000 -distinct | gzip -1 > catalogue-1m.json.gz
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/catalogd/catalogd/tools/gen"
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
	cardsFirst := fs.Bool("cards-first", false, "write the cards before the sets, so that an import meets every card before its set")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: gencatalog [-cards N] [-seed S] [-per-set N] [-distinct] [-cards-first] > FILE")
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
	w := bufio.NewWriterSize(stdout, 256<<10)
	_, err := gen.Write(w, gen.Options{Cards: *cards, Seed: *seed, CardsPerSet: *perSet, DistinctNames: *distinct, CardsFirst: *cardsFirst})
	if err == nil {
		err = w.Flush()
	}
	if err != nil {
		fmt.Fprintln(stderr, "gencatalog:", err)
		return 1
	}
	return 0
}
