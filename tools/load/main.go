// Command load compares catalogd serve under load with a ceiling: a minimal
// net/http server that answers the same four catalogue routes with the same
// bytes (header fields and body) from a map in memory and checks no token.
// The ratio of their throughputs is what catalogd's routing, token check,
// catalogue reads and logging cost on top of net/http itself.
// docs/BENCHMARKS.md, "Serving under load, against a ceiling" and "Long-tail
// traffic", says what it sends and how it measures, with its figures.
//
//	go run -C tools ./load [-cards 100000 | -db FILE[,FILE...]] [-duration 5s] [-conns 16,64] [-rate 2000] [-gzip] [-bare-ceiling] [-memory-limit MiB] [-keep] [-perf DIR] [-serve-args ARGS] [-routes getCard,...] [-traffic hot-spot,long-tail] [-summary FILE]
//
// It builds catalogd, generates and imports a catalogue (or serves the file
// of -db, or each of its files in turn, then sets their figures side by
// side), runs an identity provider in this process and signs one RS256
// token that every catalogd request carries. It fetches every answer once
// from catalogd and hands those bytes to the ceiling. Only one server is
// loaded at a time, on CPU 0, with the load generator on CPU 1; a run that
// other processes disturbed is made again (-attempts), and the least
// disturbed is kept.
//
// The same binary plays the ceiling and the load generator when its first
// argument is "ceiling" or "drive"; those roles are internal to the harness.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "ceiling":
			exit("load ceiling", runCeiling(os.Args[2:]))
			return
		case "drive":
			exit("load drive", runDrive(os.Stdin, os.Stdout))
			return
		}
	}
	var o options
	flag.IntVar(&o.cards, "cards", 100_000, "cards in the generated catalogue")
	dbs := flag.String("db", "", "serve this catalogue file, imported before, rather than a generated one (-cards is then unused); the requests are drawn from a sample of it. Several, comma-separated, are measured one after the other, and a last table sets their figures side by side")
	flag.Uint64Var(&o.seed, "seed", 1, "seed of the generator and of the choice of requests")
	flag.DurationVar(&o.duration, "duration", 5*time.Second, "measured time of each run")
	flag.DurationVar(&o.warmup, "warmup", time.Second, "unmeasured time before each run")
	conns := flag.String("conns", "16,64", "connections of the closed-loop runs, comma-separated")
	flag.Float64Var(&o.rate, "rate", 2000, "requests per second of the open-loop run (capped per route at half the slower server's closed-loop rate)")
	flag.IntVar(&o.openConns, "open-conns", 32, "connections of the open-loop run")
	flag.IntVar(&o.attempts, "attempts", 3, "times a run is made while other processes take more than 10% of either CPU")
	flag.DurationVar(&o.quietWait, "quiet-wait", 10*time.Second, "longest wait before a run for other processes to leave both CPUs quiet")
	flag.IntVar(&o.starts, "starts", 5, "times catalogd serve is started to time its readiness")
	flag.StringVar(&o.perfDir, "perf", "", "record perf profiles of both servers during the closed-loop runs into this directory")
	flag.BoolVar(&o.keep, "keep", false, "keep the working directory (catalogue, snapshot, server logs)")
	memLimit := flag.Int("memory-limit", 0, "run the catalogd that serves the load in a memory cgroup limited to this many MiB (page cache included), as a small VM or a container limit would; needs the right to create a cgroup")
	flag.BoolVar(&o.gzip, "gzip", false, "send Accept-Encoding: gzip with every request (the ceiling serves catalogd's compressed answers)")
	flag.BoolVar(&o.bareCeiling, "bare-ceiling", false, "the ceiling writes only Content-Type, Content-Encoding, and Content-Length over 2 KB, not catalogd's other header fields (ETag, Cache-Control, Catalog-Generation, X-Request-Id, Vary)")
	traffic := flag.String("traffic", hotSpot+","+longTail, "kinds of traffic to send, comma-separated: hot-spot (a few requests, over and over) and long-tail (every card, every page of every set, 20,000 distinct queries)")
	only := flag.String("routes", "", "routes to measure, comma-separated ("+strings.Join(routeNames, ",")+"); all when empty")
	flag.StringVar(&o.summary, "summary", "", "at the end, write the closed-loop figures, the commit, the machine and this command into this file, between its marker lines (tools/benchtable.sh: docs/BENCHMARKS.md)")
	serveArgs := flag.String("serve-args", "", "more arguments for catalogd serve, space-separated (-serve-args=--answer-cache-mb=0 measures without the answer cache)")
	flag.Parse()
	o.serveArgs = strings.Fields(*serveArgs)
	for db := range strings.SplitSeq(*dbs, ",") {
		if db = strings.TrimSpace(db); db != "" {
			o.dbs = append(o.dbs, db)
		}
	}
	o.memoryLimit = int64(*memLimit) << 20
	var err error
	if o.routes, err = parseList(*only, routeNames); err != nil {
		fmt.Fprintln(os.Stderr, "load: -routes:", err)
		os.Exit(2)
	}
	if o.traffic, err = parseList(*traffic, trafficNames); err == nil && len(o.traffic) == 0 {
		err = errors.New("no kind of traffic")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "load: -traffic:", err)
		os.Exit(2)
	}
	if o.conns, err = parseConns(*conns); err != nil {
		fmt.Fprintln(os.Stderr, "load: -conns:", err)
		os.Exit(2)
	}
	if o.cards < 1 || o.duration <= 0 || o.warmup < 0 || o.rate <= 0 || o.openConns < 1 || o.starts < 1 || o.attempts < 1 || o.quietWait < 0 || *memLimit < 0 || flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	exit("load", run(ctx, o))
}

func exit(prefix string, err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, prefix+":", err)
		os.Exit(1)
	}
}

// options are the command line of a comparison.
type options struct {
	cards       int
	dbs         []string // existing catalogue files, measured in turn; one generated when none
	db          string   // the one being measured; generated when ""
	seed        uint64
	duration    time.Duration
	warmup      time.Duration
	conns       []int
	rate        float64
	openConns   int
	starts      int
	attempts    int
	quietWait   time.Duration
	perfDir     string
	keep        bool
	gzip        bool  // requests accept gzip
	bareCeiling bool  // the ceiling writes Content-Type, Content-Encoding, and Content-Length over 2 KB only
	memoryLimit int64 // bytes; catalogd serves without a cgroup when 0
	serveArgs   []string
	routes      []string // measured routes; all when empty
	traffic     []string // kinds of traffic sent, in trafficNames
	summary     string   // a file to write the figures into; none when ""
}

// parseList reads a comma-separated list of names, each one of known.
func parseList(s string, known []string) ([]string, error) {
	var out []string
	for f := range strings.SplitSeq(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		if !slices.Contains(known, f) {
			return nil, fmt.Errorf("no %q (%s)", f, strings.Join(known, ", "))
		}
		out = append(out, f)
	}
	return out, nil
}

func parseConns(s string) ([]int, error) {
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%q is not a positive number of connections", f)
		}
		out = append(out, n)
	}
	return out, nil
}
