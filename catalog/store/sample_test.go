package store

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/catalogd/catalogd/catalog"
	"github.com/catalogd/catalogd/data"
)

// maxFuzzLen bounds the inputs worth the fuzzer's time, as catalog's
// fuzz targets do.
const maxFuzzLen = 4096

// sampleSnapshot decodes the built-in sample snapshot.
func sampleSnapshot(tb testing.TB) (sets []catalog.Set, cards []catalog.Card) {
	tb.Helper()
	var snap struct {
		Sets  []catalog.Set  `json:"sets"`
		Cards []catalog.Card `json:"cards"`
	}
	if err := json.Unmarshal(data.Sample(), &snap); err != nil || len(snap.Sets) == 0 || len(snap.Cards) == 0 {
		tb.Fatalf("the sample snapshot: %d sets, %d cards, %v", len(snap.Sets), len(snap.Cards), err)
	}
	return snap.Sets, snap.Cards
}

// FuzzSearchTermNumberKey checks that a search term, folded once, has the
// number key catalog.NumberKey gives its text, which folds again: a number
// typed as printed finds its card. The seeds are the sample's numbers and
// those catalog's FuzzNumberKey starts from.
func FuzzSearchTermNumberKey(f *testing.F) {
	_, cards := sampleSnapshot(f)
	seen := map[string]bool{}
	for _, c := range cards {
		if !seen[c.Number] {
			seen[c.Number] = true
			f.Add(c.Number)
		}
	}
	for _, n := range []string{"TG02", "025/165", "112/102", "SV-P", "０２５／１６５", "a\x00", "a\x01b", "1" + strings.Repeat("0", 300), "9" + strings.Repeat("9", 254), "", "/", " 7 "} {
		f.Add(n)
	}
	f.Fuzz(func(t *testing.T, n string) {
		if len(n) > maxFuzzLen {
			return // a query is at most 200 code points: longer inputs only slow the fuzzer
		}
		for _, term := range searchTerms(n) {
			if want := catalog.NumberKey(string(term.text)); term.number != string(want) {
				t.Fatalf("search term %q of %q has number key %x, NumberKey gives %x", term.text, n, term.number, want)
			}
		}
	})
}
