package server

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/catalogd/catalogd/importer"
)

type nameCount struct {
	Name  string `json:"name"`
	Cards int    `json:"cards"`
}

// autocomplete answers GET /catalog/autocomplete?query.
func (f *fixture) autocomplete(t *testing.T, query string) []nameCount {
	t.Helper()
	return onlyData[nameCount](t, f, "/catalog/autocomplete?"+query)
}

// realNameCounts counts the cards of each name in each zone of the real
// catalogue, read from its snapshot.
func realNameCounts(t *testing.T) map[[2]string]int {
	t.Helper()
	f, err := os.Open("../testdata/catalogue-real.json.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var snapshot struct {
		Cards []struct{ Name, Zone string } `json:"cards"`
	}
	if err := json.NewDecoder(gz).Decode(&snapshot); err != nil {
		t.Fatal(err)
	}
	counts := map[[2]string]int{}
	for _, c := range snapshot.Cards {
		counts[[2]string{c.Zone, c.Name}]++
		counts[[2]string{"", c.Name}]++
	}
	return counts
}

// TestAutocomplete asks the real catalogue for the names that complete
// what a person types, in Latin, kana and Han script.
func TestAutocomplete(t *testing.T) {
	f := newFixtureAt(t, realCatalogue(t), nil)
	counts := realNameCounts(t)
	for _, c := range []struct{ query, zone, first string }{
		{"pika", "intl", "Pikachu"},
		{"pika", "jp", "ピカチュウ"}, // by its romaji, pikachuu
		{"ピカ", "jp", "ピカチュウ"},   // as typed
		{"ぴか", "jp", "ピカチュウ"},   // hiragana folds to katakana
		{"皮卡", "chn", "皮卡丘"},
		{"pikaq", "chn", "皮卡丘"}, // by its pinyin
		// A last term that starts no word is held within the name, and the
		// term before it completed.
		{"gekkouga ☆", "intl", "Greninja ☆"},
		{"ゲッコウガ ☆", "intl", "Greninja ☆"},
		{"giovanni nido ♀", "intl", "Giovanni's Nidoran ♀"},
		// A word that folding joins to the one before it: katakana after
		// hiragana (ハチマキ of げんきのハチマキ), a word after 的.
		{"ハチマキ", "jp", "こだわりハチマキ"},
		{"hachimaki", "jp", "こだわりハチマキ"},
		{"ロケット団 サカキ", "jp", "ロケット団のサカキ"},
		{"研究", "chn", "博士的研究（山梨博士）"},
		{"yanjiu", "chn", "博士的研究（山梨博士）"},
	} {
		q := "q=" + url.QueryEscape(c.query) + "&zone=" + c.zone
		names := f.autocomplete(t, q)
		if len(names) == 0 || names[0].Name != c.first {
			t.Errorf("?%s: %v, want %s first", q, names, c.first)
			continue
		}
		if len(names) > 10 {
			t.Errorf("?%s: %d names, want at most the default limit of 10", q, len(names))
		}
		for _, n := range names {
			if want := counts[[2]string{c.zone, n.Name}]; n.Cards != want {
				t.Errorf("?%s: %s with %d cards, want the %d of zone %s", q, n.Name, n.Cards, want, c.zone)
			}
		}
	}
	// By a name group: every name of Charizard's group is as good as
	// charizard itself, so the one with the most cards comes first.
	rizadon := f.autocomplete(t, "q=charizard&zone=jp&limit=20")
	if !slices.ContainsFunc(rizadon, func(n nameCount) bool { return n.Name == "リザードン" }) {
		t.Errorf("?q=charizard&zone=jp: %v, want リザードン", rizadon)
	}
	for i := 1; i < len(rizadon); i++ {
		if rizadon[i].Cards > rizadon[i-1].Cards {
			t.Errorf("?q=charizard&zone=jp: %v after %v", rizadon[i], rizadon[i-1])
		}
	}
	// Every zone: the cards of all of them.
	all := f.autocomplete(t, "q=pikachu&limit=20")
	if len(all) == 0 || all[0].Name != "Pikachu" || all[0].Cards != counts[[2]string{"", "Pikachu"}] {
		t.Errorf("?q=pikachu: %v, want Pikachu first with %d cards", all, counts[[2]string{"", "Pikachu"}])
	}
	// One character is enough; the limit holds.
	if p := f.autocomplete(t, "q=p&limit=20"); len(p) != 20 {
		t.Errorf("?q=p&limit=20: %d names, want 20", len(p))
	}
	// The last term is the start of a word, not any part of one.
	for _, n := range f.autocomplete(t, "q=zard&zone=intl&limit=20") {
		if strings.Contains(strings.ToLower(n.Name), "charizard") {
			t.Errorf("?q=zard: %s, but zard starts no word of it", n.Name)
		}
	}
	// Other terms are parts of the name; the last completes a word.
	for _, n := range f.autocomplete(t, "q=charizard+e&zone=intl&limit=20") {
		lower := strings.ToLower(n.Name)
		if !strings.Contains(lower, "charizard") || !strings.Contains(" "+lower, " e") {
			t.Errorf("?q=charizard e: %s", n.Name)
		}
	}
	if got := f.autocomplete(t, "q=zzqxj"); len(got) != 0 {
		t.Errorf("?q=zzqxj: %v, want no name", got)
	}
}

// TestAutocompleteOrder holds the order of the names on a catalogue built
// to tell each rule apart: equal forms, then forms that start with q, then
// words; within each, more cards, then the folded name, then the name. A
// name in a group one of whose names is q is equal to it.
func TestAutocompleteOrder(t *testing.T) {
	dir := t.TempDir()
	var cards []string
	add := func(name, zone, lang string, n int) {
		for range n {
			cards = append(cards, fmt.Sprintf(`{"id":"%s-c%d","name":%q,"setName":"S","setCode":"s","number":"%d","language":%q,"variant":"standard","zone":%q}`,
				zone, len(cards), name, len(cards)+1, lang, zone))
		}
	}
	add("Smew", "intl", "en", 9)        // mew inside a word: never
	add("Dark Mewtwo", "intl", "en", 6) // a word starts with mew
	add("Mewtwo GX", "intl", "en", 1)   // the name starts with mew
	add("Mewtwo", "intl", "en", 3)      // likewise, with more cards
	add("Mewtwo ex", "intl", "en", 3)   // as many: by the folded name
	add("Mew", "intl", "en", 1)         // equal
	add("MEW", "intl", "en", 1)         // equal, folded: by the name as printed
	add("Shining Mew", "intl", "en", 5) // Mew's group holds it: equal too
	add("ミュウ", "jp", "ja", 1)           // a name of its group is mew: equal
	snapshot := `{"sets":[{"id":"intl-s","code":"s","name":"S","zone":"intl","cardCount":29},{"id":"jp-s","code":"s","name":"S","zone":"jp","cardCount":1}],` +
		`"cards":[` + strings.Join(cards, ",\n") + `],"names":[["Mew","ミュウ"]]}`
	in := filepath.Join(dir, "order.json")
	if err := os.WriteFile(in, []byte(snapshot), 0o644); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "order.db")
	if _, err := importer.Import(context.Background(), importer.Config{DB: db, Inputs: []string{in}}); err != nil {
		t.Fatal(err)
	}
	f := newFixtureAt(t, db, nil)
	want := []nameCount{
		{"Shining Mew", 5}, {"MEW", 1}, {"Mew", 1}, {"ミュウ", 1}, // equal: by cards, the folded name, the name
		{"Mewtwo", 3}, {"Mewtwo ex", 3}, {"Mewtwo GX", 1}, // start with mew
		{"Dark Mewtwo", 6}, // a word starts with mew
	}
	if got := f.autocomplete(t, "q=Mew&limit=20"); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("?q=Mew:\n got %v\nwant %v", got, want)
	}
	if got := f.autocomplete(t, "q=mew&zone=jp"); fmt.Sprint(got) != fmt.Sprint([]nameCount{{"ミュウ", 1}}) {
		t.Errorf("?q=mew&zone=jp: %v", got)
	}
	if got := f.autocomplete(t, "q=mew&limit=2"); fmt.Sprint(got) != fmt.Sprint(want[:2]) {
		t.Errorf("?q=mew&limit=2: %v, want %v", got, want[:2])
	}
}

// TestAutocompleteParameterRules: q of 1 to 200 code points once trimmed,
// limit 1 to 20, zone one of the three; each broken rule a 400 naming it.
func TestAutocompleteParameterRules(t *testing.T) {
	f := newFixture(t)
	for _, c := range []struct{ query, param string }{
		{"", "q"},
		{"q=", "q"},
		{"q=%20%20", "q"},
		{"q=" + strings.Repeat("a", 201), "q"},
		{"q=pika&limit=21", "limit"},
		{"q=pika&limit=0", "limit"},
		{"q=pika&limit=1.0", "limit"},
		{"q=pika&zone=mars", "zone"},
		{"q=a&q=b", "q"},
	} {
		r := f.get("/catalog/autocomplete?" + c.query)
		r.wantStatus(t, http.StatusBadRequest)
		var p problem
		r.json(t, &p)
		if len(p.Errors) != 1 || p.Errors[0].Parameter != c.param {
			t.Errorf("?%s: errors %+v, want one naming %s", c.query, p.Errors, c.param)
		}
	}
	for _, q := range []string{"q=p", "q=%20p%20", "q=" + strings.Repeat("a", 200), "q=pika&limit=20&zone=jp"} {
		f.get("/catalog/autocomplete?"+q).wantStatus(t, http.StatusOK)
	}
}

// TestAutocompleteRunsOnPastAWord types names on the real catalogue up to
// and past a word's end, through punctuation: what is typed keeps its
// suggestions (docs/CONTRACT.md, As you type).
func TestAutocompleteRunsOnPastAWord(t *testing.T) {
	f := newFixtureAt(t, realCatalogue(t), nil)
	for _, c := range []struct{ query, name string }{
		{"gx mr", "Mr. Mime GX"},
		{"gx mr.", "Mr. Mime GX"},
		{"jr.", "Mime Jr."},
		{"mr. ri", "Galarian Mr. Rime"},
		{"lele-gx", "Tapu Lele-GX"},
		{"tapu lele-", "Tapu Lele-GX"},
		{"ex ho-oh", "Ho-Oh ex"},
		{"ex larry's", "Larry's Dudunsparce ex"},
	} {
		q := "q=" + url.QueryEscape(c.query) + "&limit=20"
		if names := f.autocomplete(t, q); !slices.ContainsFunc(names, func(n nameCount) bool { return n.Name == c.name }) {
			t.Errorf("?%s: %v, want %s", q, names, c.name)
		}
	}
	// Punctuation at the end asks nothing more; a symbol does.
	for typed, as := range map[string]string{"n.": "n", "mew.": "mew", "charizard .": "charizard", "mr.": "mr"} {
		got := f.autocomplete(t, "q="+url.QueryEscape(typed)+"&limit=20")
		if want := f.autocomplete(t, "q="+url.QueryEscape(as)+"&limit=20"); !slices.Equal(got, want) {
			t.Errorf("?q=%s: %v, want what %s answers: %v", typed, got, as, want)
		}
	}
	for _, n := range f.autocomplete(t, "q="+url.QueryEscape("ニドラン♀")+"&zone=jp&limit=20") {
		if strings.Contains(n.Name, "♂") {
			t.Errorf("?q=ニドラン♀: %s", n.Name)
		}
	}
	// Still the start of a word: "-gx" starts none.
	if names := f.autocomplete(t, "q="+url.QueryEscape("-gx")+"&limit=20"); slices.ContainsFunc(names, func(n nameCount) bool { return strings.Contains(n.Name, "-GX") }) {
		t.Errorf("?q=-gx: %v, want no name of -GX", names)
	}
}

// TestMCPAgentFindsTheJapaneseCharizard is an agent told "the Japanese
// Charizard": it asks autocomplete_names for charizard in zone jp, then
// search_cards for the name it is given, and gets リザードン's cards.
func TestMCPAgentFindsTheJapaneseCharizard(t *testing.T) {
	f := newFixtureAt(t, realCatalogue(t), nil)
	cs := f.mcp(t, "")
	res := callTool(t, cs, "autocomplete_names", map[string]any{"q": "charizard", "zone": "jp", "limit": 20})
	if res.IsError {
		t.Fatalf("autocomplete_names: %q", toolTexts(t, res))
	}
	b, _ := json.Marshal(res.StructuredContent)
	var names struct{ Data []nameCount }
	if err := json.Unmarshal(b, &names); err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(names.Data, func(n nameCount) bool { return n.Name == "リザードン" }) {
		t.Fatalf("autocomplete_names charizard in jp: %v, want リザードン", names.Data)
	}
	if text := toolTexts(t, res)[0]; !strings.HasPrefix(text, fmt.Sprintf("%d names complete \"charizard\" in zone jp", len(names.Data))) {
		t.Errorf("summary %q", text)
	}
	res = callTool(t, cs, "search_cards", map[string]any{"q": "リザードン", "zone": "jp", "limit": 100})
	b, _ = json.Marshal(res.StructuredContent)
	var cards struct{ Data []cardJSON }
	if err := json.Unmarshal(b, &cards); err != nil {
		t.Fatal(err)
	}
	if len(cards.Data) == 0 {
		t.Fatal("search_cards リザードン in jp: no card")
	}
	for _, c := range cards.Data {
		if c.Zone != "jp" || !strings.Contains(c.Name, "リザードン") {
			t.Errorf("search_cards リザードン in jp: %s %q in %s", c.ID, c.Name, c.Zone)
		}
	}
}
