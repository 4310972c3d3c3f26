package store

import (
	"encoding/binary"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/blevesearch/vellum"
	"github.com/catalogd/catalogd/catalog"
	"github.com/catalogd/catalogd/catalog/store/build"
	"github.com/catalogd/catalogd/catalog/store/internal/layout"
)

// TestFuzzySearchAgreesWithScan checks fuzzy search against a plain scan
// of every card that applies the rules of docs/CONTRACT.md, Typos, with an
// edit distance of its own: on generated catalogues in several scripts
// with name groups, words of the cards mistyped at random, the answers
// are the same cards in the same order.
func TestFuzzySearchAgreesWithScan(t *testing.T) {
	for _, c := range oracleCatalogues(t, 3000) {
		t.Run(c.name, func(t *testing.T) {
			db := c.open(t)
			ordered := scanOrder(c.cards, c.groups)
			rng := rand.New(rand.NewPCG(5, 6))
			// A word of a card's forms (its name, romanized form or a
			// group's name), mistyped by up to two edits, or a piece of a
			// name as an exact search would take it.
			var base scanCard
			word := func() string {
				card := base
				if rng.IntN(8) == 0 {
					card = ordered[rng.IntN(len(ordered))]
				}
				var words []string
				for _, f := range card.forms {
					catalog.EachWord([]byte(f), func(w []byte) { words = append(words, string(w)) })
				}
				if long := slices.DeleteFunc(slices.Clone(words), func(w string) bool { return len([]rune(w)) < 5 }); len(long) > 0 && rng.IntN(4) > 0 {
					words = long // a word that may be mistyped
				}
				w := []rune(words[rng.IntN(len(words))])
				// Mostly as many edits as the word's length allows, now
				// and then one more.
				edits := 0
				switch {
				case len(w) >= 9:
					edits = 1 + rng.IntN(2)
				case len(w) >= 5:
					edits = 1
				}
				if rng.IntN(6) == 0 {
					edits++
				}
				for range edits {
					w = mistype(rng, w)
				}
				return string(w)
			}
			zones := append([]string{""}, catalog.Zones()...)
			found, typos := 0, 0
			defer func(n int) { refusalsBeforeMoreGrams = n }(refusalsBeforeMoreGrams)
			for i := range 400 {
				// Every other query's walk of the cards that match as
				// typed takes every gram from the start.
				refusalsBeforeMoreGrams = i % 2 * 8
				base = ordered[rng.IntN(len(ordered))]
				var parts []string
				for range 1 + rng.IntN(3)*rng.IntN(2) {
					parts = append(parts, word())
				}
				q := SearchQuery{Q: strings.Join(parts, " "), Zone: zones[rng.IntN(len(zones))], Limit: 1 + rng.IntN(60), Fuzzy: true}
				if i%7 == 0 {
					q.Limit = 1000 // every result
				}
				var got []string
				if err := db.Search(q, func(card []byte) { got = append(got, cardIDOf(t, card)) }); err != nil {
					t.Fatal(err)
				}
				want, edits := scanFuzzy(ordered, q)
				if !slices.Equal(got, want) {
					t.Fatalf("%+v:\n index %q\n  scan %q", q, got, want)
				}
				if len(want) > 0 {
					found++
				}
				if edits > 0 {
					typos++
				}
				// Without fuzzy, the answer is the exact search's.
				q.Fuzzy = false
				var exact []string
				if err := db.Search(q, func(card []byte) { exact = append(exact, cardIDOf(t, card)) }); err != nil {
					t.Fatal(err)
				}
				if want := scanSearch(ordered, nil, q); !slices.Equal(exact, want) {
					t.Fatalf("%+v:\n index %q\n  scan %q", q, exact, want)
				}
			}
			if found < 150 || typos < 50 {
				t.Errorf("%d of 400 queries found a card, %d with typos: too few to compare", found, typos)
			}
		})
	}
}

// mistype makes one random edit of w: an insertion, a deletion, a
// substitution or a swap of two neighbours.
func mistype(rng *rand.Rand, w []rune) []rune {
	letters := []rune("abcdehikmnoprstuzアイカドンリー火龍")
	i := rng.IntN(len(w) + 1)
	switch rng.IntN(4) {
	case 0:
		return slices.Insert(slices.Clone(w), i, letters[rng.IntN(len(letters))])
	case 1:
		if i < len(w) && len(w) > 1 {
			return slices.Delete(slices.Clone(w), i, i+1)
		}
	case 2:
		if i < len(w) {
			w = slices.Clone(w)
			w[i] = letters[rng.IntN(len(letters))]
			return w
		}
	default:
		if i+1 < len(w) {
			w = slices.Clone(w)
			w[i], w[i+1] = w[i+1], w[i]
			return w
		}
	}
	return w
}

// scanFuzzy answers a fuzzy search by reading every card: a term matches
// a card exactly as in scanSearch, or, when it may be mistyped, is within
// its edits of a word of the card's forms; the cards that match every term
// are ordered by the sum of edits, then in result order. It also returns
// the edits of the first result.
func scanFuzzy(cards []scanCard, q SearchQuery) ([]string, int) {
	terms := Terms(q.Q)
	slices.Sort(terms)
	terms = slices.Compact(terms)
	type result struct {
		id    string
		edits int
	}
	var out []result
	for _, c := range cards {
		if q.Zone != "" && c.zone != q.Zone {
			continue
		}
		sum, ok := 0, true
		for _, term := range terms {
			if slices.ContainsFunc(c.forms, func(form string) bool { return strings.Contains(form, term) }) || c.number == catalog.NormalizeNumber(term) {
				continue
			}
			allowed := 0
			if n := len([]rune(term)); n >= 5 && !strings.ContainsAny(term, "0123456789") {
				allowed = 1
				if n >= 9 {
					allowed = 2
				}
			}
			best := allowed + 1
			t := []rune(term)
			for _, f := range c.forms {
				catalog.EachWord([]byte(f), func(w []byte) {
					word := []rune(string(w))
					// A word more characters longer or shorter than the
					// edits allowed is further than them: not measured.
					if len(word) >= 4 && abs(len(word)-len(t)) <= allowed && !strings.ContainsAny(string(w), "0123456789") {
						best = min(best, osaDistance(t, word))
					}
				})
			}
			if best > allowed {
				ok = false
				break
			}
			sum += best
		}
		if ok {
			out = append(out, result{c.id, sum})
		}
	}
	slices.SortStableFunc(out, func(a, b result) int { return a.edits - b.edits })
	var ids []string
	for _, r := range out[:min(len(out), q.Limit)] {
		ids = append(ids, r.id)
	}
	if len(out) == 0 {
		return ids, 0
	}
	return ids, out[0].edits
}

// osaDistance is the edit distance of a and b by insertions, deletions,
// substitutions and swaps of two neighbours, no character edited twice
// (the optimal string alignment distance).
func osaDistance(a, b []rune) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

// TestEditAutomatonAgreesWithDistance checks the automaton a fuzzy search
// walks the dictionary with against osaDistance, on random words of a few
// letters of several scripts: it accepts a word exactly when the distance
// is within its edits, and tells that distance.
func TestEditAutomatonAgreesWithDistance(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	letters := []rune("abcdアイカ火龍é")
	random := func(n int) []rune {
		w := make([]rune, n)
		for i := range w {
			w[i] = letters[rng.IntN(len(letters))]
		}
		return w
	}
	accepted := 0
	for range 300 {
		term := random(1 + rng.IntN(10))
		edits := 1 + rng.IntN(2)
		a := newEditAutomaton([]byte(string(term)), edits)
		for range 200 {
			word := random(rng.IntN(12))
			if rng.IntN(2) == 0 {
				word = slices.Clone(term)
				for range rng.IntN(4) {
					word = mistype(rng, word)
				}
			}
			want := osaDistance(term, word)
			got, ok := a.distance([]byte(string(word)))
			if ok != (want <= edits) || ok && got != want {
				t.Fatalf("%q within %d of %q: automaton says %d, %v; the distance is %d", string(word), edits, string(term), got, ok, want)
			}
			if ok {
				accepted++
			}
		}
	}
	if accepted < 5000 {
		t.Errorf("only %d words accepted: too few to compare", accepted)
	}
}

// TestEachWord splits folded names into words where catalog.EachWholeWords sets
// their bounds: white space, punctuation, symbols and changes of script.
func TestEachWord(t *testing.T) {
	for text, want := range map[string][]string{
		"dark charizard":     {"dark", "charizard"},
		"リザードンex":            {"リザードン", "ex"},
		"nidoran♀ ex":        {"nidoran", "ex"},
		"mr. mime":           {"mr", "mime"},
		"pikachu2 v-union":   {"pikachu2", "v", "union"},
		"  ピカチュウ pikachuu  ": {"ピカチュウ", "pikachuu"},
		"皮卡丘pikaqiu":         {"皮卡丘", "pikaqiu"},
		"":                   nil,
		"...":                nil,
	} {
		var got []string
		catalog.EachWord([]byte(text), func(w []byte) { got = append(got, string(w)) })
		if !slices.Equal(got, want) {
			t.Errorf("words of %q: %q, want %q", text, got, want)
		}
	}
	// Every word is a run of whole words, and the runs of one word are
	// its words.
	rng := rand.New(rand.NewPCG(9, 10))
	chars := []rune("ab1 .-♀アカ火é")
	for range 2000 {
		text := randomText(rng, chars, 12)
		var words, runs []string
		catalog.EachWord([]byte(string(text)), func(w []byte) { words = append(words, string(w)) })
		catalog.EachWholeWords([]byte(string(text)), 100, func(w []byte) {
			if !strings.ContainsFunc(string(w), catalog.IsNameSeparator) {
				runs = append(runs, string(w))
			}
		})
		for _, w := range words {
			if !slices.Contains(runs, w) {
				t.Fatalf("%q: word %q is not a run of whole words %q", string(text), w, runs)
			}
		}
	}
}

// TestNearWordsAgreesWithScan checks the walk of the dictionary, cut in
// halves, against every word of it: on random names of a small alphabet
// (so that many are near each other), with random terms and typos of
// them, it finds exactly the words within edits of the term. The words
// are those of the names' search texts, found apart from the import; the
// dictionary it writes must hold each of them, and no other.
func TestNearWordsAgreesWithScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	// Words of one script each: a change of script ends a word. ø folds
	// to itself, a letter of two bytes.
	alphabets := [][]rune{[]rune("abcø"), []rune("アイウ")}
	random := func(n int) []rune {
		letters := alphabets[rng.IntN(len(alphabets))]
		w := make([]rune, n)
		for i := range w {
			w[i] = letters[rng.IntN(len(letters))]
		}
		return w
	}
	sets := []catalog.Set{{ID: "intl-W", Code: "W", Name: "Words", Zone: catalog.ZoneIntl}}
	var cards []catalog.Card
	want := map[string]bool{} // the words of the names' search texts: the kana's romanized forms too
	for i := range 3000 {
		c := card(fmt.Sprint(i), catalog.ZoneIntl, "W", "Words", fmt.Sprint(i))
		c.Name = string(random(4 + rng.IntN(6)))
		cards = append(cards, *c)
		catalog.EachWord([]byte(catalog.NewIndexText(c.Name, c.Language).Text), func(w []byte) {
			if layout.DictWord(w) {
				want[string(w)] = true
			}
		})
	}
	db := openCatalogue(t, writeCatalogue(t, sets, cards, build.DefaultLimits(), nil))
	got := map[string]bool{}
	for _, pieces := range db.words.forward {
		for _, fst := range pieces {
			it, err := fst.Iterator(nil, nil)
			for err == nil {
				word, _ := it.Current()
				got[string(word)] = true
				err = it.Next()
			}
			if err != vellum.ErrIteratorDone {
				t.Fatal(err)
			}
		}
	}
	if !maps.Equal(got, want) {
		t.Fatalf("the dictionary holds %d words, the names %d", len(got), len(want))
	}
	// Each name is a word of one script, and its own folded form.
	for _, c := range cards {
		if !got[catalog.Fold(c.Name)] {
			t.Fatalf("the dictionary lacks the name %q", c.Name)
		}
	}
	var words [][]rune
	for _, w := range slices.Sorted(maps.Keys(want)) {
		words = append(words, []rune(w))
	}
	dict := db.words
	found := 0
	for range 300 {
		term := slices.Clone(words[rng.IntN(len(words))])
		for range rng.IntN(3) {
			term = mistype(rng, term)
		}
		edits := maxEdits([]byte(string(term)))
		if edits == 0 {
			continue
		}
		near, err := nearWords(dict, newEditAutomaton([]byte(string(term)), edits))
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]int{}
		for _, w := range near {
			got[string(w.word)] = w.edits
		}
		want := map[string]int{}
		for _, w := range words {
			if d := osaDistance(term, w); d <= edits && d > 0 {
				want[string(w)] = d
			}
		}
		if !maps.Equal(got, want) {
			t.Fatalf("words within %d of %q: %v, want %v", edits, string(term), got, want)
		}
		found += len(want)
	}
	if found < 300 {
		t.Errorf("only %d near words in all: too few to compare", found)
	}
}

// TestFuzzySearchOfOddTerms searches with terms a client may send that no
// word is like: nothing panics, nothing fails, and what is found is what
// the scan finds.
func TestFuzzySearchOfOddTerms(t *testing.T) {
	c := oracleCatalogues(t, 500)[0]
	db := c.open(t)
	ordered := scanOrder(c.cards, c.groups)
	for _, q := range []string{
		"\xff\xfe\xfd\xfc\xfb", "pika\xffchu", strings.Repeat("ピ", 200), strings.Repeat("abcdefghij", 20),
		"e\u0301e\u0301e\u0301e\u0301e\u0301", "!!!!! ?????", "ー ー ー ー ー", "ｐｉｋａｃｈｕｕ", "𠀋𠀋𠀋𠀋𠀋𠀋𠀋𠀋𠀋",
		"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "ababababab", strings.TrimSpace(strings.Repeat("pikac ", 33)),
	} {
		sq := SearchQuery{Q: q, Limit: 100, Fuzzy: true}
		var got []string
		if err := db.Search(sq, func(card []byte) { got = append(got, cardIDOf(t, card)) }); err != nil {
			t.Fatalf("%q: %v", q, err)
		}
		if want, _ := scanFuzzy(ordered, sq); !slices.Equal(got, want) {
			t.Errorf("%q:\n index %q\n  scan %q", q, got, want)
		}
	}
}

// TestFuzzyCheckKeepsBoundedNames: the names whose edits the terms of a
// query keep stop at keptNameBytes for all its terms together, however
// many distinct names its walk checks, and a name checked again after
// that is measured again, alike.
func TestFuzzyCheckKeepsBoundedNames(t *testing.T) {
	terms := searchTerms("charzard blastiose")
	markTypos(terms)
	var groups groupTexts
	for i := range 20_000 {
		for j := range terms {
			name := []byte(fmt.Sprintf("charizard blastoise %d with a name long enough", i))
			edits, ok := terms[j].nearest(&layout.IndexEntry{Name: name}, &groups)
			if !ok || edits != 1 {
				t.Fatalf("%s: edits %d, %v; want 1", name, edits, ok)
			}
		}
	}
	kept := len(terms[0].typo.nameEdits) + len(terms[1].typo.nameEdits)
	if *terms[0].typo.kept > keptNameBytes || len(terms[1].typo.nameEdits) == 0 || kept >= 40_000 {
		t.Fatalf("kept %d names of %d bytes, want some of each term's, of at most %d bytes in all", kept, *terms[0].typo.kept, keptNameBytes)
	}
	if edits, ok := terms[0].nearest(&layout.IndexEntry{Name: []byte("charizard blastoise 19999 with a name long enough")}, &groups); !ok || edits != 1 {
		t.Fatalf("a name not kept, again: edits %d, %v; want 1", edits, ok)
	}
}

// TestFuzzyCheckKeepsEachGroupApart: the edits kept of a group are that
// group's, among groups whose texts are near the term and far from it in
// turn.
func TestFuzzyCheckKeepsEachGroupApart(t *testing.T) {
	terms := searchTerms("charzard")
	markTypos(terms)
	groups := groupTexts{read: make(map[uint32][]byte)}
	for id := range uint32(64) {
		groups.read[id] = []byte("blastoise kamex")
		if id%3 == 0 {
			groups.read[id] = []byte("charizard lizardon")
		}
	}
	for round := range 2 {
		for id := range uint32(64) {
			e := &layout.IndexEntry{Name: []byte("pikachu"), Groups: binary.AppendUvarint(nil, uint64(id))}
			edits, ok := terms[0].nearest(e, &groups)
			if want := id%3 == 0; ok != want || ok && edits != 1 {
				t.Fatalf("round %d, group %d: edits %d, %v; want %v", round, id, edits, ok, want)
			}
		}
	}
}
