package catalog

import (
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/mozillazg/go-pinyin"
)

// Romanize returns the romanized form of a folded name (docs/CONTRACT.md,
// Search), which search terms match as they match the name: kana as
// Hepburn romaji in plain ASCII, and, in a Chinese name (language "zh…"),
// Han characters as toneless pinyin, syllables joined. Every other
// character is kept as it is, so the form lines up with the name word for
// word. It returns "" when the name has nothing to romanize.
//
// The name is folded first (Fold), so hiragana is katakana here and the
// voicing marks are composed.
func Romanize(folded, language string) string {
	chinese := isChinese(language)
	if !hasRomanizable(folded, chinese) {
		return ""
	}
	var b strings.Builder
	b.Grow(2 * len(folded))
	double := false // a small ッ: the next syllable's consonant doubles
	prev := rune(0) // the character before r
	for i, r := range folded {
		switch {
		case chinese && (r == '長' || r == '长'):
			b.WriteString(readingOfChang(folded, i))
		case r == 'ッ':
			double = true
			continue
		case r == 'ー':
			// A long vowel is written as its vowel already, or not at all.
		case isSmallKana(r):
			joinSmall(&b, prev, r)
		case kanaRomaji(r) != "":
			syllable := kanaRomaji(r)
			if double && syllable[0] != 'a' && syllable[0] != 'i' && syllable[0] != 'u' && syllable[0] != 'e' && syllable[0] != 'o' && syllable[0] != 'n' {
				b.WriteByte(syllable[0])
			}
			b.WriteString(syllable)
		case chinese && unicode.Is(unicode.Han, r):
			if p := pinyinOf(r); p != "" {
				b.WriteString(p)
			} else {
				b.WriteRune(r)
			}
		default:
			b.WriteRune(r)
		}
		double = false
		if r != 'ー' { // a long vowel: still the kana before it
			prev = r
		}
	}
	if b.Len() == len(folded) && b.String() == folded {
		return ""
	}
	return b.String()
}

// SearchText is the text a search term is matched against for a card
// named name (docs/CONTRACT.md, Search): the folded name, then, after a
// space, the words of its romanized form that romanizing changed, then
// its inner words (InnerWords) and theirs. A term holds no space, so it
// matches within one word: a word the same in both forms is matched in
// the name, and indexed once. The inner words are pieces of the folded
// name, so a term finds no card by them that it did not find before; they
// are there for the words they start (docs/CONTRACT.md, As you type).
func SearchText(name, language string) string { return NewIndexText(name, language).Text }

// IndexText is a card's SearchText with the length of its folded name,
// in which a card's name groups are found (docs/CONTRACT.md, Name groups).
type IndexText struct {
	Text   string // SearchText(name, language)
	Folded int    // bytes of Text that are Fold(name): Text[:Folded]
}

// NewIndexText returns the IndexText of a card named name in language.
func NewIndexText(name, language string) IndexText {
	folded := Fold(name)
	t := IndexText{Text: folded, Folded: len(folded)}
	var b strings.Builder
	if r := ChangedWords(folded, Romanize(folded, language)); r != "" {
		b.WriteString(r)
	}
	for _, w := range InnerWords(name, folded) {
		for _, form := range [...]string{w, Romanize(w, language)} {
			if form != "" {
				if b.Len() > 0 {
					b.WriteByte(' ')
				}
				b.WriteString(form)
			}
		}
	}
	if b.Len() > 0 {
		t.Text = folded + " " + b.String()
	}
	return t
}

// MaxInnerWords bounds the inner words of a name (InnerWords): a real
// name has one or two, and a name that alternates scripts a thousand
// times must not make a text of a thousand words.
const MaxInnerWords = 8

// InnerWords returns the words of a name that start inside a word of its
// folded form, folded: those that SplitUnspacedWords sets apart, at a
// change between hiragana and katakana, and that folding joins to the
// word before them, for hiragana becomes katakana (ハチマキ of
// げんきのハチマキ, サカキ of ロケット団のサカキ), and 的 is Han
// as the characters beside it (研究 of 博士的研究). A word of one
// character is none: it is a particle (の, 的) far more often than a name.
// At most MaxInnerWords, the first ones.
func InnerWords(name, folded string) []string {
	split, ok := SplitUnspacedWords([]byte(name))
	if !ok {
		return nil
	}
	apart := []byte(Fold(string(split)))
	// at[i] is the byte of folded that byte i of apart folds to: apart is
	// folded with spaces added, unless folding reads across a space, when
	// no inner word is told.
	at := make([]int, len(apart))
	k := 0
	for i := range apart {
		switch {
		case k < len(folded) && apart[i] == folded[k]:
			at[i], k = k, k+1
		case apart[i] == ' ':
			at[i] = -1
		default:
			return nil
		}
	}
	if k != len(folded) {
		return nil
	}
	var words []string
	whole := []byte(folded)
	EachWord(apart, func(w []byte) {
		if p := at[cap(apart)-cap(w)]; p > 0 && len(words) < MaxInnerWords && utf8.RuneCount(w) > 1 && !WordStartsAt(whole, p) {
			words = append(words, string(w))
		}
	})
	return words
}

// ChangedWords returns the words of romanized, the romanized form of
// folded, that differ from folded's, joined by spaces: Romanize keeps
// every space, so the words of both line up.
func ChangedWords(folded, romanized string) string {
	if romanized == "" {
		return ""
	}
	var b strings.Builder
	for word := range strings.SplitSeq(romanized, " ") {
		before, rest, _ := strings.Cut(folded, " ")
		folded = rest
		if word == before {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(word)
	}
	return b.String()
}

// RomanizesHan reports whether Romanize turns the Han characters of a name
// in language into pinyin: only a Chinese name's (language "zh", "zh-…");
// a Japanese name's Han characters stay as they are.
func RomanizesHan(language string) bool { return isChinese(language) }

func isChinese(language string) bool {
	return len(language) >= 2 && strings.EqualFold(language[:2], "zh")
}

// pinyinOf returns the toneless pinyin of a Han character, or "" when the
// dictionary has none. A name is romanized once folded, its traditional
// characters simplified (Fold), and the dictionary reads some simplified
// forms of rare characters not (𫄶, of 繈, qiang): those are read as the
// traditional character they come from. The dictionary's answer costs a
// few allocations, and an import asks for every character of every
// Chinese name: each character's is kept once found (there are some
// 40,000).
func pinyinOf(r rune) string {
	if p, ok := pinyinFound.Load(r); ok {
		return p.(string)
	}
	p := ""
	if all := pinyin.SinglePinyin(r, pinyinArgs); len(all) > 0 {
		p = all[0]
	} else if t, ok := traditionalOf()[r]; ok {
		if all := pinyin.SinglePinyin(t, pinyinArgs); len(all) > 0 {
			p = all[0]
		}
	}
	pinyinFound.Store(r, p)
	return p
}

var pinyinFound sync.Map // rune -> string

// readingOfChang returns the reading of 長 (or 长) at byte i of a folded
// Chinese name: zhǎng, chief, at the end of a word after another Han
// character (貓鼬探長, 隊長), and otherwise cháng, long (長毛豬, 長尾怪手,
// 長耳兔). go-pinyin reads it zhǎng everywhere; names read it cháng but
// for the chiefs.
func readingOfChang(folded string, i int) string {
	before, _ := utf8.DecodeLastRuneInString(folded[:i])
	after, _ := utf8.DecodeRuneInString(folded[i+len("長"):])
	if unicode.Is(unicode.Han, before) && !unicode.Is(unicode.Han, after) {
		return "zhang"
	}
	return "chang"
}

// pinyinArgs asks for the first (most common) reading of a character,
// without tones: a toneless syllable is what a Latin keyboard types.
var pinyinArgs = pinyin.NewArgs()

// hasRomanizable reports whether s holds kana, or Han characters of a
// Chinese name.
func hasRomanizable(s string, chinese bool) bool {
	for _, r := range s {
		if r >= 0x30A1 && r <= 0x30FA || chinese && unicode.Is(unicode.Han, r) {
			return true
		}
	}
	return false
}

// kanaRomaji is the Hepburn romanization of one katakana of full size;
// "" for any other rune.
func kanaRomaji(r rune) string {
	if r < 0x30A1 || r > 0x30FA {
		return ""
	}
	return katakanaRomaji[r-0x30A1]
}

// katakanaRomaji holds the syllables of U+30A1 (ァ) to U+30FA (ヺ); the
// small kana are joinSmall's, and ッ is Romanize's.
var katakanaRomaji = [...]string{
	"a", "a", "i", "i", "u", "u", "e", "e", "o", "o", // ァアィイゥウェエォオ
	"ka", "ga", "ki", "gi", "ku", "gu", "ke", "ge", "ko", "go", // カガキギクグケゲコゴ
	"sa", "za", "shi", "ji", "su", "zu", "se", "ze", "so", "zo", // サザシジスズセゼソゾ
	"ta", "da", "chi", "ji", "tsu", "tsu", "zu", "te", "de", "to", "do", // タダチヂッツヅテデトド
	"na", "ni", "nu", "ne", "no", // ナニヌネノ
	"ha", "ba", "pa", "hi", "bi", "pi", "fu", "bu", "pu", "he", "be", "pe", "ho", "bo", "po", // ハバパヒビピフブプヘベペホボポ
	"ma", "mi", "mu", "me", "mo", // マミムメモ
	"ya", "ya", "yu", "yu", "yo", "yo", // ャヤュユョヨ
	"ra", "ri", "ru", "re", "ro", // ラリルレロ
	"wa", "wa", "i", "e", "o", "n", "vu", "ka", "ke", // ヮワヰヱヲンヴヵヶ
	"va", "vi", "ve", "vo", // ヷヸヹヺ
}

// isSmallKana reports whether r is a small kana that joins the syllable
// before it: ャュョ and the small vowels ァィゥェォ (ヮヵヶ are read alone).
func isSmallKana(r rune) bool {
	switch r {
	case 'ャ', 'ュ', 'ョ', 'ァ', 'ィ', 'ゥ', 'ェ', 'ォ':
		return true
	}
	return false
}

// joinSmall writes the small kana r into the syllable b ends with, as
// Hepburn writes it: キャ kya, シャ sha, チュ chu, ジョ jo, デュ dyu, フュ fyu;
// ファ fa, ティ ti, ウィ wi, イェ ye, シェ she. prev is the character before r:
// after a kana that is a vowel alone, the romaji b ends with cannot tell
// ウ's u from the vowel of フ fu or ヌ nu. With no syllable of the right
// shape before it, the small kana is read as its full-size self.
func joinSmall(b *strings.Builder, prev, r rune) {
	s := b.String()
	small := kanaRomaji(r) // ya, yu, yo, or the vowel
	vowel := small[len(small)-1:]
	n := len(s)
	last := byte(0)
	if n > 0 {
		last = s[n-1]
	}
	var stem string
	switch {
	case prev == 'ウ' && small[0] != 'y':
		// ウ + a small vowel: wi, we, wo.
		stem, small = s[:n-1]+"w", vowel
	case prev == 'イ' && small == "e":
		stem, small = s[:n-1]+"y", vowel
	case strings.ContainsRune("アイウエオ", prev):
		// A vowel alone: the small kana is read as its full-size self.
	case small[0] == 'y' && last == 'i' && n >= 2:
		// The palatal syllables: drop the i; after sh, ch and j the y too.
		stem = s[:n-1]
		if strings.HasSuffix(stem, "sh") || strings.HasSuffix(stem, "ch") || strings.HasSuffix(stem, "j") {
			small = vowel
		}
		if !isLatinConsonant(stem[len(stem)-1]) {
			stem = ""
		}
	case small[0] == 'y' && (last == 'e' || last == 'u') && n >= 2 && isLatinConsonant(s[n-2]):
		// デ de, テ te, フ fu, ヴ vu + a small ya, yu, yo: dyu, tyu, fyu, vyu.
		stem = s[:n-1]
	case small[0] != 'y' && (last == 'u' || last == 'i' || last == 'e' || last == 'o') && n >= 2 && isLatinConsonant(s[n-2]):
		// フ fu, テ te, ト to, シ shi + a small vowel: fa, ti, tu, she.
		stem = s[:n-1]
	}
	if stem == "" {
		b.WriteString(small)
		return
	}
	b.Reset()
	b.WriteString(stem)
	b.WriteString(small)
}

func isLatinConsonant(c byte) bool {
	return isLatinLetter(c) && !strings.ContainsRune("aeiou", rune(c))
}

func isLatinLetter(c byte) bool { return 'a' <= c && c <= 'z' }
