package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/catalogd/catalogd/catalog"
	"github.com/catalogd/catalogd/catalog/store/build"
	"github.com/catalogd/catalogd/catalog/store/internal/layout"
	bolt "go.etcd.io/bbolt"
)

// worstCaseSnapshot makes a catalogue whose names almost never repeat (a
// serial number and random words in Latin, kana and Han script), in many
// small sets of every zone, with printed numbers of every shape: the case
// that makes the most posting lists, and lists longer than a block.
func worstCaseSnapshot(seed uint64, cards int) (sets []catalog.Set, out []catalog.Card) {
	rng := rand.New(rand.NewPCG(seed, 7))
	word := func(lo, hi rune, n int) string {
		var b strings.Builder
		for range n {
			b.WriteRune(lo + rune(rng.IntN(int(hi-lo))))
		}
		return b.String()
	}
	numbers := []func(i int) string{
		func(i int) string { return strconv.Itoa(i) },
		func(i int) string { return fmt.Sprintf("%03d", i) },
		func(i int) string { return fmt.Sprintf("%d/%d", i, 99) },
		func(i int) string { return fmt.Sprintf("SV%03d", i) },
		func(i int) string { return string(rune('A' + i%26)) },
	}
	// Each zone's languages: names of kana are romanized in every one,
	// Han characters in Chinese names only.
	languages := map[string][2]string{catalog.ZoneIntl: {"en", "ja"}, catalog.ZoneJP: {"ja", "ja"}, catalog.ZoneCHN: {"zh-tw", "zh-cn"}}
	for len(out) < cards {
		zone := catalog.Zones()[len(sets)%3]
		code := fmt.Sprintf("S%d", len(sets))
		s := catalog.Set{ID: zone + "-" + code, Code: code, Name: "Set " + code, Zone: zone}
		if len(sets)%7 == 3 {
			s.Code = fmt.Sprintf("S%d", len(sets)-1) // the previous set's code, in another zone
			s.ID = zone + "-" + s.Code
		}
		n := 1 + rng.IntN(40)
		style := numbers[rng.IntN(len(numbers))]
		for i := 1; i <= n && len(out) < cards; i++ {
			name := fmt.Sprintf("%s %d %s %s", word('a', 'z'+1, 3+rng.IntN(4)), len(out), word('ア', 'ン', 2+rng.IntN(3)), word('一', '一'+400, 2))
			out = append(out, catalog.Card{ID: s.ID + "-" + strconv.Itoa(i), Name: name, SetName: s.Name, SetCode: s.Code,
				Number: style(i), Language: languages[zone][i%2], Variant: catalog.DefaultVariant, Zone: zone})
			s.CardCount++
		}
		sets = append(sets, s)
	}
	return sets, out
}

// writeCatalogue writes sets and cards into a new catalogue file with the
// limits l, after whatever more adds first when it is not nil (name
// groups), and returns its path.
func writeCatalogue(t *testing.T, sets []catalog.Set, cards []catalog.Card, l build.Limits, more func(w *build.Writer)) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "catalog.db")
	w, err := build.CreateWith(path, l)
	if err != nil {
		t.Fatal(err)
	}
	if more != nil {
		more(w)
	}
	for _, s := range sets {
		if err := w.AddSet(s); err != nil {
			t.Fatal(err)
		}
	}
	for i := range cards {
		if err := w.AddCard(&cards[i]); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.Finish(context.Background(), Info{Generation: "g"}); err != nil {
		t.Fatal(err)
	}
	return path
}

// buildCatalogue writes sets and cards into a new catalogue, holding at
// most postingLimit bytes of posting lists in memory, and opens it.
func buildCatalogue(t *testing.T, sets []catalog.Set, cards []catalog.Card, postingLimit int) *DB {
	t.Helper()
	l := build.DefaultLimits()
	l.Postings = postingLimit
	return openCatalogue(t, writeCatalogue(t, sets, cards, l, nil))
}

// openCatalogue opens the catalogue at path until the test ends.
func openCatalogue(t *testing.T, path string) *DB {
	t.Helper()
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// bucketContents returns every key and value of a bucket of db.
func bucketContents(t *testing.T, db *DB, bucket []byte) [][2]string {
	t.Helper()
	var out [][2]string
	err := db.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucket).ForEach(func(k, v []byte) error {
			out = append(out, [2]string{string(k), string(v)})
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestPostingsWhateverTheMemory: the posting lists built through many
// temporary runs are byte for byte those built in memory at once.
func TestPostingsWhateverTheMemory(t *testing.T) {
	sets, cards := worstCaseSnapshot(1, 3000)
	inMemory := bucketContents(t, buildCatalogue(t, sets, cards, 1<<40), layout.BucketPostings)
	spilled := bucketContents(t, buildCatalogue(t, sets, cards, 4<<10), layout.BucketPostings)
	// Runs merged two at a time, level after level.
	small := build.DefaultLimits()
	small.Postings, small.MergeFanIn = 4<<10, 2
	merged := bucketContents(t, openCatalogue(t, writeCatalogue(t, sets, cards, small, nil)), layout.BucketPostings)
	if len(inMemory) == 0 {
		t.Fatal("no posting lists")
	}
	long := 0
	for _, kv := range inMemory {
		n, w := binary.Uvarint([]byte(kv[0][1:]))
		if w > 0 && len(kv[0]) == 1+w+int(n)+4 { // a block's key: a list longer than a block
			long++
		}
	}
	if long == 0 {
		t.Fatal("no list longer than a block: the test does not read blocks")
	}
	if !slices.Equal(inMemory, spilled) {
		t.Fatalf("postings differ: %d entries in memory, %d through runs", len(inMemory), len(spilled))
	}
	if !slices.Equal(inMemory, merged) {
		t.Fatalf("postings differ: %d entries in memory, %d through runs merged two at a time", len(inMemory), len(merged))
	}
}

// scanCard is a card as the scan sees it: forms holds its folded name and
// the romanized form of that, when there is one.
type scanCard struct {
	id, zone, setCode, number string
	forms                     []string
}

// scanOrder returns the cards in result order, folded once, with the
// forms of their names: the folded name, its romanized form, and the names
// of every group one of whose names stands in the folded name as whole
// words, folded and romanized.
func scanOrder(cards []catalog.Card, groups [][]string) []scanCard {
	sorted := slices.Clone(cards)
	slices.SortFunc(sorted, func(a, b catalog.Card) int {
		return bytes.Compare(append(catalog.NumberKey(a.Number), a.ID...), append(catalog.NumberKey(b.Number), b.ID...))
	})
	folded := make([][]string, len(groups)) // each group's names, folded
	forms := make([][]string, len(groups))  // and their romanized forms too
	for i, g := range groups {
		for _, name := range g {
			folded[i] = append(folded[i], catalog.Fold(name))
			forms[i] = append(forms[i], catalog.Fold(name), catalog.Romanize(catalog.Fold(name), "zh"))
		}
	}
	names := foldedGroupNames(groups)
	out := make([]scanCard, len(sorted))
	for i, c := range sorted {
		out[i] = scanCard{id: c.ID, zone: c.Zone, setCode: c.SetCode, number: catalog.NormalizeNumber(c.Number), forms: []string{catalog.Fold(c.Name)}}
		if r := catalog.Romanize(catalog.Fold(c.Name), c.Language); r != "" {
			out[i].forms = append(out[i].forms, r)
		}
		spellings := groupSpellings(c.Name)
		for g := range groups {
			if slices.ContainsFunc(folded[g], func(n string) bool { return holdsGroupName(spellings, n, names) }) {
				out[i].forms = append(out[i].forms, forms[g]...)
			}
		}
	}
	return out
}

// groupSpellings returns the texts a card printed so holds its groups'
// names in as whole words: its folded name, and the name printed with its
// Japanese and Chinese words apart, folded (docs/CONTRACT.md, Name
// groups).
func groupSpellings(printed string) []string {
	texts := []string{catalog.Fold(printed)}
	if apart, ok := catalog.SplitUnspacedWords([]byte(printed)); ok {
		texts = append(texts, catalog.Fold(string(apart)))
	}
	return texts
}

// holdsGroupName reports whether a group's folded name stands as whole
// words in one of a card's groupSpellings, or is the longest name that
// ends a word of kana or Han of the last, after two characters or
// more, when the word is no name itself; names holds every group's
// folded names.
func holdsGroupName(spellings []string, name string, names map[string]bool) bool {
	return slices.ContainsFunc(spellings, func(s string) bool { return holdsWholeWords(s, name) }) ||
		endsAWord(spellings[len(spellings)-1], name, names)
}

// foldedGroupNames returns the set of every group's names, folded.
func foldedGroupNames(groups [][]string) map[string]bool {
	names := map[string]bool{}
	for _, g := range groups {
		for _, name := range g {
			names[catalog.Fold(name)] = true
		}
	}
	return names
}

// endsAWord reports whether name is the longest of names that ends a word
// of folded written in kana or Han, three characters or more after two or
// more, where the word is not itself one of names.
func endsAWord(folded, name string, names map[string]bool) bool {
	held := false
	catalog.EachWord([]byte(folded), func(w []byte) {
		word := []rune(string(w))
		first := slices.IndexFunc(word, func(r rune) bool { return catalog.ScriptOf(r) != 0 })
		if held || names[string(word)] || first < 0 || !unicode.In(word[first], unicode.Katakana, unicode.Hiragana, unicode.Han) {
			return
		}
		for i := 2; len(word)-i >= 3; i++ {
			if ending := string(word[i:]); names[ending] {
				held = ending == name
				return
			}
		}
	})
	return held
}

// holdsWholeWords reports whether name stands in folded as whole words:
// at some place where it starts and ends at a boundary (an end of folded,
// a separator on either side, or the start of a word at a change of
// script), and neither starts nor ends with white space.
func holdsWholeWords(folded, name string) bool {
	first, _ := utf8.DecodeRuneInString(name)
	last, _ := utf8.DecodeLastRuneInString(name)
	if name == "" || unicode.IsSpace(first) || unicode.IsSpace(last) {
		return false
	}
	bounded := func(at int) bool {
		if at == 0 || at == len(folded) {
			return true
		}
		before, _ := utf8.DecodeLastRuneInString(folded[:at])
		after, _ := utf8.DecodeRuneInString(folded[at:])
		return catalog.IsNameSeparator(before) || catalog.IsNameSeparator(after) || catalog.WordStartsAt([]byte(folded), at)
	}
	for at := 0; ; {
		i := strings.Index(folded[at:], name)
		if i < 0 {
			return false
		}
		i += at
		if bounded(i) && bounded(i+len(name)) {
			return true
		}
		_, w := utf8.DecodeRuneInString(folded[i:])
		at = i + w
	}
}

// scanSearch is what Search must answer, by a plain scan of every card.
func scanSearch(cards []scanCard, sets []catalog.Set, q SearchQuery) []string {
	byID := slices.ContainsFunc(sets, func(s catalog.Set) bool { return s.ID == q.Set })
	terms := Terms(q.Q)
	var out []string
	for _, c := range cards {
		if len(out) == q.Limit || len(terms) == 0 {
			break
		}
		if q.Zone != "" && c.zone != q.Zone {
			continue
		}
		if q.Set != "" && ((byID && c.zone+"-"+c.setCode != q.Set) || (!byID && c.setCode != q.Set)) {
			continue
		}
		ok := true
		for _, term := range terms {
			inName := slices.ContainsFunc(c.forms, func(form string) bool { return strings.Contains(form, term) })
			if !inName && c.number != catalog.NormalizeNumber(term) {
				ok = false
				break
			}
		}
		if ok {
			out = append(out, c.id)
		}
	}
	return out
}

// sampleGroups are name groups of Pokémon of the sample, in the languages
// of the shipped groups.
var sampleGroups = [][]string{
	{"Pikachu", "ピカチュウ", "皮卡丘", "Пикачу"},
	{"Charizard", "リザードン", "噴火龍", "喷火龙", "Glurak"},
	{"Bulbasaur", "フシギダネ", "妙蛙種子", "妙蛙种子"},
	{"Mew", "ミュウ", "夢幻", "梦幻"},
	{"Mewtwo", "ミュウツー", "超夢", "超梦"},
	{"Raichu", "ライチュウ", "雷丘"},
	{"Eevee", "イーブイ", "伊布", "Evoli"},
}

// worstCaseGroups makes name groups of the words of worst-case names: the
// Latin, kana and Han words of one card (which whole words of many cards
// may share), and now and then a part of a word, which stands in no name
// as whole words.
func worstCaseGroups(cards []catalog.Card) [][]string {
	rng := rand.New(rand.NewPCG(5, 6))
	var groups [][]string
	for range 300 {
		words := strings.Fields(cards[rng.IntN(len(cards))].Name) // latin, number, kana, han
		g := []string{words[0], words[2], words[3]}
		if rng.IntN(5) == 0 {
			g[rng.IntN(3)] = string([]rune(g[0])[:2])
		}
		if rng.IntN(7) == 0 {
			g = append(g, words[0]+" "+words[1]) // two words
		}
		groups = append(groups, g)
	}
	return groups
}

// TestSearchAgreesWithScan compares the index's answers with a plain scan,
// on the real sample and on a worst-case catalogue whose lists went
// through temporary runs: random queries of 1 to 100 terms made of pieces
// of names, of their romanized forms and of the names of name groups (one
// character or more) and of numbers, with and without a zone
// and a set filter, at random limits.
func TestSearchAgreesWithScan(t *testing.T) {
	// Walks that took a gram more after refusals, in every catalogue:
	// those of names that repeat refuse few cards.
	afterRefusals := 0
	defer func() {
		if afterRefusals < 15 {
			t.Errorf("%d walks took a gram more after refusals: too few to compare", afterRefusals)
		}
	}()
	for _, c := range oracleCatalogues(t, 4000) {
		for _, walk := range []struct {
			name  string
			dense uint64
		}{{"", math.MaxUint64}, {"Windowed", 1}} {
			t.Run(c.name+walk.name, func(t *testing.T) {
				db := c.open(t)
				db.denseList = walk.dense
				ordered := scanOrder(c.cards, c.groups)
				rng := rand.New(rand.NewPCG(3, 4))
				// Pieces of one card's name and number, so that a query of
				// many terms can match, and now and then of another card's.
				var base catalog.Card
				var foreign bool
				piece := func() string {
					card := base
					if foreign && rng.IntN(8) == 0 {
						card = c.cards[rng.IntN(len(c.cards))]
					}
					if rng.IntN(4) == 0 {
						return card.Number
					}
					name := []rune(card.Name)
					if r := catalog.Romanize(catalog.Fold(card.Name), card.Language); r != "" && rng.IntN(3) == 0 {
						name = []rune(r) // a piece of its romanized form
					}
					if len(c.groups) > 0 && rng.IntN(4) == 0 {
						g := c.groups[rng.IntN(len(c.groups))]
						name = []rune(g[rng.IntN(len(g))]) // a piece of a group's name
						if rng.IntN(2) == 0 {
							name = []rune(catalog.Romanize(catalog.Fold(string(name)), "zh") + " " + string(name))
						}
					}
					// Mostly of up to four characters, now and then of up
					// to nine: more grams than the two a walk starts with.
					long := 4
					if rng.IntN(2) == 0 {
						long = 9
					}
					start := rng.IntN(len(name))
					end := start + 1 + rng.IntN(min(long, len(name)-start))
					return string(name[start:end])
				}
				setRefs := []string{"nope"}
				for range 6 {
					s := c.sets[rng.IntN(len(c.sets))]
					setRefs = append(setRefs, s.ID, s.Code)
				}
				zones := append([]string{""}, catalog.Zones()...)
				found, fromStart := 0, 0
				defer func(n int, took func(bool)) { refusalsBeforeMoreGrams, tookMoreGrams = n, took }(refusalsBeforeMoreGrams, tookMoreGrams)
				tookMoreGrams = func(after bool) {
					if after {
						afterRefusals++
					} else {
						fromStart++
					}
				}
				for i := range 400 {
					// Every other query's walks take every gram from the
					// start, and the others a gram more at each card they
					// refuse.
					refusalsBeforeMoreGrams = i % 2
					terms := 1 + rng.IntN(3)
					switch i % 10 {
					case 8:
						terms = 10 + rng.IntN(20)
					case 9:
						terms = 100
					}
					base, foreign = c.cards[rng.IntN(len(c.cards))], rng.IntN(2) == 0
					var parts []string
					for range terms {
						p := piece()
						if i%5 == 0 {
							r, _ := utf8.DecodeRuneInString(p)
							p = string(r) // one character
						}
						parts = append(parts, p)
					}
					q := SearchQuery{Q: strings.Join(parts, " "), Zone: zones[rng.IntN(len(zones))], Limit: 1 + rng.IntN(100)}
					if rng.IntN(3) == 0 {
						q.Set = setRefs[rng.IntN(len(setRefs))]
					}
					if agreesWithScan(t, db, ordered, c.sets, q) {
						found++
					}
				}
				if found < 100 {
					t.Errorf("only %d of 400 queries found a card: too few to compare", found)
				}
				if fromStart < 5 {
					t.Errorf("of 400 queries' walks, %d took more grams from the start: too few to compare", fromStart)
				}
			})
		}
	}
}

// agreesWithScan searches q, fails the test unless the index finds what
// scanSearch finds, and reports whether that is a card or more.
func agreesWithScan(t *testing.T, db *DB, ordered []scanCard, sets []catalog.Set, q SearchQuery) bool {
	t.Helper()
	var got []string
	if err := db.Search(q, func(card []byte) { got = append(got, cardIDOf(t, card)) }); err != nil {
		t.Fatal(err)
	}
	want := scanSearch(ordered, sets, q)
	if !slices.Equal(got, want) {
		t.Fatalf("%+v:\n index %q\n  scan %q", q, got, want)
	}
	return len(want) > 0
}

// oracleCatalogue is a catalogue the search oracles compare on: its
// records and name groups.
type oracleCatalogue struct {
	name   string
	sets   []catalog.Set
	cards  []catalog.Card
	groups [][]string
	// nameGramsAt, when not 0, is the import's build.Limits.NameGramsAt:
	// 1 for runs of the names' grams whatever the names, MaxInt for none.
	nameGramsAt int
}

// oracleCatalogues returns the sample with the groups of its Pokémon, a
// worst case of worstCards cards in several scripts, with groups, and an
// eighth as many cards whose names are printed in several zones.
func oracleCatalogues(t *testing.T, worstCards int) []oracleCatalogue {
	sampleSets, sampleCards := sampleSnapshot(t)
	worstSets, worst := worstCaseSnapshot(2, worstCards)
	sharedSets, shared := sharedNamesSnapshot(3, worstCards/8)
	return []oracleCatalogue{
		{name: "Sample", sets: sampleSets, cards: sampleCards, groups: sampleGroups},
		{name: "WorstCase", sets: worstSets, cards: worst, groups: worstCaseGroups(worst)},
		{name: "SharedNames", sets: sharedSets, cards: shared, groups: worstCaseGroups(shared)},
	}
}

// sharedNamesSnapshot makes a worst case whose names are drawn from an
// eighth as many: most names are printed in several zones, some as many
// times in two of them, and some in languages that romanize them apart;
// half of them end in one word, whose run holds many places. A fifth
// end in the kana word of the name before them after a modifier (メガ),
// so that a group of that word is held where it ends a longer word.
func sharedNamesSnapshot(seed uint64, cards int) ([]catalog.Set, []catalog.Card) {
	sets, out := worstCaseSnapshot(seed, cards)
	rng := rand.New(rand.NewPCG(seed, 9))
	names := make([]string, max(1, cards/8))
	for i := range names {
		names[i] = out[i].Name
		if i%5 == 1 {
			names[i] += " メガ" + strings.Fields(out[i-1].Name)[2]
		}
		if i%2 == 0 {
			names[i] += " ex"
		}
	}
	for i := range out {
		out[i].Name = names[rng.IntN(len(names))]
	}
	return sets, out
}

// open writes the catalogue, its posting lists in many runs, and opens
// it.
func (c oracleCatalogue) open(t *testing.T) *DB {
	small := build.DefaultLimits()
	small.Postings, small.RunSort, small.PlaceSort = 16<<10, 16<<10, 4<<10
	if c.nameGramsAt != 0 {
		small.NameGramsAt = c.nameGramsAt
	}
	return openCatalogue(t, writeCatalogue(t, c.sets, c.cards, small, func(w *build.Writer) {
		for _, g := range c.groups {
			if err := w.AddNames(g); err != nil {
				t.Fatal(err)
			}
		}
	}))
}

// randomText returns up to max-1 characters drawn from alphabet.
func randomText(rng *rand.Rand, alphabet []rune, max int) []rune {
	text := make([]rune, rng.IntN(max))
	for i := range text {
		text[i] = alphabet[rng.IntN(len(alphabet))]
	}
	return text
}

// cardIDOf reads the id of a card's canonical JSON, which starts with it.
func cardIDOf(t *testing.T, card []byte) string {
	t.Helper()
	const prefix = `{"id":"`
	rest, ok := bytes.CutPrefix(card, []byte(prefix))
	end := bytes.IndexByte(rest, '"')
	if !ok || end < 0 {
		t.Fatalf("card JSON %.60q does not start with its id", card)
	}
	return string(rest[:end])
}

// A term's two lists are its rarest gram's and the gram that shares the
// fewest characters with it: not its next rarest neighbour, which is found
// with it on every card that holds the two together.
func TestSearchPlanTakesGramsApart(t *testing.T) {
	repeat := func(name string, n int) []string { return slices.Repeat([]string{name}, n) }
	names := slices.Concat(
		// Of the trigrams of "700797", "700" is the rarest and "007" the
		// next, held with "079" by the cards named "0079"; "797", the
		// longest list, shares no character with "700".
		[]string{"700797"}, repeat("q700", 2), repeat("0079", 3), []string{"r079"}, repeat("s797", 5),
		// "cde" of "abcdefg" is on that card alone, "bcd" the next rarest;
		// "abc" and "efg" each share one character with "cde", and "efg"
		// is the rarer.
		[]string{"abcdefg"}, repeat("bcdx", 1), repeat("xefg", 2), repeat("xabc", 3), repeat("defx", 4),
		// "nop", the last trigram of "mnmnmnop", is on that card alone,
		// "mno" the next rarest. "mnm" and "nmn" come twice before "nop",
		// and the first "nmn" shares no character with it: a gram's place
		// counts the repeats.
		[]string{"mnmnmnop"}, repeat("ymnoy", 1), repeat("ynmn", 2), repeat("ymnmy", 9),
	)
	db, _ := oneSetNamed(t, names)
	for _, c := range []struct {
		term string
		want [2]string // the grams
	}{
		{"700797", [2]string{"700", "797"}},
		{"abcdefg", [2]string{"cde", "efg"}},
		{"mnmnmnop", [2]string{"nop", "nmn"}},
	} {
		var got []string
		err := db.read(func(r *reader) error {
			p := planSearch(r, nil, searchTerms(c.term), db.longestName, dictionary{})
			for _, l := range p.terms[0].byName {
				got = append(got, string(l.key))
			}
			return p.damaged
		})
		if err != nil {
			t.Fatal(err)
		}
		want := []string{string(layout.AppendListKey(nil, layout.GramKinds[3], c.want[0])), string(layout.AppendListKey(nil, layout.GramKinds[3], c.want[1]))}
		if !slices.Equal(got, want) {
			t.Errorf("lists of %q: got %q, want %q", c.term, got, want)
		}
	}
}

// oneSetNamed builds a catalogue of one set whose cards bear names, in
// that order, and returns it with its cards.
func oneSetNamed(t *testing.T, names []string) (*DB, []catalog.Card) {
	t.Helper()
	set := catalog.Set{ID: "intl-S1", Code: "S1", Name: "Set S1", Zone: "intl"}
	var cards []catalog.Card
	for i, name := range names {
		cards = append(cards, catalog.Card{ID: fmt.Sprintf("intl-S1-%d", i+1), Name: name, SetName: set.Name, SetCode: set.Code,
			Number: strconv.Itoa(i + 1), Language: "en", Variant: catalog.DefaultVariant, Zone: set.Zone})
		set.CardCount++
	}
	return buildCatalogue(t, []catalog.Set{set}, cards, 0), cards
}

// A walk reads few of the cards that hold a term's two grams apart but
// not the term: after refusalsBeforeMoreGrams of them it takes the
// rarest gram it lacks, and walks on from where it stands.
func TestSearchTakesMoreGramsAfterRefusals(t *testing.T) {
	// "abc" and "def", the two grams apart of "abcdef", meet on the cards
	// named "abcxdef" and on those named "abcdef"; "bcd" and "cde" are
	// each on more cards, but together only on those. In result order:
	// a result, the refusals that take a gram more, a result right after
	// them, the other refusals, and a last result.
	refusals := refusalsBeforeMoreGrams
	names := slices.Concat([]string{"abcdef"}, slices.Repeat([]string{"abcxdef"}, refusals), []string{"abcdef"},
		slices.Repeat([]string{"abcxdef"}, 100), slices.Repeat([]string{"bcdy"}, 150), slices.Repeat([]string{"ycde"}, 150), []string{"abcdef"})
	db, cards := oneSetNamed(t, names)
	want := []string{cards[0].ID, cards[refusals+1].ID, cards[len(cards)-1].ID}
	terms := searchTerms("abcdef")
	defer func(n int) { refusalsBeforeMoreGrams = n }(refusalsBeforeMoreGrams)
	for _, dense := range []uint64{math.MaxUint64, 1} {
		db.denseList = dense
		// Two grams alone read every card that holds both; three, past
		// the refusals, the results.
		for _, c := range []struct{ refusals, read int }{{refusals, 3 + refusals}, {len(names), 3 + refusals + 100}} {
			refusalsBeforeMoreGrams = c.refusals
			read, found := 0, []string{}
			err := db.read(func(r *reader) error {
				p, err := db.plan(r, nil, terms)
				if err != nil {
					return err
				}
				walks := db.zoneWalks(r, p, -1, nil, false, true)
				return merge(walks, func(e *layout.IndexEntry) bool {
					read++
					return matches(e, terms, &r.groupTexts)
				}, func(e *layout.IndexEntry) (bool, error) {
					found = append(found, string(e.ID))
					return true, nil
				})
			})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(found, want) || read != c.read {
				t.Errorf("lists dense from %d, a gram more after %d refusals: found %q in %d cards read, want %q in %d", dense, c.refusals, found, read, want, c.read)
			}
		}
	}
}

// A block of a posting list that is not as the import writes them (a
// damaged file) fails the search, naming the list, rather than giving the
// results the walk could read before it.
func TestSearchReportsADamagedList(t *testing.T) {
	sets, cards := worstCaseSnapshot(1, 3000)
	path := writeCatalogue(t, sets, cards, build.DefaultLimits(), nil)
	for _, damage := range []struct {
		name  string
		value []byte
	}{
		{"a block of no known kind", []byte{7, 1, 2, 3}},
		{"a delta is not a number", []byte{layout.BlockDeltas, 0x80}},
		{"a block ends below its last ordinal", []byte{layout.BlockDeltas}},
		{"its length is not a number", []byte{0x80}}, // the list's own key
	} {
		t.Run(damage.name, func(t *testing.T) {
			// The first block of the longest list of a name's characters
			// gets the damage; a search for those characters reads it
			// first.
			var term string
			db := damageFile(t, path, func(tx *bolt.Tx) error {
				var first []byte
				longest := 0
				lists := map[string]int{}
				c := tx.Bucket(layout.BucketPostings).Cursor()
				for k, _ := c.First(); k != nil; k, _ = c.Next() {
					n, w := binary.Uvarint(k[1:])
					if (k[0] != layout.PostingRune && k[0] != layout.PostingGram && k[0] != layout.PostingTrigram) || w <= 0 || len(k) != 1+w+int(n)+4 {
						continue // not a block of a list of characters
					}
					text := string(k[1+w : 1+w+int(n)])
					if lists[text]++; lists[text] > longest {
						longest, term = lists[text], text
						first = nil
					}
					if text == term && first == nil {
						first = slices.Clone(k)
					}
				}
				if first == nil {
					return errors.New("no list of characters in blocks")
				}
				if damage.value[0] == 0x80 {
					first = first[:len(first)-4] // the list's key: its length
				}
				return tx.Bucket(layout.BucketPostings).Put(first, damage.value)
			})
			found := 0
			err := db.Search(SearchQuery{Q: term, Limit: 1000}, func([]byte) { found++ })
			if !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), "search index damaged") || !strings.Contains(err.Error(), damage.name) {
				t.Fatalf("search %q over the damaged block: %d results, err = %v; want the damage named", term, found, err)
			}
			// The next search on the same reader is not blamed for it.
			if err := db.Search(SearchQuery{Q: "zzzzzzzz", Limit: 10}, func([]byte) {}); err != nil {
				t.Errorf("a search that reads no damaged list: %v", err)
			}
		})
	}
}
