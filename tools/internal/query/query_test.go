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

// TestMistyped checks that only the longest term changes, by at most the
// edits a fuzzy search forgives for its length, and most often by some.
func TestMistyped(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for q, edits := range map[string]int{"pika": 0, "charizard ex": 2, "pikachu 25": 1, "ex pikachu": 1, "ピカチュウ v": 1, "n a": 0} {
		changed := 0
		for range 200 {
			got := Mistyped(q, rng)
			want, gotTerms := strings.Fields(q), strings.Fields(got)
			if len(gotTerms) != len(want) {
				t.Fatalf("Mistyped(%q) = %q: terms lost", q, got)
			}
			longest := 0
			for i := range want {
				longest = max(longest, utf8.RuneCountInString(want[i]))
			}
			for i := range want {
				d := editDistance([]rune(want[i]), []rune(gotTerms[i]))
				if d > 0 && (utf8.RuneCountInString(want[i]) < longest || d > edits) {
					t.Fatalf("Mistyped(%q) = %q: %q is %d edits from %q", q, got, gotTerms[i], d, want[i])
				}
			}
			if got != q {
				changed++
			}
		}
		if edits > 0 && changed < 180 || edits == 0 && changed > 0 {
			t.Errorf("Mistyped(%q) changed %d of 200 queries, for %d edits", q, changed, edits)
		}
	}
}

// editDistance is the Damerau-Levenshtein distance: insertions, deletions,
// substitutions and swaps of two neighbours, where edits may overlap, as
// Mistyped's do (so two of them are never more than 2 apart).
func editDistance(a, b []rune) int {
	last := map[rune]int{} // the last row of a where a letter was seen
	inf := len(a) + len(b)
	d := make([][]int, len(a)+2)
	for i := range d {
		d[i] = make([]int, len(b)+2)
	}
	d[0][0] = inf
	for i := 0; i <= len(a); i++ {
		d[i+1][0], d[i+1][1] = inf, i
	}
	for j := 0; j <= len(b); j++ {
		d[0][j+1], d[1][j+1] = inf, j
	}
	for i := 1; i <= len(a); i++ {
		lastMatch := 0 // the last column of b in this row that matched
		for j := 1; j <= len(b); j++ {
			k, l := last[b[j-1]], lastMatch
			cost := 1
			if a[i-1] == b[j-1] {
				cost, lastMatch = 0, j
			}
			d[i+1][j+1] = min(d[i][j]+cost, d[i+1][j]+1, d[i][j+1]+1, d[k][l]+(i-k-1)+1+(j-l-1))
		}
		last[a[i-1]] = i
	}
	return d[len(a)+1][len(b)+1]
}

func TestEditDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{{"", "abc", 3}, {"abc", "abc", 0}, {"ca", "abc", 2}, {"charizard", "chazrard", 2}, {"pikachu", "pkiachu", 1}, {"pikachu", "pikach", 1}} {
		if got := editDistance([]rune(c.a), []rune(c.b)); got != c.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}
