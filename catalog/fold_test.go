package catalog

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestFold(t *testing.T) {
	cases := []struct{ in, want string }{
		{"Pokémon", "pokemon"},
		{"POKÉMON", "pokemon"},
		{"Flabébé", "flabebe"},
		{"Pokémon  Center\t Lady", "pokemon center lady"},
		{"  Pikachu ex ", "pikachu ex"},
		{"ピカチュウ", "ピカチュウ"},
		{"ぴかちゅう", "ピカチュウ"},
		{"ﾋﾟｶﾁｭｳ", "ピカチュウ"}, // half-width katakana
		{"ガラル", "ガラル"},      // voicing marks are not diacritics
		{"がらる", "ガラル"},
		{"ゝゞ", "ヽヾ"},
		{"ＰＩＫＡＣＨＵ　２５", "pikachu 25"}, // full-width letters, digits and space
		{"Ｎ's Zekrom", "n's zekrom"},
		{"皮卡丘", "皮卡丘"},
		{"超電突圍", "超电突围"}, // traditional Chinese folds to simplified
		{"寶可夢 噴火龍", "宝可梦 喷火龙"},
		{"宝可梦", "宝可梦"},
		{"薴", "苎"},           // OpenCC's 苧 is traditional too: followed to its end
		{"\uF900", "岂"},      // a compatibility ideograph: NFKC's 豈, then simplified
		{"竜 メガ進化", "竜 メガ进化"}, // Japanese: the same rule, for names and queries alike
		{"Straße", "strasse"},
		{"Ⅳ", "iv"},
		{"Nidoran♀", "nidoran♀"},
		{"Professor’s Research", "professor's research"}, // the apostrophes phones type
		{"Giovanni‘s ʼ‛", "giovanni's ''"},
		{"Porygon‐Z Ho‑Oh", "porygon-z ho-oh"}, // hyphens, U+2010 and U+2011
		{"", ""},
		{"   ", ""},
	}
	for _, c := range cases {
		if got := Fold(c.in); got != c.want {
			t.Errorf("Fold(%q) = %q, want %q", c.in, got, c.want)
		}
		if again := Fold(Fold(c.in)); again != Fold(c.in) {
			t.Errorf("Fold is not idempotent on %q: %q then %q", c.in, Fold(c.in), again)
		}
	}
}

// TestFoldFindsRealNames checks the searches the issue names against the
// folded real names they must find.
func TestFoldFindsRealNames(t *testing.T) {
	cases := []struct{ name, term string }{
		{"Pokémon Center Lady", "pokemon"},
		{"Flabébé", "flabebe"},
		{"ピカチュウ", "ぴかちゅう"},
		{"ピカチュウex", "ピカ"},
		{"Charizard ex", "CHARIZARD"},
		{"皮卡丘", "卡丘"},
		{"寶可夢交替", "宝可梦"},
		{"宝可梦交替", "寶可夢"},
	}
	for _, c := range cases {
		if !strings.Contains(Fold(c.name), Fold(c.term)) {
			t.Errorf("%q does not find %q: %q vs %q", c.term, c.name, Fold(c.term), Fold(c.name))
		}
	}
	if strings.Contains(Fold("ガラル"), Fold("カラ")) {
		t.Error("カラ finds ガラル: voicing marks were dropped")
	}
}

// TestSimplifiedTable reads every line of simplified.txt and checks what
// Fold relies on: one traditional character to one simplified, each line
// read, and no simplified form that is itself mapped, so that folding
// twice changes nothing.
func TestSimplifiedTable(t *testing.T) {
	m := simplifiedOf()
	lines := 0
	for line := range strings.Lines(simplifiedText) {
		if strings.HasPrefix(line, "#") {
			continue
		}
		lines++
		from, to, _ := strings.Cut(strings.TrimSuffix(line, "\n"), "\t")
		if f, _ := utf8.DecodeRuneInString(from); m[f] == 0 || string(m[f]) != to {
			t.Errorf("line %q is not read as %q -> %q", line, from, to)
		}
	}
	if len(m) != lines || lines < 4000 {
		t.Fatalf("%d pairs read of %d lines", len(m), lines)
	}
	for from, to := range m {
		if _, again := m[to]; again || from == to {
			t.Errorf("%q -> %q, which is mapped again or is itself", from, to)
		}
		if got := Fold(string(from)); got != string(to) {
			t.Errorf("Fold(%q) = %q, want %q", from, got, to)
		}
	}
}

func BenchmarkFold(b *testing.B) {
	for _, name := range []string{"Charizard ex", "Pokémon Center Lady", "ピカチュウ", "皮卡丘", "噴火龍VMAX"} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Fold(name)
			}
		})
	}
}
