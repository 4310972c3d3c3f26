package build

import (
	"bytes"
	"testing"
	"unicode/utf8"

	"github.com/catalogd/catalogd/catalog/store/internal/layout"
)

// TestPackedGramKeys checks that each gram's packed form gives back its
// list key: a gram whose key came out wrong would silently find nothing.
func TestPackedGramKeys(t *testing.T) {
	for _, gram := range []string{"a", "ピ", "pi", "ピカ", "𝔸b", "pik", "皮卡丘", "\U0010FFFFa\U0010FFFF"} {
		n := utf8.RuneCountInString(gram)
		packed, ok := packChars([]byte(gram))
		if !ok {
			t.Fatalf("packChars(%q) refused a valid gram", gram)
		}
		if got, want := appendPackedKey(nil, packed), layout.AppendListKey(nil, layout.GramKinds[n], gram); !bytes.Equal(got, want) {
			t.Errorf("gram %q: packed key %q, want %q", gram, got, want)
		}
	}
	if _, ok := packChars([]byte{'a', 0xff}); ok {
		t.Error("packChars took invalid UTF-8")
	}
}
