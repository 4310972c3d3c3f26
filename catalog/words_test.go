package catalog

import (
	"math/rand/v2"
	"slices"
	"strings"
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

// Every word EachWord finds starts where WordStartsAt says one does, and
// nowhere else; "ミュウツーgx" and its like end a word at the change of
// script behind the long mark.
func TestWordStartsAtAgreesWithEachWord(t *testing.T) {
	for _, c := range []struct {
		text  string
		words []string
	}{
		{"ミュウツーgx", []string{"ミュウツー", "gx"}},
		{"ゲンガーex", []string{"ゲンガー", "ex"}},
		{"ピカチュウ25ex", []string{"ピカチュウ25", "ex"}},
		{"25gx", []string{"25gx"}},
		{"ex ーピカ", []string{"ex", "ーピカ"}},
		{"porygon2", []string{"porygon2"}},
		{"皮卡丘vmax", []string{"皮卡丘", "vmax"}},
	} {
		var got []string
		EachWord([]byte(c.text), func(w []byte) { got = append(got, string(w)) })
		if !slices.Equal(got, c.words) {
			t.Errorf("words of %q: %q, want %q", c.text, got, c.words)
		}
	}
	alphabet := []rune("aZ9 -.ーピカぴ皮丘ー0ж♀")
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		var b strings.Builder
		for range 1 + rng.IntN(10) {
			b.WriteRune(alphabet[rng.IntN(len(alphabet))])
		}
		text := []byte(b.String())
		starts := map[int]bool{}
		EachWord(text, func(w []byte) { starts[cap(text)-cap(w)] = true })
		for i := range string(text) {
			if got := WordStartsAt(text, i); got != starts[i] {
				t.Fatalf("%q at %d: WordStartsAt %v, EachWord's words start at %v", text, i, got, starts)
			}
		}
	}
}

func TestLeadingWord(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"mr.", "mr"}, {"ho-oh", "ho"}, {"ミュウツーgx", "ミュウツー"}, {"pika", "pika"}, {"-gx", ""}, {"", ""}, {".", ""},
	} {
		if got := LeadingWord([]byte(c.text)); string(got) != c.want || (c.want == "") != (got == nil) {
			t.Errorf("LeadingWord(%q) = %q, want %q", c.text, got, c.want)
		}
	}
}

func TestSplitUnspacedWords(t *testing.T) {
	for _, c := range []struct{ name, want string }{
		{"わるいリザードン", "わるい リザードン"},
		{"カツラのリザードン", "カツラ の リザードン"},
		{"ロケット団のミュウツーex", "ロケット団の ミュウツーex"},
		{"ブルーノの探索", "ブルーノ の探索"},
		{"ブルーの探索", "ブルー の探索"}, // the long mark is katakana's
		{"ｶﾞあ", "ｶﾞ あ"},       // half-width, its mark apart
		{"わるい\u30eaザ\u3099ードン", "わるい \u30eaザ\u3099ードン"},
		{"は\u3099リザードン", "は\u3099 リザードン"}, // decomposed, as NFD writes it
		{"かがやくデンヂムシ", "かがやく デンヂムシ"},
		{"N的索羅亞", "N 的 索羅亞"},
		{"<火箭隊的>沙基拉斯", "<火箭隊 的 >沙基拉斯"},
		{"ルアーボール", "ルアーボール"},
		{"ピカチュウ", "ピカチュウ"},
		{"Pikachu", "Pikachu"},
		{"", ""},
	} {
		got, changed := SplitUnspacedWords([]byte(c.name))
		if string(got) != c.want || changed != (c.want != c.name) {
			t.Errorf("SplitUnspacedWords(%q) = %q, %v; want %q", c.name, got, changed, c.want)
		}
	}
}

// TestEachWordEnding lists the endings of a word that may name what it
// is: of kana or Han, the longest first, three characters or more
// after two or more.
func TestEachWordEnding(t *testing.T) {
	for _, c := range []struct {
		word string
		want []string
	}{
		{"メガリザードン", []string{"リザードン", "ザードン", "ードン"}},
		{"光辉喷火龙", []string{"喷火龙"}},
		{"カリザード", []string{"ザード"}}, // リザード would follow one character
		{"仙子伊布", nil}, // 伊布 is two
		{"ロトム", nil},
		{"megacharizard", nil}, // Latin words are written apart
		{"2ピカチュウ", []string{"カチュウ", "チュウ"}},
		{"12345", nil}, // no letter, no script
		{"ab2ピカチュウ", nil},
	} {
		var got []string
		EachWordEnding([]byte(c.word), func(ending []byte) bool {
			got = append(got, string(ending))
			return false
		})
		if !slices.Equal(got, c.want) {
			t.Errorf("EachWordEnding(%q) = %q, want %q", c.word, got, c.want)
		}
	}
	var got []string
	EachWordEnding([]byte("アローラロコン"), func(ending []byte) bool {
		got = append(got, string(ending))
		return string(ending) == "ラロコン"
	})
	if !slices.Equal(got, []string{"ーラロコン", "ラロコン"}) {
		t.Errorf("EachWordEnding goes on after fn returns true: %q", got)
	}
}
