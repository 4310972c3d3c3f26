package gen_test

import (
	"bufio"
	"bytes"
	"cmp"
	"compress/gzip"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// The name tables of names/ are derived from the real catalogue.
// TestNameTables derives them again and holds each to the committed file,
// byte for byte; with -update it rewrites them:
//
//	go test -C tools ./gen -run TestNameTables -update
//
// names/README.md says how each table is derived, and which two are left
// alone.
var update = flag.Bool("update", false, "rewrite the name tables of names/ from the real catalogue")

// realCatalogue is the real catalogue, in the product's testdata.
const realCatalogue = "../../testdata/catalogue-real.json.gz"

func TestNameTables(t *testing.T) {
	snap, err := readSnapshot(realCatalogue)
	if err != nil {
		t.Fatal(err)
	}
	files := derive(snap)
	if len(files) != 7 {
		t.Errorf("%d tables derived, want 7 (set names of four languages, illustrators, English and Traditional Chinese card names)", len(files))
	}
	for name, got := range files {
		path := filepath.Join("names", name)
		if *update {
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from what the real catalogue gives (-update rewrites it)", path)
		}
	}
}

func TestNameTablesBadInput(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"sets": [`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, path, want string }{
		{"Missing", filepath.Join(dir, "none.json"), "none.json"},
		{"Truncated", bad, "read " + bad},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := readSnapshot(c.path); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err %v, want one that says %q", err, c.want)
			}
		})
	}
}

// snapshot holds the members of the real catalogue that the names come from.
type snapshot struct {
	Sets  []set
	Cards []card
}

type set struct{ ID, Code, Name, Zone, ReleasedOn string }

type card struct {
	Name, Language string
	Illustrator    *string
}

func readSnapshot(path string) (*snapshot, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	br := bufio.NewReader(f)
	var r io.Reader = br
	if magic, _ := br.Peek(2); bytes.Equal(magic, []byte{0x1f, 0x8b}) {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
		r = zr
	}
	var s snapshot
	if err := json.NewDecoder(r).Decode(&s); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return &s, nil
}

// derive returns the files it writes, by name.
func derive(s *snapshot) map[string][]byte {
	files := map[string][]byte{}
	for lang, names := range setNames(s) {
		files["sets-"+lang+".txt"] = lines(names)
	}
	files["illustrators.tsv"] = illustrators(s)
	for _, t := range cardTables {
		files["cards-"+t.lang+".tsv"] = t.derive(s)
	}
	return files
}

// lines joins ls one a line.
func lines(ls []string) []byte {
	var b bytes.Buffer
	for _, l := range ls {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// setNames lists the distinct set names of each language in release order
// (undated sets last, then by id). A chn set is mainland, and so Simplified
// Chinese, when its code starts with C (CSM1aC, csm2a, CSV1C, CBB1C); the
// others are the Traditional Chinese printings.
func setNames(s *snapshot) map[string][]string {
	sets := slices.Clone(s.Sets)
	slices.SortStableFunc(sets, func(a, b set) int {
		if (a.ReleasedOn == "") != (b.ReleasedOn == "") {
			if a.ReleasedOn == "" {
				return 1
			}
			return -1
		}
		return cmp.Or(strings.Compare(a.ReleasedOn, b.ReleasedOn), strings.Compare(a.ID, b.ID))
	})
	out := map[string][]string{}
	seen := map[string]bool{}
	for _, st := range sets {
		var lang string
		switch {
		case st.Zone == "intl":
			lang = "en"
		case st.Zone == "jp":
			lang = "ja"
		case st.Zone == "chn" && strings.HasPrefix(strings.ToUpper(st.Code), "C"):
			lang = "zh-cn"
		case st.Zone == "chn":
			lang = "zh-tw"
		}
		if lang == "" || seen[lang+"\x00"+st.Name] {
			continue
		}
		seen[lang+"\x00"+st.Name] = true
		out[lang] = append(out[lang], st.Name)
	}
	return out
}

// illustratorCount is how many of the most frequent illustrators are kept.
const illustratorCount = 160

// illustrators weighs the most frequent illustrators of all zones by their
// number of cards.
func illustrators(s *snapshot) []byte {
	n := map[string]int{}
	for _, c := range s.Cards {
		if c.Illustrator != nil && *c.Illustrator != "" {
			n[*c.Illustrator]++
		}
	}
	ranked := rank(n, func(string) bool { return true })
	var b bytes.Buffer
	for _, name := range ranked[:min(illustratorCount, len(ranked))] {
		fmt.Fprintf(&b, "%s\t%d\n", name, n[name])
	}
	return b.Bytes()
}

// rank orders the keys of n that keep accepts by count, most first, then by
// name.
func rank(n map[string]int, keep func(string) bool) []string {
	var out []string
	for k := range n {
		if keep(k) {
			out = append(out, k)
		}
	}
	slices.SortFunc(out, func(a, b string) int { return cmp.Or(n[b]-n[a], strings.Compare(a, b)) })
	return out
}

// cardTable is how one language's card names are derived.
type cardTable struct {
	lang string
	// size is how many of the most frequent base names are kept.
	size int
	// extra are names kept whatever their rank, for the characters that
	// search must fold (é, ’, ♀, ♂, ':', '.').
	extra []string
	// spaced: in English a mark follows the name after a space ("Pikachu
	// ex"); in Japanese and Chinese it is written on ("ピカチュウex").
	spaced bool
}

var cardTables = []cardTable{
	{lang: "en", size: 520, spaced: true, extra: []string{
		"Flabébé", "Farfetch’d", "Nidoran♀", "Nidoran♂", "Type: Null", "Pokémon Center", "Mime Jr.", "Pokémon Catcher",
	}},
	{lang: "zh-tw", size: 340},
}

// A mark is a suffix cut off a card name. mon marks are the mechanic marks
// of Pokémon (ex, GX, VMAX, δ...): a base name seen with one is a Pokémon,
// which the generator may give a mark again. The others (☆, and the Platinum
// era's team and form suffixes G, GL, FB, C, E4, 4) say nothing about that.
// Longer marks come first, so that E4 is cut before 4.
var marks = []struct {
	s   string
	mon bool
}{
	{"（デルタ種）", true}, {"V-UNION", true}, {"LEGEND", true}, {"VSTAR", true}, {"BREAK", true}, {"Prime", true},
	{"VMAX", true}, {"LV.X", true}, {"-EX", true}, {"-GX", true},
	{"ex", true}, {"EX", true}, {"GX", true}, {"V", true}, {"δ", true}, {"◇", true},
	{"GL", false}, {"FB", false}, {"E4", false}, {"☆", false}, {"G", false}, {"C", false}, {"4", false},
}

// base cuts the trailing marks off a card name. Tag-team names ("A & B GX")
// are kept whole.
func (t cardTable) base(name string) (string, bool) {
	if strings.Contains(name, "&") {
		return name, false
	}
	mon := false
	for cut := true; cut; {
		cut = false
		for _, m := range marks {
			suffix := m.s
			if t.spaced && !strings.HasPrefix(suffix, "-") {
				suffix = " " + suffix
			}
			if rest, ok := strings.CutSuffix(name, suffix); ok && rest != "" {
				name, cut, mon = strings.TrimRight(rest, " "), true, mon || m.mon
				break
			}
		}
	}
	return name, mon
}

// derive weighs each kept base name as count*len(table) + the cards whose
// base name is not kept: the cut-off tail's share is spread evenly over the
// table, so a popular name keeps its real share of all cards. Names of the
// other languages still written in Latin letters are old untranslated
// entries and count for nothing.
func (t cardTable) derive(s *snapshot) []byte {
	count := map[string]int{}
	mon := map[string]bool{}
	for _, c := range s.Cards {
		if c.Language != t.lang {
			continue
		}
		b, m := t.base(c.Name)
		count[b]++
		mon[b] = mon[b] || m
	}
	translated := func(name string) bool {
		return t.lang == "en" || !strings.ContainsFunc(name, func(r rune) bool { return r < unicode.MaxASCII && unicode.IsLetter(r) })
	}
	table := rank(count, translated)
	table = append(table[:min(t.size, len(table))], t.extra...)
	kept := map[string]bool{}
	for _, name := range table {
		kept[name] = true
	}
	tail := 0
	for name, n := range count {
		if !kept[name] && translated(name) {
			tail += n
		}
	}
	var b bytes.Buffer
	for _, name := range table {
		flag := "-"
		if mon[name] {
			flag = "mon"
		}
		b.WriteString(name + "\t" + strconv.Itoa(count[name]*len(table)+tail) + "\t" + flag + "\n")
	}
	return b.Bytes()
}
