package server

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/catalogd/catalogd/catalog"
	"github.com/catalogd/catalogd/catalog/store"
)

// searchCard is a card of the fixture's snapshots as encoding/json reads it.
type searchCard struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	SetCode  string `json:"setCode"`
	Number   string `json:"number"`
	Zone     string `json:"zone"`
	Language string `json:"language"`
}

func (f *fixture) search(t *testing.T, query string) []cardJSON {
	t.Helper()
	return onlyData[cardJSON](t, f, "/catalog/search?"+query)
}

// onlyData returns the data of a GET of target, which must be 200 with
// data alone.
func onlyData[T any](t *testing.T, f *fixture, target string) []T {
	t.Helper()
	r := f.get(target)
	r.wantStatus(t, http.StatusOK)
	var envelope map[string]json.RawMessage
	r.json(t, &envelope)
	if len(envelope) != 1 || envelope["data"] == nil {
		t.Fatalf("%s: envelope %s, want only data", target, r.body)
	}
	var data []T
	if err := json.Unmarshal(envelope["data"], &data); err != nil {
		t.Fatal(err)
	}
	return data
}

// nameHolds reports whether the card's name, in lower case or romanized
// (kana as romaji, a Chinese name's Han characters as pinyin), holds term.
func nameHolds(c cardJSON, term string) bool {
	return strings.Contains(strings.ToLower(c.Name), term) || strings.Contains(catalog.Romanize(catalog.Fold(c.Name), c.Language), term)
}

func TestSearchMatching(t *testing.T) {
	f := newFixture(t)
	cases := []struct {
		query string
		check func(c cardJSON) bool
		min   int
	}{
		{"q=pikachu", func(c cardJSON) bool { return nameHolds(c, "pikachu") }, 1},
		{"q=chu", func(c cardJSON) bool { return nameHolds(c, "chu") }, 1},
		{"q=PIKACHU", func(c cardJSON) bool { return nameHolds(c, "pikachu") }, 1},
		{"q=%E3%81%B4%E3%81%8B", func(c cardJSON) bool { return strings.Contains(c.Name, "ピカ") }, 1}, // ぴか
		{"q=%E3%83%94%E3%82%AB", func(c cardJSON) bool { return strings.Contains(c.Name, "ピカ") }, 1}, // ピカ
		{"q=%E7%9A%AE%E5%8D%A1", func(c cardJSON) bool { return strings.Contains(c.Name, "皮卡") }, 1}, // 皮卡
		{"q=charizard+4", func(c cardJSON) bool {
			return nameHolds(c, "charizard") && (catalog.NormalizeNumber(c.Number) == "4" || strings.Contains(c.Name, "4"))
		}, 1},
		{"q=025", func(c cardJSON) bool {
			return catalog.NormalizeNumber(c.Number) == "25" || strings.Contains(c.Name, "025")
		}, 5},
		{"q=%EF%BD%90%EF%BD%89%EF%BD%8B%EF%BD%81", func(c cardJSON) bool { return nameHolds(c, "pika") }, 1}, // full-width ｐｉｋａ
	}
	for _, c := range cases {
		got := f.search(t, c.query+"&limit=100")
		if len(got) < c.min {
			t.Errorf("?%s: %d results, want at least %d", c.query, len(got), c.min)
		}
		for _, card := range got {
			if !c.check(card) {
				t.Errorf("?%s: %s %q (number %q) should not match", c.query, card.ID, card.Name, card.Number)
			}
		}
	}
	if got := f.search(t, "q=zzzqqqxx"); len(got) != 0 {
		t.Errorf("a term that matches nothing found %d cards", len(got))
	}
	// The number term must equal the number, not merely contain it.
	for _, card := range f.search(t, "q=charizard+4&limit=100") {
		if n := catalog.NormalizeNumber(card.Number); n != "4" && !strings.Contains(card.Name, "4") {
			t.Errorf("charizard 4 found %s numbered %s", card.ID, card.Number)
		}
	}
}

func TestSearchFilters(t *testing.T) {
	f := newFixture(t)
	for _, zone := range catalog.Zones() {
		for _, card := range f.search(t, "q=on&limit=100&zone="+zone) {
			if card.Zone != zone {
				t.Errorf("zone=%s found %s of zone %s", zone, card.ID, card.Zone)
			}
		}
	}
	// set by id, by code in every zone, by code in one zone.
	bySet := func(query string) map[string]bool {
		zones := map[string]bool{}
		for _, c := range f.search(t, query) {
			if c.SetCode != "SV1a" {
				t.Errorf("?%s found %s of set %s", query, c.ID, c.SetCode)
			}
			zones[c.Zone] = true
		}
		return zones
	}
	if z := bySet("q=01&set=SV1a&limit=100"); !z["jp"] || !z["chn"] || len(z) != 2 {
		t.Errorf("set=SV1a (a code in jp and chn): zones %v", z)
	}
	if z := bySet("q=01&set=chn-SV1a&limit=100"); !z["chn"] || len(z) != 1 {
		t.Errorf("set=chn-SV1a: zones %v", z)
	}
	if z := bySet("q=01&set=SV1a&zone=jp&limit=100"); !z["jp"] || len(z) != 1 {
		t.Errorf("set=SV1a&zone=jp: zones %v", z)
	}
	// An unknown set, or a set outside the zone: 200 and no cards.
	for _, q := range []string{"q=01&set=nope", "q=01&set=chn-SV1a&zone=jp", "q=01&set=base1&zone=chn"} {
		if got := f.search(t, q); len(got) != 0 {
			t.Errorf("?%s: %d cards, want none", q, len(got))
		}
	}
	// limit: default 25, at most limit, and a prefix of a longer answer.
	long := f.search(t, "q=on&limit=100")
	def := f.search(t, "q=on")
	if len(long) != 100 || len(def) != 25 {
		t.Fatalf("limit=100 gave %d, default gave %d", len(long), len(def))
	}
	if !slices.Equal(ids(def, cardID), ids(long[:25], cardID)) {
		t.Error("the default answer is not the first 25 of the longer one")
	}
	if got := f.search(t, "q=on&limit=1"); len(got) != 1 || got[0].ID != long[0].ID {
		t.Errorf("limit=1: %v", ids(got, cardID))
	}
}

func TestSearchOrder(t *testing.T) {
	f := newFixture(t)
	// The names of the odd set with an "e", in printed-number order:
	// 1 < 2 < TG02 < 3 = 03 (then id) < 10 < 112/102.
	got := ids(f.search(t, "q=e+e&set=intl-odd%20set%2F%C3%BC&limit=100"), cardID)
	want := []string{"intl-odd-a", "intl-odd 2", "intl-odd-?", "intl-odd-b", "intl-odd-d", "intl-odd/10", "intl-odd-%2F"}
	if !slices.Equal(got, want) {
		t.Errorf("order:\n got %q\nwant %q", got, want)
	}
	var keys [][]byte
	for _, c := range f.search(t, "q=on&limit=100") {
		keys = append(keys, append(catalog.NumberKey(c.Number), c.ID...))
	}
	if !slices.IsSortedFunc(keys, bytes.Compare) {
		t.Error("results are not in printed-number order, then id")
	}
}

func TestSearchParameterRules(t *testing.T) {
	f := newFixture(t)
	long := strings.Repeat("ピ", 201)
	cases := []struct {
		query  string
		params []string
	}{
		{"", []string{"q"}},
		{"zone=jp", []string{"q"}},
		{"q=", []string{"q"}},
		{"q=a", []string{"q"}},
		{"q=+a+", []string{"q"}},                 // trimmed to one character
		{"q=%E3%80%80a%E3%80%80", []string{"q"}}, // ideographic spaces trimmed too
		{"q=" + url.QueryEscape(long), []string{"q"}},
		{"q=%FF%FE", []string{"q"}}, // not UTF-8
		{"q=ab&q=cd", []string{"q"}},
		{"q=ab&zone=mars", []string{"zone"}},
		{"q=ab&zone=", []string{"zone"}},
		{"q=ab&zone=JP", []string{"zone"}},
		{"q=ab&set=" + strings.Repeat("x", 51), []string{"set"}},
		{"q=ab&set=", []string{"set"}},
		{"q=ab&limit=0", []string{"limit"}},
		{"q=ab&limit=101", []string{"limit"}},
		{"q=ab&limit=1.5", []string{"limit"}},
		{"q=ab&limit=%2B5", []string{"limit"}},
		{"q=ab&limit=", []string{"limit"}},
		{"q=ab&limit=1&limit=2", []string{"limit"}},
		{"q=a&zone=mars&limit=0", []string{"q", "zone", "limit"}},
		{"q=%zz", []string{"(query string)"}},
		{"q=charzard&fuzzy=yes", []string{"fuzzy"}},
		{"q=charzard&fuzzy=1", []string{"fuzzy"}},
		{"q=charzard&fuzzy=TRUE", []string{"fuzzy"}},
		{"q=charzard&fuzzy=", []string{"fuzzy"}},
		{"q=charzard&fuzzy=true&fuzzy=true", []string{"fuzzy"}},
	}
	for _, c := range cases {
		r := f.get("/catalog/search?" + c.query)
		r.wantStatus(t, http.StatusBadRequest)
		var p problem
		r.json(t, &p)
		var named []string
		for _, e := range p.Errors {
			named = append(named, e.Parameter)
		}
		if !slices.Equal(named, c.params) {
			t.Errorf("?%s: errors name %q, want %q", c.query, named, c.params)
		}
	}
	// At the limits: 2 and 200 characters, counted in code points.
	for _, q := range []string{"ピカ", strings.Repeat("ピ", 200), "+ab+", "ab&set=" + strings.Repeat("ü", 50), "ab&limit=100&zone=chn&unknown=1", "ab&fuzzy=false", strings.Repeat("ピ", 200) + "&fuzzy=true", strings.Repeat("abcdefghij", 20) + "&fuzzy=true"} {
		f.search(t, "q="+q)
	}
}

// TestFuzzySearch searches the real catalogue with typos: a term of five
// to eight characters one edit from a word of a name, of nine or more two
// edits (docs/CONTRACT.md, Typos).
func TestFuzzySearch(t *testing.T) {
	f := newFixtureAt(t, realCatalogue(t), nil)
	for _, c := range []struct{ query, meant string }{
		{"charzard", "charizard"},  // a letter dropped
		{"blastiose", "blastoise"}, // two neighbours swapped
		{"gengarr", "gengar"},      // a letter added
		{"pikachy", "pikachu"},     // a letter changed
		{"charizzrd", "charizard"}, // nine letters, two edits
		{"bulbasuar", "bulbasaur"}, // nine letters, one swap
	} {
		if got := f.search(t, "q="+c.query+"&zone=intl"); len(got) != 0 {
			t.Errorf("?q=%s without fuzzy: %d cards, want none", c.query, len(got))
		}
		got := f.search(t, "q="+c.query+"&zone=intl&fuzzy=true&limit=100")
		if len(got) == 0 {
			t.Errorf("?q=%s&fuzzy=true: no card, want %s", c.query, c.meant)
		}
		for _, card := range got {
			if !nameHolds(card, c.meant) {
				t.Errorf("?q=%s&fuzzy=true: %s %q, want a card named %s", c.query, card.ID, card.Name, c.meant)
			}
		}
	}
	// pikachuu is ピカチュウ's romaji, and so matches Pikachu as typed,
	// through its name group; fuzzy or not, the answer is the same.
	typed := f.search(t, "q=pikachuu&zone=intl&limit=100")
	if len(typed) == 0 || !nameHolds(typed[0], "pikachu") {
		t.Errorf("?q=pikachuu: %d cards, want Pikachu", len(typed))
	}
	if fuzzy := f.search(t, "q=pikachuu&zone=intl&limit=100&fuzzy=true"); !slices.EqualFunc(fuzzy, typed, func(a, b cardJSON) bool { return a.ID == b.ID }) {
		t.Errorf("?q=pikachuu&fuzzy=true: %d cards, want the %d of the search as typed", len(fuzzy), len(typed))
	}
	// Pinyin's ü is written v (绿 lv): lü and lu find 鋁鋼龍, lvganglong,
	// only as a typo (docs/CONTRACT.md, Search).
	for _, q := range []string{"luganglong", "l%C3%BCganglong"} {
		if got := f.search(t, "q="+q+"&zone=chn"); len(got) != 0 {
			t.Errorf("?q=%s without fuzzy: %d cards, want none", q, len(got))
		}
		if got := f.search(t, "q="+q+"&zone=chn&fuzzy=true"); len(got) == 0 || got[0].Name != "鋁鋼龍" {
			t.Errorf("?q=%s&fuzzy=true: %d cards, want 鋁鋼龍 first", q, len(got))
		}
	}
	// In Japanese too: リザードン with サ for ザ, which is two edits
	// from リザード.
	rizadon := f.search(t, "q="+url.QueryEscape("リサードン")+"&zone=jp&fuzzy=true&limit=100")
	if len(rizadon) == 0 {
		t.Error("?q=リサードン&fuzzy=true: no card, want リザードン")
	}
	for _, card := range rizadon {
		if !strings.Contains(card.Name, "リザードン") {
			t.Errorf("?q=リサードン&fuzzy=true: %s %q, want リザードン", card.ID, card.Name)
		}
	}
	// Four letters are too few for a typo: onyx is not Onix.
	if got := f.search(t, "q=onyx&fuzzy=true"); len(got) != 0 {
		t.Errorf("?q=onyx&fuzzy=true: %d cards, want none", len(got))
	}
	// Exact matches first: Golbat as typed, then Golett, whose German
	// name Golbit is one edit from golbat.
	exact := f.search(t, "q=golbat&zone=intl&limit=100")
	fuzzy := f.search(t, "q=golbat&zone=intl&limit=100&fuzzy=true")
	if len(exact) == 0 || len(fuzzy) <= len(exact) {
		t.Fatalf("?q=golbat: %d cards as typed, %d fuzzy; want more fuzzy", len(exact), len(fuzzy))
	}
	if !slices.EqualFunc(fuzzy[:len(exact)], exact, func(a, b cardJSON) bool { return a.ID == b.ID }) {
		t.Errorf("?q=golbat&fuzzy=true: the exact matches do not come first")
	}
	for _, card := range fuzzy[len(exact):] {
		if !nameHolds(card, "golett") {
			t.Errorf("?q=golbat&fuzzy=true: %s %q after the exact matches, want Golett", card.ID, card.Name)
		}
	}
	// fuzzy=false is the search without the parameter.
	if got := f.search(t, "q=golbat&zone=intl&limit=100&fuzzy=false"); !slices.EqualFunc(got, exact, func(a, b cardJSON) bool { return a.ID == b.ID }) {
		t.Errorf("?q=golbat&fuzzy=false: %d cards, want the %d without it", len(got), len(exact))
	}
}

// foundCard is a card a search finds among its first hundred answers: the
// query string's q and filters, the card's id and its printed name.
type foundCard struct{ query, id, name string }

// expectFound searches f for each card's query and fails for each card
// not among the answers.
func (f *fixture) expectFound(t *testing.T, want []foundCard) {
	t.Helper()
	for _, c := range want {
		got := f.search(t, "q="+c.query+"&limit=100")
		if !slices.ContainsFunc(got, func(card cardJSON) bool { return card.ID == c.id && card.Name == c.name }) {
			t.Errorf("?q=%s: %d cards, none %s %s", c.query, len(got), c.id, c.name)
		}
	}
}

// TestSearchFindsNamesBesideParticles searches the real catalogue across
// languages for cards whose Japanese or Chinese names hold a species' name
// beside hiragana or 的, or at the end of a word after what modifies it,
// with no space (docs/CONTRACT.md, Name groups), and checks that a name
// inside a katakana or Han word is not taken for the species it holds.
func TestSearchFindsNamesBesideParticles(t *testing.T) {
	f := newFixtureAt(t, realCatalogue(t), nil)
	f.expectFound(t, []foundCard{
		{"charizard&zone=jp", "jp-PMCG4-017", "わるいリザードン"},
		{"charizard&zone=jp", "jp-PMCG6-032", "カツラのリザードン"},
		{"mewtwo&zone=jp", "jp-SV10-039", "ロケット団のミュウツーex"},
		{"mewtwo&zone=jp", "jp-SM3p-040", "ミュウツーGX"},
		{"zorua&zone=chn", "chn-SV9-060", "N的索羅亞"},
		{"charizard&zone=jp", "jp-M2-013", "メガリザードンXex"}, // Mega Charizard X ex
		{"vulpix&zone=jp", "jp-SM2K-012", "アローラロコン"},     // Alolan Vulpix
		{"rotom&zone=jp", "jp-SM5S-021", "ヒートロトム"},       // Heat Rotom
		{"charizard&zone=chn", "chn-S10b-011", "光輝噴火龍"},  // Radiant Charizard
		{"calyrex&zone=chn", "chn-S6H-027", "白馬蕾冠王V"},    // Ice Rider Calyrex
	})
	for _, c := range []struct{ query, inside string }{
		{"snubbull&zone=jp", "ブルーノ"},     // ブルー, inside Bruno
		{"chansey&zone=jp", "ラッキーエネルギー"}, // ラッキー, inside Lucky Energy
		{"ekans&zone=jp", "ルアーボール"},      // アーボ, inside Lure Ball
		{"eevee&zone=chn", "仙子伊布"},       // 伊布, inside Sylveon
		{"raticate&zone=jp", "コラッタ"},     // ラッタ ends Rattata, the longest name
		{"charmeleon&zone=jp", "カリザード"},  // リザード, after one character
	} {
		for _, card := range f.search(t, "q="+c.query+"&limit=100") {
			if strings.Contains(card.Name, c.inside) {
				t.Errorf("?q=%s: %s %q, whose name holds the species only inside a word", c.query, card.ID, card.Name)
			}
		}
	}
}

// TestSearchFindsTheChineseNamesPrinted searches the real catalogue for
// species whose Chinese names on the cards are newer than those of the
// npm package the name groups come from (data/names.sh takes them from
// the cards printed in both jp and chn): each finds its chn cards, and the
// printed Chinese name finds the intl cards.
func TestSearchFindsTheChineseNamesPrinted(t *testing.T) {
	f := newFixtureAt(t, realCatalogue(t), nil)
	f.expectFound(t, []foundCard{
		{"hawlucha&zone=chn", "chn-SC1b-128", "摔角鷹人"},
		{"sylveon&zone=chn", "chn-S10b-035", "仙子伊布"},
		{"palkia&zone=chn", "chn-S8a-009", "帕路奇亞"},
		{"palkia&zone=chn", "chn-S10P-022", "起源帕路奇亞V"}, // Origin Forme Palkia V
		{"tyranitar&zone=chn", "chn-SC2b-054", "班基拉斯"},
		{"porygon2&zone=chn", "chn-S6H-053", "多邊獸Ⅱ"},
		{url.QueryEscape("摔角鹰人") + "&zone=intl", "intl-xy3-63", "Hawlucha"}, // typed in simplified
		{url.QueryEscape("班基拉斯") + "&zone=intl", "intl-neo2-12", "Tyranitar"},
	})
}

// TestSearchFindsNamesPrintedWithASpace: the real catalogue prints
// Nidoran ♀ and Nidoran ♂ both with and without a space before the
// symbol, and data/names.sh puts both spellings in the species' group: a
// name of the group, in any script, finds the cards of both.
func TestSearchFindsNamesPrintedWithASpace(t *testing.T) {
	f := newFixtureAt(t, realCatalogue(t), nil)
	for _, c := range []struct{ query, unspaced, spaced string }{
		{"ニドラン♀", "Nidoran♀", "Nidoran ♀"},
		{"nidoran♀", "Nidoran♀", "Nidoran ♀"},
		{"尼多朗", "Nidoran♂", "Nidoran ♂"},
	} {
		found := map[string]int{}
		for _, card := range f.search(t, "q="+url.QueryEscape(c.query)+"&zone=intl&limit=100") {
			found[card.Name]++
		}
		if found[c.unspaced] == 0 || found[c.spaced] == 0 {
			t.Errorf("?q=%s&zone=intl: %d %s and %d %s cards, want some of each", c.query, found[c.unspaced], c.unspaced, found[c.spaced], c.spaced)
		}
	}
}

// TestSearchFoldsTypographicApostrophes searches the real catalogue,
// whose names are printed with both apostrophes, with each: one answer
// (docs/CONTRACT.md, Search, Folding).
func TestSearchFoldsTypographicApostrophes(t *testing.T) {
	f := newFixtureAt(t, realCatalogue(t), nil)
	for _, name := range []string{"brock's grit", "giovanni's exile", "erika's hospitality"} {
		ascii := f.search(t, "q="+url.QueryEscape(name)+"&limit=100")
		typographic := f.search(t, "q="+url.QueryEscape(strings.ReplaceAll(name, "'", "’"))+"&limit=100")
		if !slices.EqualFunc(ascii, typographic, func(a, b cardJSON) bool { return a.ID == b.ID }) {
			t.Errorf("%s: %d cards typed with ', %d with ’; want the same", name, len(ascii), len(typographic))
		}
		if !slices.ContainsFunc(ascii, func(c cardJSON) bool { return strings.Contains(c.Name, "’") }) {
			t.Errorf("?q=%s: no card printed with ’ among %d", name, len(ascii))
		}
	}
}

// TestSearchFoldsTraditionalChinese searches the real catalogue, whose
// Chinese names are printed in traditional characters but for a few in
// simplified ones, with each form of a term: one answer, the cards printed
// in either (docs/CONTRACT.md, Search, Folding). Autocomplete answers the
// same names to both.
func TestSearchFoldsTraditionalChinese(t *testing.T) {
	f := newFixtureAt(t, realCatalogue(t), nil)
	ids := func(cards []cardJSON) []string {
		out := make([]string, len(cards))
		for i, c := range cards {
			out[i] = c.ID
		}
		return out
	}
	for _, c := range []struct{ traditional, simplified, printedSimplified string }{
		{"精靈球", "精灵球", ""},
		{"寶可夢", "宝可梦", ""},
		{"惡能量", "恶能量", "chn-CSMPiC-022"}, // 基本恶能量
		{"古茲馬", "古兹马", "chn-CSMPiC-026"},
		{"空木博士的指導", "空木博士的指导", "chn-CSMPiC-030"},
	} {
		want := f.search(t, "q="+url.QueryEscape(c.traditional)+"&zone=chn&limit=100")
		got := f.search(t, "q="+url.QueryEscape(c.simplified)+"&zone=chn&limit=100")
		if !slices.Equal(ids(got), ids(want)) {
			t.Errorf("%s: %d cards, %s: %d; want the same", c.traditional, len(want), c.simplified, len(got))
		}
		if c.printedSimplified == "" && !slices.ContainsFunc(want, func(card cardJSON) bool { return strings.Contains(card.Name, c.traditional) }) {
			t.Errorf("?q=%s: none of %d cards printed so", c.traditional, len(want))
		}
		if c.printedSimplified != "" && !slices.Contains(ids(want), c.printedSimplified) {
			t.Errorf("?q=%s: %v, want %s, printed in simplified characters", c.traditional, ids(want), c.printedSimplified)
		}
	}
	for _, c := range [][2]string{{"寶可", "宝可"}, {"精靈", "精灵"}, {"基本惡", "基本恶"}, {"古茲", "古兹"}} {
		traditional := f.autocomplete(t, "q="+url.QueryEscape(c[0])+"&zone=chn&limit=20")
		simplified := f.autocomplete(t, "q="+url.QueryEscape(c[1])+"&zone=chn&limit=20")
		if len(traditional) == 0 || !slices.Equal(traditional, simplified) {
			t.Errorf("autocomplete %s: %v, %s: %v; want the same names", c[0], traditional, c[1], simplified)
		}
	}
}

// TestSearchAgreesWithPlainScan compares the index's answers with a plain
// scan of every card of the snapshots, on random queries made of pieces of
// real names, of their romanized forms, and of numbers.
func TestSearchAgreesWithPlainScan(t *testing.T) {
	f := newFixture(t)
	_, cards := fixtureSnapshot(t)
	slices.SortFunc(cards, func(a, b searchCard) int {
		return bytes.Compare(append(catalog.NumberKey(a.Number), a.ID...), append(catalog.NumberKey(b.Number), b.ID...))
	})
	scan := func(q, zone, set string, limit int) []string {
		terms := store.Terms(q)
		var out []string
		for _, c := range cards {
			if zone != "" && c.Zone != zone {
				continue
			}
			if set != "" && set != c.Zone+"-"+c.SetCode && set != c.SetCode {
				continue
			}
			name, number := catalog.Fold(c.Name), catalog.NormalizeNumber(c.Number)
			romanized := catalog.Romanize(name, c.Language)
			ok := len(terms) > 0
			for _, term := range terms {
				inName := strings.Contains(name, term) || romanized != "" && strings.Contains(romanized, term)
				if !inName && number != catalog.NormalizeNumber(term) {
					ok = false
				}
			}
			if ok && len(out) < limit {
				out = append(out, c.ID)
			}
		}
		return out
	}

	rng := rand.New(rand.NewPCG(1, 2))
	piece := func() string {
		c := cards[rng.IntN(len(cards))]
		if rng.IntN(4) == 0 {
			return c.Number
		}
		name := []rune(c.Name)
		if r := catalog.Romanize(catalog.Fold(c.Name), c.Language); r != "" && rng.IntN(3) == 0 {
			name = []rune(r) // a piece of its romanized form
		}
		start := rng.IntN(len(name))
		end := start + 1 + rng.IntN(min(4, len(name)-start))
		return string(name[start:end])
	}
	zones := append([]string{""}, catalog.Zones()...)
	setRefs := []string{"", "", "", "SV1a", "jp-SV1a", "base1", "intl-swshp", "chn-SV8", "nope"}
	for i := 0; i < 200; i++ {
		q := piece()
		if rng.IntN(3) == 0 {
			q += " " + piece()
		}
		if utf8.RuneCountInString(strings.TrimSpace(q)) < 2 {
			q += "a"
		}
		zone, set := zones[rng.IntN(len(zones))], setRefs[rng.IntN(len(setRefs))]
		limit := 1 + rng.IntN(100)
		query := "q=" + url.QueryEscape(q) + "&limit=" + strconv.Itoa(limit)
		if zone != "" {
			query += "&zone=" + zone
		}
		if set != "" {
			query += "&set=" + url.QueryEscape(set)
		}
		got := ids(f.search(t, query), cardID)
		want := scan(q, zone, set, limit)
		if !slices.Equal(got, want) {
			t.Fatalf("?%s:\n index %q\n  scan %q", query, got, want)
		}
	}
}

// TestSearchAnyScriptAndLanguage searches the real catalogue, with the
// shipped name groups, as people type: kana by their romaji, a Chinese
// name's Han characters by their pinyin, and a Pokémon by its name in
// another language (docs/CONTRACT.md, Search).
func TestSearchAnyScriptAndLanguage(t *testing.T) {
	f := newFixtureAt(t, realCatalogue(t), nil)
	for _, c := range []struct {
		query string
		names []string // every card found has one of them in its folded name
		zone  string
	}{
		{"q=pikachu&zone=jp", []string{"ピカチュ"}, "jp"}, // ピカチュウ, and サーフィンピカチュ too
		{"q=fushigi&zone=jp", []string{"フシギ"}, "jp"},  // フシギダネ, and ふしぎなアメ too
		{"q=fushigidane&zone=jp", []string{"フシギダネ"}, "jp"},
		{"q=pikaqiu&zone=chn", []string{"皮卡丘"}, "chn"},
		{"q=miaowa&zone=chn", []string{"妙蛙"}, "chn"},
		{"q=rizadon&zone=jp", []string{"リザードン"}, "jp"},
		// The name in another language, through the card's name group.
		{"q=charizard&zone=jp", []string{"リザードン"}, "jp"},
		{"q=%E5%A6%99%E8%9B%99&zone=intl", []string{"bulbasaur", "ivysaur", "venusaur"}, "intl"}, // 妙蛙, which 妙蛙草 and 妙蛙花 hold too
		{"q=pikaqiu&zone=intl", []string{"pikachu"}, "intl"},
		{"q=glurak&zone=chn", []string{"噴火龍", "喷火龙"}, "chn"},
	} {
		got := f.search(t, c.query+"&limit=100")
		if len(got) == 0 {
			t.Errorf("?%s: no card", c.query)
		}
		for _, card := range got {
			named := slices.ContainsFunc(c.names, func(n string) bool { return strings.Contains(catalog.Fold(card.Name), n) })
			if !named || card.Zone != c.zone {
				t.Errorf("?%s: %s %q of zone %s, want a card of %s named with one of %q", c.query, card.ID, card.Name, card.Zone, c.zone, c.names)
			}
		}
	}
	bulbasaur := false
	for _, card := range f.search(t, "q=%E5%A6%99%E8%9B%99&zone=intl&limit=100") {
		bulbasaur = bulbasaur || strings.Contains(card.Name, "Bulbasaur")
	}
	if !bulbasaur {
		t.Error("?q=妙蛙&zone=intl: no Bulbasaur")
	}
	var ex bool
	for _, card := range f.search(t, "q=charizard&zone=jp&limit=100") {
		ex = ex || strings.HasSuffix(strings.ToLower(card.Name), "ex")
	}
	if !ex {
		t.Error("?q=charizard&zone=jp: no リザードンex card")
	}
	// Whole words: Mew's group does not hold Mewtwo's cards.
	mews := f.search(t, "q=%E5%A4%A2%E5%B9%BB&zone=intl&limit=100") // 夢幻, Mew in Chinese
	if len(mews) == 0 {
		t.Error("?q=夢幻&zone=intl: no Mew")
	}
	for _, card := range mews {
		// "Mewtwo & Mew GX" names Mew too; "Mewtwo EX" does not.
		if rest := strings.ReplaceAll(strings.ToLower(card.Name), "mewtwo", ""); !strings.Contains(rest, "mew") {
			t.Errorf("?q=夢幻: %s %q, Mewtwo in Mew's group", card.ID, card.Name)
		}
	}
	if len(f.search(t, "q=%E7%A0%94%E7%A9%B6&zone=jp")) == 0 { // 研究
		t.Fatal("no Japanese card named with 研究")
	}
	for _, card := range f.search(t, "q=yanjiu&limit=100") {
		if strings.Contains(card.Name, "研究") && card.Zone == "jp" {
			t.Errorf("?q=yanjiu: %s %q, a Japanese name read as pinyin", card.ID, card.Name)
		}
	}
}
