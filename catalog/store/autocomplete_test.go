package store

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/catalogd/catalogd/catalog"
	"github.com/catalogd/catalogd/catalog/store/build"
	"github.com/catalogd/catalogd/catalog/store/internal/layout"
	bolt "go.etcd.io/bbolt"
)

// scanName is a distinct name as the scan of autocomplete sees it.
type scanName struct {
	printed, folded string
	cards           [3]uint64
	romanized       [3][]string   // in each zone, its cards' romanized forms ("" for none)
	inner           [3][][]string // in each zone, beside romanized: the inner words, folded and romanized
	groupForms      []string      // of its groups: their names folded, romanized
}

// cardText is what a card is matched by: its forms, and its inner words
// (catalog.InnerWords), in which a word starts but which are no form.
type cardText struct{ forms, inner []string }

// cardForms returns the forms of each of the name's cards in the zones:
// the folded name, its romanized form in the card's language, the forms
// of its groups; and its inner words. Cards of one language are alike.
func (n *scanName) cardForms(zones []int) []cardText {
	var out []cardText
	for _, z := range zones {
		for i, r := range n.romanized[z] {
			forms := []string{n.folded}
			if r != "" {
				forms = append(forms, r)
			}
			out = append(out, cardText{append(forms, n.groupForms...), n.inner[z][i]})
		}
	}
	return out
}

// scanNames returns the distinct names of cards with their romanized
// forms in each zone and the forms of their groups (those one of whose
// names stands in the folded name as whole words).
func scanNames(cards []catalog.Card, groups [][]string) []scanName {
	byName := map[string]*scanName{}
	var out []*scanName
	groupNames := foldedGroupNames(groups)
	for _, c := range cards {
		n, ok := byName[c.Name]
		if !ok {
			f := catalog.Fold(c.Name)
			n = &scanName{printed: c.Name, folded: f}
			spellings := groupSpellings(c.Name)
			for g := range groups {
				folded := make([]string, 0, len(groups[g]))
				for _, name := range groups[g] {
					folded = append(folded, catalog.Fold(name))
				}
				if slices.ContainsFunc(folded, func(name string) bool { return holdsGroupName(spellings, name, groupNames) }) {
					for _, name := range folded {
						n.groupForms = append(n.groupForms, name)
						if r := catalog.Romanize(name, "zh"); r != "" {
							n.groupForms = append(n.groupForms, r)
						}
					}
				}
			}
			byName[c.Name] = n
			out = append(out, n)
		}
		z := catalog.ZoneIndex(c.Zone)
		n.cards[z]++
		if r := catalog.Romanize(n.folded, c.Language); !slices.Contains(n.romanized[z], r) {
			n.romanized[z] = append(n.romanized[z], r)
			var inner []string
			for _, w := range catalog.InnerWords(n.printed, n.folded) {
				inner = append(inner, w)
				if r := catalog.Romanize(w, c.Language); r != "" {
					inner = append(inner, r)
				}
			}
			n.inner[z] = append(n.inner[z], inner)
		}
	}
	names := make([]scanName, len(out))
	for i, n := range out {
		names[i] = *n
	}
	return names
}

// scanAutocomplete is what Autocomplete must answer, by a plain scan of
// every name: a name ranks by the best of its cards in the zone asked (or
// in every zone), each card by its own forms.
func scanAutocomplete(names []scanName, q AutocompleteQuery) []NameCount {
	fields := Terms(q.Q)
	// Punctuation at the end of what was typed asks nothing more.
	for len(fields) > 0 && strings.TrimRightFunc(fields[len(fields)-1], unicode.IsPunct) == "" {
		fields = fields[:len(fields)-1]
	}
	if len(fields) == 0 {
		return nil
	}
	fields[len(fields)-1] = strings.TrimRightFunc(fields[len(fields)-1], unicode.IsPunct)
	whole, last, others := strings.Join(fields, " "), fields[len(fields)-1], fields[:len(fields)-1]
	if len(others) > 0 && catalog.LeadingWord([]byte(last)) == nil {
		// A last term that starts no word (♀, ☆) is held as the others
		// are, and the term before it is completed.
		others = append(slices.Clone(others[:len(others)-1]), last)
		last = fields[len(fields)-2]
	}
	type ranked struct {
		tier  int
		count uint64
		name  *scanName
	}
	zones := []int{0, 1, 2}
	if q.Zone != "" {
		zones = []int{catalog.ZoneIndex(q.Zone)}
	}
	var found []ranked
	for i := range names {
		n := &names[i]
		var count uint64
		for _, z := range zones {
			count += n.cards[z]
		}
		tier := 3
		for _, text := range n.cardForms(zones) {
			tier = min(tier, scanTier(text, whole, last, others))
		}
		if tier < 3 {
			found = append(found, ranked{tier, count, n})
		}
	}
	slices.SortFunc(found, func(a, b ranked) int {
		return cmp.Or(cmp.Compare(a.tier, b.tier), cmp.Compare(b.count, a.count),
			strings.Compare(a.name.folded, b.name.folded), strings.Compare(a.name.printed, b.name.printed))
	})
	var out []NameCount
	for _, r := range found[:min(len(found), q.Limit)] {
		out = append(out, NameCount{Name: r.name.printed, Cards: r.count})
	}
	return out
}

// scanTier returns the tier of a card of forms all for a query: 0 when a
// form is the whole query, 1 when one starts with it, 2 when every other
// term is in a form and a word of one starts with the last, 3 when none.
func scanTier(text cardText, whole, last string, others []string) int {
	all := text.forms
	switch {
	case slices.Contains(all, whole):
		return 0
	case slices.ContainsFunc(all, func(f string) bool { return strings.HasPrefix(f, whole) }):
		return 1
	}
	withInner := slices.Concat(all, text.inner)
	holds := !slices.ContainsFunc(others, func(t string) bool {
		return !slices.ContainsFunc(withInner, func(f string) bool { return strings.Contains(f, t) })
	})
	// An inner word is one word: a prefix starts at it and ends within it.
	word := last != "" && (slices.ContainsFunc(all, func(f string) bool { return startsAtAWord(f, last) }) ||
		slices.ContainsFunc(text.inner, func(w string) bool { return strings.HasPrefix(w, last) }))
	if holds && word {
		return 2
	}
	return 3
}

// startsAtAWord reports whether prefix starts in text where a word of it
// (catalog.EachWord) does, running on past that word or not.
func startsAtAWord(text, prefix string) bool {
	b, starts := []byte(text), false
	catalog.EachWord(b, func(w []byte) { starts = starts || strings.HasPrefix(text[cap(b)-cap(w):], prefix) })
	return starts
}

// autocompleteQuery returns what a person may type: the start of a name,
// of a word of it, of its romanized form or of a name of its groups,
// after now and then a few other terms, pieces of the forms (the folded
// name, romanized, or a group's) of the same name or another.
func autocompleteQuery(rng *rand.Rand, names []scanName) string {
	n := &names[rng.IntN(len(names))]
	var all []string
	for _, text := range n.cardForms([]int{0, 1, 2}) {
		all = append(append(all, text.forms...), text.inner...)
	}
	form := []rune(all[rng.IntN(len(all))])
	var words, through []string // each word, and it with what follows it to a space
	b := []byte(string(form))
	catalog.EachWord(b, func(w []byte) {
		words = append(words, string(w))
		rest := string(b[cap(b)-cap(w):])
		through = append(through, strings.Fields(rest)[0])
	})
	var q string
	switch rng.IntN(4) {
	case 0: // the start of the whole form
		q = string(form[:1+rng.IntN(len(form))])
	case 1, 2: // the start of a word; a whole word runs on to a space (mr., ho-oh)
		if len(words) == 0 {
			return string(form)
		}
		i := rng.IntN(len(words))
		w := []rune(words[i])
		if k := 1 + rng.IntN(len(w)); k < len(w) {
			q = string(w[:k])
		} else {
			q = through[i]
		}
	default: // one character of anything
		q = string(form[rng.IntN(len(form))])
	}
	for range rng.IntN(3) {
		other := &names[rng.IntN(len(names))]
		if rng.IntN(2) == 0 {
			other = n
		}
		var forms []string
		for _, text := range other.cardForms([]int{0, 1, 2}) {
			forms = append(append(forms, text.forms...), text.inner...)
		}
		o := []rune(forms[rng.IntN(len(forms))])
		i := rng.IntN(len(o))
		q = string(o[i:i+1+rng.IntN(min(4, len(o)-i))]) + " " + q
	}
	return q
}

// TestAutocompleteAgreesWithScan compares the index's answers with a plain
// scan of the names, on the real sample and on a worst-case catalogue:
// random queries of starts of names, words, romanized forms and groups'
// names, after up to two other terms, in every zone and in each, at
// random limits.
func TestAutocompleteAgreesWithScan(t *testing.T) {
	for _, c := range oracleCatalogues(t, 4000) {
		t.Run(c.name, func(t *testing.T) { checkAutocompleteAgainstScan(t, c, 3000) })
	}
	// The others' way through the cards and, with runs of the names'
	// grams in every catalogue, through them.
	for _, grams := range []struct {
		name string
		at   int
	}{{"through-cards", math.MaxInt}, {"through-name-grams", 1}} {
		t.Run(grams.name, func(t *testing.T) { checkAutocompleteWays(t, grams.at) })
	}
}

// wayQueries is the random queries each check of the ways sends: each
// catalogue's ways are checked in eight runs of them.
const wayQueries = 600

// checkAutocompleteWays checks the ways of a query of several terms, on
// catalogues imported with build.Limits.NameGramsAt at.
func checkAutocompleteWays(t *testing.T, at int) {
	catalogues := oracleCatalogues(t, 2000)
	opened := make([]scanCatalogue, len(catalogues)) // each imported once
	for i := range catalogues {
		catalogues[i].nameGramsAt = at
		opened[i] = openToScan(t, catalogues[i])
	}
	// A query of several terms answered by each way alone, whose answers
	// the other way may otherwise give first (wordsWithOthers).
	defer func() { oneWayAlone = 0 }()
	for _, way := range []struct {
		name string
		way  int
	}{{"others-way-alone", othersOnly}, {"names-way-alone", namesOnly}} {
		oneWayAlone = way.way
		for i, c := range catalogues {
			t.Run(c.name+"/"+way.name, func(t *testing.T) {
				defer func(f func()) { tookGramNames = f }(tookGramNames)
				took := 0
				tookGramNames = func() { took++ }
				checkAnswers(t, opened[i], wayQueries)
				// Queries of several terms reach the others' way: a third of
				// them at least take the names' grams where their runs are
				// (about half do), and none where they are not.
				if grams := at == 1; grams != (3*took >= wayQueries) || !grams && took > 0 {
					t.Errorf("%d queries through the names' grams, with NameGramsAt %d", took, at)
				}
			})
		}
	}
	// The two ways in turns by a clock that moves a microsecond a reading,
	// whatever the machine does meanwhile.
	oneWayAlone = 0
	defer func(clock func() time.Duration) { turnClock = clock }(turnClock)
	var ticks time.Duration
	turnClock = func() time.Duration { ticks += time.Microsecond; return ticks }
	for i, c := range catalogues {
		t.Run(c.name+"/steady-clock", func(t *testing.T) { checkAnswers(t, opened[i], wayQueries) })
	}
	// The same with a round of the lists' walk, or a place of the names'
	// grams, a step, for a turn to end between any two.
	defer func(n, p int) { roundsAStep, gramStepPlaces = n, p }(roundsAStep, gramStepPlaces)
	roundsAStep, gramStepPlaces = 1, 1
	for i, c := range catalogues {
		t.Run(c.name+"/a-round-a-step", func(t *testing.T) { checkAnswers(t, opened[i], wayQueries) })
	}
}

func checkAutocompleteAgainstScan(t *testing.T, c oracleCatalogue, queries int) {
	checkAnswers(t, openToScan(t, c), queries)
}

// scanCatalogue is an imported catalogue with the names a scan reads.
type scanCatalogue struct {
	db    *DB
	names []scanName
}

func openToScan(t *testing.T, c oracleCatalogue) scanCatalogue {
	db := c.open(t)
	if c.nameGramsAt != 0 && db.nameGrams != (c.nameGramsAt == 1) {
		t.Fatalf("runs of the names' grams: %v, with NameGramsAt %d", db.nameGrams, c.nameGramsAt)
	}
	return scanCatalogue{db, scanNames(c.cards, c.groups)}
}

// checkAnswers sends random queries, the same each call, and compares
// the answers with the scan's.
func checkAnswers(t *testing.T, c scanCatalogue, queries int) {
	db, names := c.db, c.names
	rng := rand.New(rand.NewPCG(3, 4))
	zones := append([]string{""}, catalog.Zones()...)
	for i := range queries {
		q := AutocompleteQuery{Q: autocompleteQuery(rng, names), Zone: zones[rng.IntN(len(zones))], Limit: 1 + rng.IntN(MaxAutocompleteLimit)}
		got, err := db.Autocomplete(q)
		if err != nil {
			t.Fatalf("%+v: %v", q, err)
		}
		if want := scanAutocomplete(names, q); !slices.Equal(got, want) {
			t.Fatalf("query %d %+v:\n got %v\nwant %v", i, q, got, want)
		}
	}
}

func (n NameCount) String() string { return fmt.Sprintf("%s×%d", n.Name, n.Cards) }

// TestCardName reads a card's name from its canonical JSON, whatever its
// id and name hold.
func TestCardName(t *testing.T) {
	for _, c := range []catalog.Card{
		{ID: "intl-base1-4", Name: "Charizard"},
		{ID: `odd "id", "name": \`, Name: `Mr. "Mime" \ ピカ`},
		{ID: "x", Name: "ニドラン♀\u2028"},
	} {
		got, err := cardName(c.AppendJSON(nil))
		if err != nil || got != c.Name {
			t.Errorf("%q: %q, %v; want %q", c.ID, got, err, c.Name)
		}
	}
	for _, bad := range []string{"", `{"id":"x"}`, `{"id":"x","name":"y`, `{"name":"x"}`, `{"id":"x\`} {
		if got, err := cardName([]byte(bad)); err == nil {
			t.Errorf("%q: %q, want an error", bad, got)
		}
	}
}

// TestAutocompleteOfOddQueries: what no name holds, bytes no term should
// hold, the longest queries, answer without error and within the limit.
func TestAutocompleteOfOddQueries(t *testing.T) {
	for _, at := range []int{math.MaxInt, 1} { // without runs of the names' grams, and with
		c := oracleCatalogues(t, 500)[0]
		c.nameGramsAt = at
		// A name may hold a zero byte, and no gram with one has a run.
		odd := c.cards[0]
		odd.ID, odd.Name = odd.ID+"z", "Pika\x00chu zap"
		c.cards = append(slices.Clone(c.cards), odd)
		db := c.open(t)
		names := scanNames(c.cards, c.groups)
		for _, q := range []string{
			"\x00", "a\x00b", "a\x00b pi", "pika a\x00", "a\x00c z", "pika\x00chu z", "ka\x00c z", "\x00 z", "\xff\xfe", "!!!", "-", "ー", "mr.", "pika\xffchu", strings.Repeat("a", 200),
			strings.Repeat("ア ", 100), strings.Repeat("pikachu ", 25), "\u200b", "ﾋﾟｶ", "P", "ピ", "皮", "ピ a", "a ピ",
		} {
			for _, zone := range []string{"", "jp"} {
				q := AutocompleteQuery{Q: q, Zone: zone, Limit: 20}
				got, err := db.Autocomplete(q)
				if err != nil || len(got) > 20 {
					t.Errorf("%+v: %d names, %v", q, len(got), err)
				}
				if want := scanAutocomplete(names, q); !slices.Equal(got, want) {
					t.Errorf("%+v, NameGramsAt %d:\n got %v\nwant %v", q, at, got, want)
				}
			}
		}
		if _, err := db.Autocomplete(AutocompleteQuery{Q: "pika", Zone: "mars", Limit: 5}); err == nil {
			t.Error("zone mars: no error")
		}
	}
}

// TestAutocompleteOfADamagedIndex: values of the completions bucket
// damaged in several ways, kind by kind, make queries of one and of
// several terms, in every zone and in each, fail as a damaged catalogue
// (some of them must) or answer; none panics.
func TestAutocompleteOfADamagedIndex(t *testing.T) {
	c := oracleCatalogues(t, 2000)[2]
	names := scanNames(c.cards, c.groups)
	rng := rand.New(rand.NewPCG(5, 6))
	var queries []string
	for range 100 {
		queries = append(queries, autocompleteQuery(rng, names))
	}
	limits := build.DefaultLimits()
	limits.NameGramsAt = 1 // runs of the names' grams, to damage too
	for _, kind := range []byte{layout.CompleteNames, layout.CompleteGroup, layout.CompleteForm, layout.CompleteTop, layout.CompleteWord, layout.CompletePlace, layout.CompleteGram} {
		for _, damage := range []struct {
			name string
			fn   func(v []byte) []byte
		}{
			{"cut", func(v []byte) []byte { return v[:len(v)/2] }},
			{"overlong numbers", func(v []byte) []byte { return bytes.Repeat([]byte{0xff}, len(v)) }},
			{"bytes flipped", func(v []byte) []byte {
				v = slices.Clone(v)
				for i := range v {
					if rng.IntN(8) == 0 {
						v[i] ^= byte(1 + rng.IntN(255))
					}
				}
				return v
			}},
		} {
			t.Run(fmt.Sprintf("%c/%s", kind, damage.name), func(t *testing.T) {
				path := writeCatalogue(t, c.sets, c.cards, limits, func(w *build.Writer) {
					for _, g := range c.groups {
						if err := w.AddNames(g); err != nil {
							t.Fatal(err)
						}
					}
				})
				bdb, err := bolt.Open(path, 0o600, nil)
				if err != nil {
					t.Fatal(err)
				}
				damaged := 0
				err = bdb.Update(func(tx *bolt.Tx) error {
					b := tx.Bucket(layout.BucketCompletions)
					var keys [][]byte
					b.ForEach(func(k, _ []byte) error {
						if k[0] == kind {
							keys = append(keys, slices.Clone(k))
						}
						return nil
					})
					for _, k := range keys {
						damaged++
						if err := b.Put(k, damage.fn(b.Get(k))); err != nil {
							return err
						}
					}
					return nil
				})
				if cerr := bdb.Close(); err == nil {
					err = cerr
				}
				if err != nil || damaged == 0 {
					t.Fatalf("%d values damaged: %v", damaged, err)
				}
				db := openCatalogue(t, path)
				failed := 0
				for _, q := range queries {
					for _, zone := range append([]string{""}, catalog.Zones()...) {
						_, err := db.Autocomplete(AutocompleteQuery{Q: q, Zone: zone, Limit: 1 + rng.IntN(MaxAutocompleteLimit)})
						if err != nil && !errors.Is(err, ErrDamaged) {
							t.Fatalf("%q in %q: %v, want it called damaged", q, zone, err)
						}
						if err != nil {
							failed++
						}
					}
				}
				if failed == 0 {
					t.Errorf("no query of %d read the damage", len(queries)*4)
				}
			})
		}
	}
}

// TestWordStartsAgreesWithEachWord checks the quick test of a prefix of
// one word against the words catalog.EachWord cuts, on texts of letters
// of several scripts, digits, marks and separators.
func TestWordStartsAgreesWithEachWord(t *testing.T) {
	alphabet := []rune("ab1 -&ーアイ漢字é·.日z")
	rng := rand.New(rand.NewPCG(7, 8))
	random := func(n int) []byte {
		var b strings.Builder
		for range n {
			b.WriteRune(alphabet[rng.IntN(len(alphabet))])
		}
		return []byte(b.String())
	}
	oneWord := 0
	for range 20000 {
		prefix, text := random(1+rng.IntN(3)), random(rng.IntN(12))
		ws := newWordStarts(prefix, nil)
		if got, want := ws.text(text), startsAtAWord(string(text), string(prefix)); got != want {
			t.Fatalf("%q in %q: %v, want %v", prefix, text, got, want)
		}
		if ws.oneWord {
			oneWord++
		}
	}
	if oneWord < 5000 {
		t.Fatalf("%d prefixes of one word, want many", oneWord)
	}
}
