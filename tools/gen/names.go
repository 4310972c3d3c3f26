package gen

import (
	"bytes"
	"embed"
	"fmt"
	"strconv"
	"strings"
)

// The files of names/ are drawn from testdata/catalogue-real.json.gz; how,
// and the command that writes them again, are in names/README.md.
//
//go:embed names/*.tsv names/*.txt
var namesFS embed.FS

// languages are the card languages of the generated zones, in the order of
// the names/ file suffixes.
var languages = [...]string{"en", "ja", "zh-tw", "zh-cn"}

// names is everything the generator draws from names/: card names and set
// names per language, and illustrators. It is built once and only read.
type names struct {
	cards        map[string]*nameTable
	sets         map[string][]string
	illustrators *nameTable
}

// loadNames parses names/. The files are part of the binary, so an error
// here means a file was edited into a bad shape. Each Write parses them
// again (well under a millisecond) rather than keep them in a package
// variable.
func loadNames() (*names, error) {
	n := &names{cards: map[string]*nameTable{}, sets: map[string][]string{}}
	for _, lang := range languages {
		entries, err := readNameEntries("names/cards-"+lang+".tsv", true)
		if err != nil {
			return nil, err
		}
		n.cards[lang] = newNameTable(entries)
		if n.sets[lang], err = readLines("names/sets-" + lang + ".txt"); err != nil {
			return nil, err
		}
	}
	entries, err := readNameEntries("names/illustrators.tsv", false)
	if err != nil {
		return nil, err
	}
	n.illustrators = newNameTable(entries)
	return n, nil
}

// readLines returns the lines of an embedded file.
func readLines(path string) ([]string, error) {
	b, err := namesFS.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("gen: %w", err)
	}
	return splitLines(path, b)
}

// splitLines splits a names/ file, which must end in a newline and hold no
// empty line.
func splitLines(path string, b []byte) ([]string, error) {
	body, ok := bytes.CutSuffix(b, []byte("\n"))
	if !ok || len(body) == 0 {
		return nil, fmt.Errorf("gen: %s: empty or without a final newline", path)
	}
	lines := strings.Split(string(body), "\n")
	for i, l := range lines {
		if l == "" {
			return nil, fmt.Errorf("gen: %s:%d: empty line", path, i+1)
		}
	}
	return lines, nil
}

// readNameEntries reads an embedded table of names and weights.
func readNameEntries(path string, withMon bool) ([]nameEntry, error) {
	b, err := namesFS.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("gen: %w", err)
	}
	return parseNameEntries(path, b, withMon)
}

// parseNameEntries parses "name<TAB>weight" lines, with a third column
// "mon" or "-" when withMon is set.
func parseNameEntries(path string, b []byte, withMon bool) ([]nameEntry, error) {
	lines, err := splitLines(path, b)
	if err != nil {
		return nil, err
	}
	cols := 2
	if withMon {
		cols = 3
	}
	out := make([]nameEntry, len(lines))
	for i, l := range lines {
		f := strings.Split(l, "\t")
		if len(f) != cols || f[0] == "" {
			return nil, fmt.Errorf("gen: %s:%d: want %d tab-separated columns starting with a name, found %q", path, i+1, cols, l)
		}
		w, err := strconv.ParseUint(f[1], 10, 64)
		if err != nil || w == 0 {
			return nil, fmt.Errorf("gen: %s:%d: weight: want a positive integer, found %q", path, i+1, f[1])
		}
		e := nameEntry{name: f[0], weight: w}
		if withMon {
			switch f[2] {
			case "mon":
				e.mon = true
			case "-":
			default:
				return nil, fmt.Errorf("gen: %s:%d: third column: want \"mon\" or \"-\", found %q", path, i+1, f[2])
			}
		}
		out[i] = e
	}
	return out, nil
}
