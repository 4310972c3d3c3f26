package catalog

import (
	"slices"
	"strings"
	"testing"
)

func TestRomanize(t *testing.T) {
	for _, c := range []struct{ name, language, want string }{
		// Hepburn, as docs/CONTRACT.md, Search has it.
		{"ピカチュウ", "ja", "pikachuu"},
		{"ぴかちゅう", "ja", "pikachuu"},
		{"フシギダネ", "ja", "fushigidane"},
		{"シ チ ツ フ ジ", "ja", "shi chi tsu fu ji"},
		{"リザードン", "ja", "rizadon"},
		{"リザードンex", "ja", "rizadonex"},
		{"ゼニガメ", "ja", "zenigame"},
		{"カメックス", "ja", "kamekkusu"},
		{"キャタピー", "ja", "kyatapi"},
		{"ニャース", "ja", "nyasu"},
		{"ジョウト", "ja", "jouto"},
		{"シャワーズ", "ja", "shawazu"},
		{"マッチ", "ja", "macchi"},
		{"ファイヤー", "ja", "faiya"},
		{"ウィンディ", "ja", "windi"},
		// ウ and イ before a small vowel, wherever they are.
		{"サンドウィッチ", "ja", "sandowicchi"},
		{"ハロウィン", "ja", "harowin"},
		{"シンウィ", "ja", "shinwi"},
		{"ツウィ", "ja", "tsuwi"},
		{"キャスト・アウェイ", "ja", "kyasuto・awei"},
		{"アオキノウォーグル", "ja", "aokinowoguru"},
		{"ロイェ", "ja", "roye"},
		{"アィ ンァ", "ja", "ai na"},
		{"ウーィ", "ja", "wi"},
		{"ヴィクティニ", "ja", "vikutini"},
		{"シェイミ", "ja", "sheimi"},
		{"デューゴン", "ja", "dyugon"},
		{"パフュートン", "ja", "pafyuton"},
		{"デュアルボール", "ja", "dyuaruboru"},
		{"テュ ヴュ フョ", "ja", "tyu vyu fyo"},
		{"ﾋﾟｶﾁｭｳ", "ja", "pikachuu"},
		{"博士の研究", "ja", "博士no研究"},
		// Toneless pinyin, syllables joined, for a Chinese name only.
		{"皮卡丘", "zh-tw", "pikaqiu"},
		{"皮卡丘ex", "zh-cn", "pikaqiuex"},
		{"飛天螳螂", "zh-tw", "feitiantanglang"},
		{"妙蛙種子", "zh-tw", "miaowazhongzi"},
		{"妙蛙种子", "ZH-CN", "miaowazhongzi"},
		{"長毛豬 长尾怪手", "zh-tw", "changmaozhu changweiguaishou"},     // cháng, long
		{"貓鼬探長 隊長v 長", "zh-tw", "maoyoutanzhang duizhangv chang"}, // zhǎng, chief
		{"皮卡丘", "ja", ""},
		// Nothing to romanize.
		{"pikachu", "en", ""},
		{"Pikachu", "zh-tw", ""},
		{"", "ja", ""},
		{"ー", "ja", ""},
	} {
		if got := Romanize(Fold(c.name), c.language); got != c.want {
			t.Errorf("Romanize(Fold(%q), %q) = %q, want %q", c.name, c.language, got, c.want)
		}
	}
}

func TestSearchText(t *testing.T) {
	for _, c := range []struct{ name, language, want string }{
		{"Pikachu", "en", "pikachu"},
		{"ピカチュウ V", "ja", "ピカチュウ v pikachuu"},
		// Only the words romanizing changes are added.
		{"Pikachu ピカチュウ 123 皮卡丘", "ja", "pikachu ピカチュウ 123 皮卡丘 pikachuu"},
		{"皮卡丘 V 噴火龍", "zh-tw", "皮卡丘 v 喷火龙 pikaqiu penhuolong"},
		{"皮卡丘", "zh-tw", "皮卡丘 pikaqiu"},
		// Then the inner words, and theirs.
		{"げんきのハチマキ", "ja", "ゲンキノハチマキ genkinohachimaki ハチマキ hachimaki"},
		{"博士的研究", "zh-cn", "博士的研究 boshideyanjiu 研究 yanjiu"},
	} {
		if got := SearchText(c.name, c.language); got != c.want {
			t.Errorf("SearchText(%q, %q) = %q, want %q", c.name, c.language, got, c.want)
		}
	}
}

// TestInnerWords: the words a name sets apart as printed that folding
// joins to the word before them, but a particle of one character, and
// none where the printed name already sets them apart once folded.
func TestInnerWords(t *testing.T) {
	for _, c := range []struct {
		name string
		want []string
	}{
		{"げんきのハチマキ", []string{"ハチマキ"}},
		{"ロケット団のサカキ", []string{"サカキ"}}, // 団 and ノ start words already
		{"サカキのカリスマ", []string{"カリスマ"}}, // の is a particle
		{"博士的研究(木蘭博士)", []string{"研究"}},
		{"ポケモンいれかえ", []string{"イレカエ"}},
		{"ピカチュウ", nil},
		{"Charizard ex", nil},
		{"わるい リザードン", nil}, // written apart
		// A name that changes script a hundred times has MaxInnerWords.
		{strings.Repeat("あいカキ", 100), nil},
	} {
		got := InnerWords(c.name, Fold(c.name))
		if c.name == strings.Repeat("あいカキ", 100) {
			if len(got) != MaxInnerWords {
				t.Errorf("InnerWords of a name of 200 changes of script: %d words, want %d", len(got), MaxInnerWords)
			}
			continue
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("InnerWords(%q) = %q, want %q", c.name, got, c.want)
		}
	}
}

// TestSimplifiedCharactersHaveReadings checks that folding a traditional
// character to its simplified form never loses a reading: where the
// dictionary reads the traditional one, the simplified one is read too.
func TestSimplifiedCharactersHaveReadings(t *testing.T) {
	for from, to := range simplifiedOf() {
		if pinyinOf(from) != "" && pinyinOf(to) == "" {
			t.Errorf("%q reads %q, its simplified %q nothing", from, pinyinOf(from), to)
		}
	}
	if got := Romanize(Fold("繈褓"), "zh-tw"); got != "qiangbao" {
		t.Errorf("Romanize(Fold(繈褓)) = %q, want qiangbao", got)
	}
}
