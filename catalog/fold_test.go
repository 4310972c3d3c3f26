package catalog

import (
	"strings"
	"testing"
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
		{"超電突圍", "超電突圍"},
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

func BenchmarkFold(b *testing.B) {
	for _, name := range []string{"Charizard ex", "Pokémon Center Lady", "ピカチュウ", "皮卡丘"} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Fold(name)
			}
		})
	}
}
