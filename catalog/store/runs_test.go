package store

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/catalogd/catalogd/catalog/store/internal/layout"
)

// TestSearchOfRunsAgreesWithScan searches names full of runs of short
// patterns (8888, 1212121, abcabc, アアア) for runs of every pattern, length
// and phase, alone or with more characters around them: the lists of runs
// give what a scan gives.
func TestSearchOfRunsAgreesWithScan(t *testing.T) {
	sets, cards := worstCaseSnapshot(2, 2000)
	rng := rand.New(rand.NewPCG(13, 14))
	patterns := []string{"8", "1", "12", "21", "88a", "abc", "ア", "アイ", "a", "ab"}
	run := func() string {
		p := []rune(patterns[rng.IntN(len(patterns))])
		n := 1 + rng.IntN(26)
		phase := rng.IntN(len(p))
		var b strings.Builder
		for i := range n {
			b.WriteRune(p[(phase+i)%len(p)])
		}
		return b.String()
	}
	for i := range cards {
		cards[i].Name = run() + " " + cards[i].Name + " x" + run() + "y"
	}
	c := oracleCatalogue{name: "Runs", sets: sets, cards: cards}
	db := c.open(t)
	ordered := scanOrder(c.cards, nil)
	found := 0
	for i := range 600 {
		q := run()
		switch i % 4 {
		case 1:
			q = "x" + q
		case 2:
			q += "y"
		case 3:
			q += " " + run()
		}
		if agreesWithScan(t, db, ordered, sets, SearchQuery{Q: q, Limit: 1 + rng.IntN(200)}) {
			found++
		}
	}
	if found < 200 {
		t.Errorf("only %d of 600 queries found a card: too few to compare", found)
	}
}

// TestEachRun finds the maximal runs of short patterns, by their least
// rotation.
func TestEachRun(t *testing.T) {
	for text, want := range map[string][]string{
		"8888":           {"8:4"},
		"888":            nil,
		"x88888y 1111":   {"8:5", "1:4"},
		"2121212":        {"12:7"},
		"21212":          nil,
		"bcabcabca":      {"abc:9"},
		"1212 1212":      nil,
		"アアアアアア":         {"ア:6"},
		"ab ab ab ab ab": nil,
	} {
		var got []string
		layout.EachRun([]byte(text), func(p []rune, n int) { got = append(got, string(p)+":"+itoa(n)) })
		if !slices.Equal(got, want) {
			t.Errorf("runs of %q: %q, want %q", text, got, want)
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
