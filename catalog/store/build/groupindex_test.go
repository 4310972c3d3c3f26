package build

import (
	"encoding/binary"
	"slices"
	"testing"

	"github.com/catalogd/catalogd/catalog"
)

// The groups of a card: its name's whole words, and inside a word of kana
// or Han the longest name at each character that no name found before it
// holds (docs/CONTRACT.md, Name groups).
func TestGroupsOfAName(t *testing.T) {
	var g nameGroups
	for _, names := range [][]string{
		{"Mew", "ミュウ", "夢幻"},          // 0
		{"Mewtwo", "ミュウツー", "超夢"},     // 1
		{"Charmeleon", "リザード", "火恐龍"}, // 2
		{"Charizard", "リザードン", "噴火龍"}, // 3
		{"Pikachu", "ピカチュウ", "皮卡丘"},   // 4
		{"Rattata", "コラッタ", "小拉達"},    // 5
		{"Raticate", "ラッタ", "拉達"},     // 6
		{"Nidoran♀", "ニドラン♀", "尼多蘭"},  // 7
		{"Ho-Oh", "ホウオウ", "鳳王"},       // 8
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
		{"メガリザードンXex", []uint32{3}},
		{"リザードン", []uint32{3}},
		{"リザード", []uint32{2}},
		{"光輝噴火龍", []uint32{3}},
		{"衝浪皮卡丘VMAX", []uint32{4}},
		{"アローラコラッタ", []uint32{5}}, // not Raticate, within Rattata
		{"アローララッタ", []uint32{6}},
		{"ヒビキのホウオウex", []uint32{8}},
		{"ニドラン♀", []uint32{7}},
		{"Dark Charizard", []uint32{3}},
		{"Mewtwo", []uint32{1}},
		{"Charizardite", nil}, // Latin words are whole or nothing
		{"ウ", nil},
	} {
		entry := g.appendGroupIDs(nil, []byte(catalog.Fold(c.name)))
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
