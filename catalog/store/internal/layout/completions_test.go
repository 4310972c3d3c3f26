package layout

import (
	"bytes"
	"testing"
	"unicode/utf8"

	"github.com/catalogd/catalogd/catalog"
)

// TestWordStarts: a word that starts with a prefix sets the bit of the
// prefix's first character; Latin letters and digits each have their own.
func TestWordStarts(t *testing.T) {
	for _, text := range []string{"pikachu 25 ex", "リザードンex 皮卡丘", "mr. mime & co-op 7a", "ピカチュウ pikachu", ""} {
		starts := WordStarts(0, []byte(text))
		catalog.EachWord([]byte(text), func(w []byte) {
			if first, _ := utf8.DecodeRune(w); starts&WordStartBit(first) == 0 {
				t.Errorf("%q: the word %q is not among its starts", text, w)
			}
		})
		for r := 'a'; r <= 'z'; r++ {
			has := false
			catalog.EachWord([]byte(text), func(w []byte) { has = has || bytes.HasPrefix(w, []byte{byte(r)}) })
			if got := starts&WordStartBit(r) != 0; got != has {
				t.Errorf("%q: a word starts with %c: %v, want %v", text, r, got, has)
			}
		}
	}
	seen := map[uint64]rune{}
	for _, r := range "abcdefghijklmnopqrstuvwxyz0123456789" {
		if o, ok := seen[WordStartBit(r)]; ok {
			t.Errorf("%c and %c share a bit", r, o)
		}
		seen[WordStartBit(r)] = r
	}
	for _, r := range "ピ皮ä€" {
		if _, ok := seen[WordStartBit(r)]; ok {
			t.Errorf("%c shares a bit of a Latin letter or a digit", r)
		}
	}
}
