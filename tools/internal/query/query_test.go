package query

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTypical(t *testing.T) {
	for name, want := range map[string]string{
		"Charizard ex":         "charizard",
		"Professor's Research": "professor's",
		"ピカチュウ":                "ピカチュウ",
		"N":                    "",
		"N A":                  "n a",
		"Mr. Mime":             "mime",
	} {
		if got := Typical(name); got != want {
			t.Fatalf("Typical(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestLeadingNumber(t *testing.T) {
	for number, want := range map[string]string{"025/165": "025", "SV-P 101": "101", "TG12": "12", "H": ""} {
		if got := LeadingNumber(number); got != want {
			t.Errorf("LeadingNumber(%q) = %q, want %q", number, got, want)
		}
	}
}

// TestFragment checks that a fragment is 2 to 6 consecutive characters of
// one word of the name.
func TestFragment(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	name := "Pikachu ex ピカチュウ"
	for range 200 {
		f := Fragment(name, rng)
		if n := utf8.RuneCountInString(f); n < 2 || n > 6 || strings.Contains(f, " ") || !strings.Contains(name, f) {
			t.Fatalf("Fragment(%q) = %q", name, f)
		}
	}
	if f := Fragment("N", rng); f != "" {
		t.Fatalf("Fragment of a one-letter name = %q, want none", f)
	}
}

// TestDistinctQueriesStopsOnASmallCatalogue checks that a catalogue with
// fewer distinct queries than asked for gives what it has, without looping.
func TestDistinctQueriesStopsOnASmallCatalogue(t *testing.T) {
	cards := []Card{{Name: "Pikachu", Number: "25"}}
	got := Distinct(cards, 1000, rand.New(rand.NewPCG(1, 2)))
	if len(got) == 0 || len(got) > 30 {
		t.Fatalf("%d queries from one card: %q", len(got), got)
	}
	if !slices.Contains(got, "pikachu 25") || !slices.Contains(got, "pikachu") {
		t.Fatalf("queries %q lack the name and the name with its number", got)
	}
}
