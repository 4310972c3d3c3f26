// Command soak runs catalogd serve for a long stretch of steady, mixed
// traffic while the catalogue is imported again and again under it, and
// checks that no request fails, that every import is picked up, and that
// memory, goroutines and open files stay flat.
//
//	go run ./internal/bench/soak [-duration 10m] [-rate 300] [-cards 100000] [-reimport 1m] [-conns 8]
//
// Run it from the repository root. It builds catalogd, generates a
// catalogue with internal/gen and imports it with the real binary, then
// starts catalogd serve --dev on 127.0.0.1 with metrics and reads the
// token from its start message.
//
// Every catalogue is two snapshot files given to one import. The core,
// generated once with -seed, has the same ids in every import, and import
// n ends every set name in it with " #n". The churn part, -churn times
// -cards more cards generated with seed -seed+1+n, has every set code (and
// so every set and card id) ending in "~n": each import drops the previous
// churn part's ids and adds new ones. Requests only target core records,
// which exist in every generation, so any answer other than 200 or 304 is
// a failure; and a card answer must carry the set names of the import that
// made the generation its Catalog-Generation header names.
//
// Requests are sent open-loop at -rate per second over -conns keep-alive
// connections, each one's latency counted from the moment it was due.
// 15% of the requests repeat an earlier one with its ETag in
// If-None-Match; the others are 40% GET /catalog/cards/{id}, 25% GET
// /catalog/sets/{code}/cards (a random page of 50, sometimes one past the
// end), 25% search with fragments of real names (sometimes with a zone, a
// set or a printed number) and 10% GET /catalog/sets. Accept-Encoding
// alternates between gzip and identity, and each request has its own
// X-Request-Id. An answer counts as good when its status is right, its body
// is valid JSON (after gunzip when compressed), it echoes the request id,
// and a card answer holds the card asked for, marked as above; a 304 must
// come from the generation that issued the ETag.
//
// Every -reimport, the next pair of snapshots is written and catalogd
// import runs over the served file while traffic flows; the soak then waits
// for the reload to show in catalogd_catalog_reloads_total. Every -every it
// samples the server: resident memory (total, anonymous, file-backed) from
// /proc, heap in use and goroutines from /metrics, open descriptors,
// catalogue files still open or mapped, reloads, and the requests, failures
// and latency of the interval, one line per sample. At the end it stops
// catalogd with SIGTERM and prints a summary. It exits 1 if any answer
// failed, an import failed or was not picked up within 10 s, anonymous
// memory, goroutines or open descriptors grew between the second minute
// and the last by more than the tolerances the summary states, a replaced
// catalogue was still open or mapped once traffic stopped, the server
// logged an error, or it did not exit 0 after SIGTERM.
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
