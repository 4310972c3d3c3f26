// Command soak runs catalogd serve for a long stretch of steady, mixed
// traffic while the catalogue is imported again and again under it, and
// checks that no request fails, that every import is picked up, and that
// memory, goroutines and open files stay flat. docs/RELIABILITY.md, "Soak
// test", says what it sends, what fails it and what its last run gave.
//
//	go run -C tools ./soak [-duration 10m] [-rate 300] [-cards 100000] [-reimport 1m] [-conns 8]
//	go run -C tools ./soak -cards 1000000    # the run docs/RELIABILITY.md reports
//
// Every catalogue is two generated snapshots given to one import: the core,
// with the same ids in every import and its set names marked " #n" by
// import n, and a churn part whose set codes, and so its ids, end in "~n".
// Requests only target core records, which exist in every generation, so
// any answer other than 200 or 304 is a failure, and a card answer must
// carry the mark of the import that made the generation its
// Catalog-Generation header names.
//
// The working directory (catalogue, snapshots, the server's log) is removed
// at the end unless -keep is given or the soak failed.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	var o options
	flag.DurationVar(&o.duration, "duration", 10*time.Minute, "how long traffic runs")
	flag.Float64Var(&o.rate, "rate", 300, "requests per second, sent on schedule whatever the answers take")
	flag.IntVar(&o.cards, "cards", 100_000, "cards in the core catalogue")
	flag.DurationVar(&o.reimport, "reimport", time.Minute, "time between imports")
	flag.IntVar(&o.conns, "conns", 8, "keep-alive connections")
	flag.Float64Var(&o.churn, "churn", 0.1, "cards of each import's churn part, as a share of -cards")
	flag.Uint64Var(&o.seed, "seed", 1, "generator seed of the core; churn parts use the seeds after it")
	flag.DurationVar(&o.every, "every", 10*time.Second, "time between samples")
	flag.BoolVar(&o.keep, "keep", false, "keep the working directory")
	flag.Parse()
	if err := o.validate(); err != nil || flag.NArg() > 0 {
		if err != nil {
			fmt.Fprintln(os.Stderr, "soak:", err)
		}
		flag.Usage()
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	passed, err := run(ctx, o, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(1)
	}
	if !passed {
		os.Exit(1)
	}
}

// options are the command line of a soak.
type options struct {
	duration time.Duration
	rate     float64
	cards    int
	reimport time.Duration
	conns    int
	churn    float64
	seed     uint64
	every    time.Duration
	keep     bool
}

func (o options) validate() error {
	switch {
	case o.duration <= 0:
		return fmt.Errorf("-duration must be positive")
	case o.rate <= 0:
		return fmt.Errorf("-rate must be positive")
	case o.cards < 1:
		return fmt.Errorf("-cards must be at least 1")
	case o.reimport <= 0:
		return fmt.Errorf("-reimport must be positive")
	case o.conns < 1:
		return fmt.Errorf("-conns must be at least 1")
	case o.churn <= 0 || o.churn > 1:
		return fmt.Errorf("-churn must be more than 0 and at most 1")
	case o.every < time.Second:
		return fmt.Errorf("-every must be at least 1s")
	}
	return nil
}

// churnCards is the size of each import's churn part before the records
// the core already has are taken out.
func (o options) churnCards() int { return max(1, int(float64(o.cards)*o.churn)) }

// imports is how many imports the soak makes after the first: one every
// -reimport that starts before traffic ends.
func (o options) imports() int { return int((o.duration - 1) / o.reimport) }
