package store

import (
	"math/rand/v2"
	"strings"
	"testing"
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
