// Command importbench measures catalogd import on a generated snapshot: it
// writes the snapshot, times a plain encoding/json decode of it as the
// baseline, then runs the real catalogd binary on it and reports wall time,
// peak RSS and the size of the file it wrote.
//
//	go run ./internal/bench/importbench -cards 1000000
//	go run ./internal/bench/importbench -cards 10000000 -distinct
//
// -distinct generates the worst case for the search index: names that
// almost never repeat (gen.Options.DistinctNames). Peak anonymous memory is
// sampled from /proc while the import runs: it is what the import itself
// holds, where peak RSS also counts the pages of the file it writes.
//
// With -runs N it decodes and imports the same snapshot N times, each
// import timed against the decode just before it: on a shared machine the
// spread between runs says how far one figure can be trusted.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/catalogd/catalogd/internal/bench/procfs"
	"github.com/catalogd/catalogd/internal/gen"
)

func main() {
	cards := flag.Int("cards", 1_000_000, "cards in the generated snapshot")
	seed := flag.Uint64("seed", 1, "generator seed")
	keep := flag.Bool("keep", false, "keep the working directory")
	runs := flag.Int("runs", 1, "decode and import the snapshot this many times")
	distinct := flag.Bool("distinct", false, "names that almost never repeat: the worst case for the index")
	perSet := flag.Int("per-set", gen.DefaultCardsPerSet, "average cards per set")
	existing := flag.String("snapshot", "", "measure this snapshot rather than generating one")
	flag.Parse()
	if *runs < 1 {
		fmt.Fprintln(os.Stderr, "importbench: -runs must be at least 1")
		os.Exit(2)
	}
	opt := gen.Options{Cards: *cards, Seed: *seed, CardsPerSet: *perSet, DistinctNames: *distinct}
	if err := run(opt, *existing, *keep, *runs); err != nil {
		fmt.Fprintln(os.Stderr, "importbench:", err)
		os.Exit(1)
	}
}

func run(opt gen.Options, snapshot string, keep bool, runs int) error {
	dir, err := os.MkdirTemp("", "catalogd-importbench-")
	if err != nil {
		return err
	}
	if !keep {
		defer os.RemoveAll(dir)
	}
	bin := filepath.Join(dir, "catalogd")
	if err := procfs.Build(context.Background(), bin, "."); err != nil {
		return fmt.Errorf("build catalogd: %w", err)
	}

	if snapshot == "" {
		snapshot = filepath.Join(dir, "snapshot.json")
		start := time.Now()
		stats, err := gen.WriteFile(snapshot, opt)
		if err != nil {
			return err
		}
		st, err := os.Stat(snapshot)
		if err != nil {
			return err
		}
		fmt.Printf("snapshot        %d sets, %d cards, %.1f MB, generated in %s\n", stats.Sets, stats.Cards, mb(st.Size()), since(start))
	}

	for i := range runs {
		if runs > 1 {
			fmt.Printf("run %d of %d\n", i+1, runs)
		}
		if err := measure(dir, bin, snapshot); err != nil {
			return err
		}
	}
	return nil
}

// measure times one decode of snapshot with encoding/json, then one import
// of it into a new catalogue.
func measure(dir, bin, snapshot string) error {
	start := time.Now()
	n, err := decodeWithEncodingJSON(snapshot)
	if err != nil {
		return err
	}
	decode := time.Since(start)
	fmt.Printf("encoding/json   decoded %d records in %s\n", n, decode.Round(time.Millisecond))

	db := filepath.Join(dir, "catalog.db")
	if err := os.Remove(db); err != nil && !os.IsNotExist(err) {
		return err
	}
	imp := procfs.Import(context.Background(), bin, db, snapshot)
	imp.Stderr = os.Stderr
	start = time.Now()
	if err := imp.Start(); err != nil {
		return fmt.Errorf("catalogd import: %w", err)
	}
	peak := procfs.SampleMem(imp.Process.Pid)
	err = imp.Wait()
	took := time.Since(start)
	anon := peak.Stop().Anon
	if err != nil {
		return fmt.Errorf("catalogd import: %w", err)
	}
	ru := imp.ProcessState.SysUsage().(*syscall.Rusage)
	dbSt, err := os.Stat(db)
	if err != nil {
		return err
	}
	fmt.Printf("catalogd import %s wall, %.1fs user, %.1fs sys, peak RSS %.0f MB, peak RssAnon %.0f MiB, file %.0f MB\n",
		took.Round(time.Millisecond), tv(ru.Utime), tv(ru.Stime), float64(ru.Maxrss)/1024, mb(anon), mb(dbSt.Size()))
	fmt.Printf("ratio           import / encoding/json decode = %.2f\n", took.Seconds()/decode.Seconds())
	return nil
}

// The records as encoding/json would decode them: the baseline does the same
// reading work as the importer, without validation or writing.
type set struct {
	ID         string  `json:"id"`
	Code       string  `json:"code"`
	Name       string  `json:"name"`
	Zone       string  `json:"zone"`
	ReleasedOn *string `json:"releasedOn"`
	CardCount  int64   `json:"cardCount"`
}

type card struct {
	ID              string  `json:"id"`
	Name            string  `json:"name"`
	SetName         string  `json:"setName"`
	SetCode         string  `json:"setCode"`
	Number          string  `json:"number"`
	Language        string  `json:"language"`
	Year            *int64  `json:"year"`
	Variant         string  `json:"variant"`
	Rarity          *string `json:"rarity"`
	ImageURL        *string `json:"imageUrl"`
	Zone            string  `json:"zone"`
	TotalCards      *int64  `json:"totalCards"`
	Illustrator     *string `json:"illustrator"`
	MarketAID       *string `json:"marketAId"`
	MarketAPath     *string `json:"marketAPath"`
	MarketBID       *string `json:"marketBId"`
	ScanFallbackURL *string `json:"scanFallbackUrl"`
}

// decodeWithEncodingJSON streams the snapshot record by record.
func decodeWithEncodingJSON(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	dec := json.NewDecoder(bufio.NewReaderSize(f, 1<<20))
	n := 0
	if _, err := dec.Token(); err != nil { // {
		return n, err
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return n, err
		}
		if _, err := dec.Token(); err != nil { // [
			return n, err
		}
		for dec.More() {
			var err error
			if tok == "sets" {
				var s set
				err = dec.Decode(&s)
			} else {
				var c card
				err = dec.Decode(&c)
			}
			if err != nil {
				return n, err
			}
			n++
		}
		if _, err := dec.Token(); err != nil && err != io.EOF { // ]
			return n, err
		}
	}
	return n, nil
}

func mb(n int64) float64              { return float64(n) / (1 << 20) }
func since(t time.Time) time.Duration { return time.Since(t).Round(time.Millisecond) }
func tv(t syscall.Timeval) float64    { return float64(t.Sec) + float64(t.Usec)/1e6 }
