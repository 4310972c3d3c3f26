package gen

import (
	"strings"
	"testing"
)

func TestNamesLoad(t *testing.T) {
	n, err := loadNames()
	if err != nil {
		t.Fatal(err)
	}
	for _, lang := range languages {
		if tb := n.cards[lang]; tb == nil || len(tb.entries) < 100 {
			t.Errorf("card names %s: %v", lang, tb)
		}
		if len(n.sets[lang]) < 40 {
			t.Errorf("set names %s: %d", lang, len(n.sets[lang]))
		}
	}
	if got, want := n.cards["en"].entries[0], (nameEntry{"Pikachu", 99778, true}); got != want {
		t.Errorf("first English card name %+v, want %+v", got, want)
	}
}

func TestParseNameEntriesErrors(t *testing.T) {
	for _, c := range []struct {
		name, in string
		withMon  bool
		want     string
	}{
		{"Empty", "", true, "x.tsv: empty or without a final newline"},
		{"NoFinalNewline", "Pikachu\t1\tmon", true, "x.tsv: empty or without a final newline"},
		{"EmptyLine", "Pikachu\t1\tmon\n\nEevee\t2\tmon\n", true, "x.tsv:2: empty line"},
		{"TwoColumns", "Pikachu\t1\n", true, `x.tsv:1: want 3 tab-separated columns starting with a name, found "Pikachu\t1"`},
		{"NoName", "\t1\n", false, "x.tsv:1: want 2 tab-separated columns"},
		{"ZeroWeight", "Pikachu\t0\tmon\n", true, `x.tsv:1: weight: want a positive integer, found "0"`},
		{"BadWeight", "Pikachu\t1.5\n", false, `x.tsv:1: weight: want a positive integer, found "1.5"`},
		{"BadMon", "Pikachu\t1\tyes\n", true, `x.tsv:1: third column: want "mon" or "-", found "yes"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := parseNameEntries("x.tsv", []byte(c.in), c.withMon)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one containing %q", err, c.want)
			}
		})
	}
	got, err := parseNameEntries("x.tsv", []byte("Pikachu\t3\tmon\nPotion\t2\t-\n"), true)
	if err != nil {
		t.Fatal(err)
	}
	if want := []nameEntry{{"Pikachu", 3, true}, {"Potion", 2, false}}; len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("got %+v, want %+v", got, want)
	}
}
