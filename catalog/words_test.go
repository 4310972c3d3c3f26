package catalog

import (
	"slices"
	"testing"
	"unicode"
)

func TestEachWholeWords(t *testing.T) {
	for _, c := range []struct {
		name string
		want []string // among the runs found
		not  []string // never found
	}{
		{"リザードンex", []string{"リザードン", "ex", "リザードンex"}, []string{"リザード", "ザードン"}},
		{"dark charizard", []string{"dark", "charizard", "dark charizard"}, []string{"char", "dark "}},
		{"mewtwo", []string{"mewtwo"}, []string{"mew", "two"}},
		{"mr. mime ex", []string{"mr", "mr.", "mime", "mr. mime", "mr. mime ex"}, []string{" mime", "mime "}},
		{"porygon2", []string{"porygon2"}, []string{"porygon"}},
		{"porygon-z", []string{"porygon", "z", "porygon-z"}, nil},
		{"ピカチュウv", []string{"ピカチュウ", "v"}, []string{"ピカ"}},
		{"皮卡丘ex", []string{"皮卡丘", "皮卡丘ex"}, []string{"皮卡"}},
		{"nidoran♀ ex", []string{"nidoran", "nidoran♀", "♀", "nidoran♀ ex"}, []string{"nidoran♀ "}},
		{"type: null", []string{"type", "type:", "type: null", "null"}, []string{"type: ", " null"}},
		{"", nil, []string{""}},
	} {
		var got []string
		EachWholeWords([]byte(c.name), 64, func(w []byte) { got = append(got, string(w)) })
		for _, w := range c.want {
			if !slices.Contains(got, w) {
				t.Errorf("%q: runs %q lack %q", c.name, got, w)
			}
		}
		for _, w := range c.not {
			if slices.Contains(got, w) {
				t.Errorf("%q: runs %q hold %q", c.name, got, w)
			}
		}
	}
	var got []string
	EachWholeWords([]byte("dark charizard"), 9, func(w []byte) { got = append(got, string(w)) })
	if slices.Contains(got, "dark charizard") || !slices.Contains(got, "charizard") {
		t.Errorf("at most 9 bytes: runs %q", got)
	}
}

// letterBlock's ranges hold letters of its script only: the shortcut
// answers as Unicode's tables do.
func TestLetterBlockAgreesWithUnicode(t *testing.T) {
	for r := rune(0); r <= unicode.MaxRune; r++ {
		s := letterBlock(r)
		if s == 0 {
			continue
		}
		if !unicode.IsLetter(r) || isNameSeparatorByTables(r) {
			t.Fatalf("%U: in a letter block, not a letter", r)
		}
		if want := scripts[s-1]; !unicode.Is(want, r) && !(s == 2 && unicode.Is(unicode.Hiragana, r)) {
			t.Fatalf("%U: in the block of script %d, not of it", r, s)
		}
	}
}

func isNameSeparatorByTables(r rune) bool {
	return unicode.IsSpace(r) || unicode.IsPunct(r) || unicode.IsSymbol(r)
}
