package build

import (
	"encoding/binary"
	"slices"
	"testing"

	"github.com/catalogd/catalogd/catalog"
)

// The groups of a card: the whole words of its folded name, and of its
// name printed with its Japanese and Chinese words apart; the name that
// ends a word of kana or Han, after what modifies it; never another
// name inside a word (docs/CONTRACT.md, Name groups).
func TestGroupsOfAName(t *testing.T) {
	var g nameGroups
	for _, names := range [][]string{
		{"Mew", "ミュウ", "夢幻"},           // 0
		{"Mewtwo", "ミュウツー", "超夢"},      // 1
		{"Charmeleon", "リザード", "火恐龍"},  // 2
		{"Charizard", "リザードン", "噴火龍"},  // 3
		{"Snubbull", "ブルー", "布魯"},      // 4
		{"Chansey", "ラッキー", "吉利蛋"},     // 5
		{"Eevee", "イーブイ", "伊布"},        // 6
		{"Zorua", "ゾロア", "索羅亞"},        // 7
		{"Charjabug", "デンヂムシ", "蟲電寶"},  // 8
		{"Magnemite", "コイル", "小磁怪"},    // 9
		{"Magneton", "レアコイル", "三合一磁怪"}, // 10
		{"Rattata", "コラッタ", "小拉達"},     // 11
		{"Raticate", "ラッタ", "拉達"},      // 12
	} {
		if _, err := g.add(names); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name string
		want []uint32
	}{
		{"ミュウツーGX", []uint32{1}},
		{"ミュウ&ミュウツーGX", []uint32{0, 1}},
		{"わるいリザードン", []uint32{3}},
		{"カツラのリザードン", []uint32{3}},
		{"ロケット団のミュウツーex", []uint32{1}},
		{"かがやくデンヂムシ", []uint32{8}},
		{"N的索羅亞", []uint32{7}},
		{"リザードン", []uint32{3}},
		{"Dark Charizard", []uint32{3}},
		// A name that ends a word of kana or Han, after two
		// characters or more: the longest.
		{"メガリザードンXex", []uint32{3}},
		{"メガミュウツーGX", []uint32{1}},
		{"光輝噴火龍", []uint32{3}},
		// A name inside a word is not the word's: not at its start, not
		// after one character, not of two, not in a word that is itself
		// a name, nor in a word of Latin letters.
		{"ブルーノのカイリキー", nil},
		{"ラッキーエネルギー", nil},
		{"カリザード", nil},
		{"仙子伊布", nil},
		{"レアコイル", []uint32{10}},      // a name itself
		{"アローラコラッタ", []uint32{11}},   // the longest name that ends it
		{"ロケット団のコラッタ", []uint32{11}}, // its particle apart
		{"おおきなこらった", []uint32{11}},   // hiragana is kana, folded
		{"アローラレアコイルex", []uint32{10}},
		{"Charizardite", nil},
		{"Megacharizard", nil},
	} {
		entry, err := g.appendGroupIDs(nil, []byte(catalog.Fold(c.name)), []byte(c.name))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		n, w := binary.Uvarint(entry)
		var got []uint32
		for rest := entry[w : w+int(n)]; len(rest) > 0; {
			id, w := binary.Uvarint(rest)
			got, rest = append(got, uint32(id)), rest[w:]
		}
		slices.Sort(got)
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: groups %v, want %v", c.name, got, c.want)
		}
	}
}
