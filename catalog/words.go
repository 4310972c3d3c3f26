package catalog

import (
	"unicode"
	"unicode/utf8"
)

// The words of a name (docs/CONTRACT.md: Name groups, Typos, As you
// type): the runs of a folded text between word boundaries, which are
// white space, punctuation, symbols and changes of script. The index and
// the checks of a query cut texts alike, through these.

// EachWord calls fn with each word of a folded text: the runs between
// word boundaries (white space, punctuation, symbols and changes of
// script), without the separators. "リザードンex" holds "リザードン" and
// "ex"; "ミュウツーgx" holds "ミュウツー" and "gx": a change of script is one
// between two letters, whatever digits or signs of no script (the long
// mark ー) lie between them, and the new word starts at the first letter
// of the new script.
func EachWord(text []byte, fn func(word []byte)) {
	start, script := -1, 0 // script: of the word's letters so far
	for i := 0; i < len(text); {
		r, w := rune(text[i]), 1
		var sep bool
		if r < utf8.RuneSelf {
			sep = asciiSeparators[r]
		} else {
			r, w = utf8.DecodeRune(text[i:])
			sep = IsNameSeparator(r)
		}
		s := 0
		if !sep {
			s = ScriptOf(r)
		}
		if start >= 0 && (sep || scriptChange(script, s)) {
			fn(text[start:i])
			start = -1
		}
		if start < 0 && !sep {
			start, script = i, 0
		}
		if s != 0 {
			script = s
		}
		i += w
	}
	if start >= 0 {
		fn(text[start:])
	}
}

// LeadingWord returns the first word of text (EachWord) when text starts
// with it, and nil when text starts with a separator.
func LeadingWord(text []byte) []byte {
	var first []byte
	EachWord(text, func(w []byte) {
		if first == nil && cap(w) == cap(text) {
			first = w
		}
	})
	return first
}

// WordStartsAt reports whether a word of text (EachWord) starts at byte
// i, the start of a character.
func WordStartsAt(text []byte, i int) bool {
	r, _ := utf8.DecodeRune(text[i:])
	if IsNameSeparator(r) {
		return false
	}
	if i == 0 {
		return true
	}
	s := ScriptOf(r)
	for j := i; j > 0; {
		prev, w := utf8.DecodeLastRune(text[:j])
		if IsNameSeparator(prev) {
			return j == i
		}
		if p := ScriptOf(prev); p != 0 {
			return scriptChange(p, s)
		}
		j -= w
	}
	return false
}

// asciiSeparators is IsNameSeparator of each ASCII character, for the
// characters of nearly every Latin name.
var asciiSeparators = func() (seps [utf8.RuneSelf]bool) {
	for r := range seps {
		seps[r] = IsNameSeparator(rune(r))
	}
	return seps
}()

// EachWholeWords calls fn with every run of whole words of a folded name,
// at most maxLen bytes long: every substring that starts and ends at a
// word boundary and neither starts nor ends with white space. A boundary
// is an end of the name, a separator (white space, punctuation, a symbol)
// on either side, or a change of script: so "リザードンex" holds
// "リザードン", "dark charizard" holds "charizard", "nidoran♀ ex" holds
// "nidoran♀", and "mewtwo" does not hold "mew".
func EachWholeWords(folded []byte, maxLen int, fn func(words []byte)) {
	// One pass finds where a run may start and where it may end; the
	// runs are the pairs of those.
	var startsBuf, endsBuf [32]int
	starts, ends := startsBuf[:0], endsBuf[:0]
	prev, script := rune(-1), 0 // script: as EachWord's
	for i, r := range string(folded) {
		sep := IsNameSeparator(r)
		s := 0
		if !sep {
			s = ScriptOf(r)
		}
		bound := prev < 0 || sep || IsNameSeparator(prev) || scriptChange(script, s)
		if bound && prev >= 0 && !unicode.IsSpace(prev) {
			ends = append(ends, i)
		}
		if bound && !unicode.IsSpace(r) {
			starts = append(starts, i)
		}
		switch {
		case sep:
			script = 0
		case s != 0:
			script = s
		}
		prev = r
	}
	if prev >= 0 && !unicode.IsSpace(prev) {
		ends = append(ends, len(folded))
	}
	for _, s := range starts {
		for _, e := range ends {
			if e-s > maxLen {
				break
			}
			if e > s {
				fn(folded[s:e])
			}
		}
	}
}

// IsNameSeparator reports whether r separates words: white space,
// punctuation or a symbol.
func IsNameSeparator(r rune) bool {
	if letterBlock(r) != 0 {
		return false
	}
	return unicode.IsSpace(r) || unicode.IsPunct(r) || unicode.IsSymbol(r)
}

// SplitUnspacedWords returns a printed name with a space at each change
// between hiragana and katakana (the long mark ー counted with katakana)
// and on either side of each 的, and whether it added any. Japanese and
// Chinese write no space between words, but a name of katakana stands
// apart from the hiragana beside it (わるいリザードン, カツラのリザードン:
// Dark Charizard, Blaine's Charizard), and a Chinese name from the
// possessive 的 (N的索羅亞, N's Zorua). Folding makes hiragana katakana,
// so the changes are found in the name as printed; the name's groups are
// found in both its folded name and this one, folded (docs/CONTRACT.md,
// Name groups).
func SplitUnspacedWords(name []byte) ([]byte, bool) {
	var b []byte // nil until a space is added
	prev := 0    // of the last rune: 1 hiragana, 2 katakana, 0 neither
	for i := 0; i < len(name); {
		r, w := utf8.DecodeRune(name[i:])
		kind := 0
		switch {
		case isHiragana(r):
			kind = 1
		case r == 'ー' || r == 'ｰ' || unicode.Is(unicode.Katakana, r):
			kind = 2
		case isVoicingMark(r) && prev != 0:
			kind = prev // of the kana it voices, precomposed or not
		}
		if apart := r == '的' || kind != 0 && prev != 0 && kind != prev; apart && b == nil {
			b = append(make([]byte, 0, len(name)+8), name[:i]...)
		}
		switch {
		case r == '的':
			b = append(b, " 的 "...)
		case kind != 0 && prev != 0 && kind != prev:
			b = append(append(b, ' '), name[i:i+w]...)
		case b != nil:
			b = append(b, name[i:i+w]...)
		}
		prev, i = kind, i+w
	}
	if b == nil {
		return name, false
	}
	return b, true
}

// A word's ending names what the word is when the word is made of at
// least minModifierRunes characters and then at least minEndingRunes
// (EachWordEnding).
const (
	minModifierRunes = 2
	minEndingRunes   = 3
)

// EachWordEnding calls fn with the endings of a word of kana or Han
// (EachWord, of a folded text: its kana are katakana) that may name what
// the word is, the longest first, until fn returns true. A Japanese or
// Chinese compound puts what it names last, after what modifies it:
// メガリザードン (Mega Charizard), アローラロコン (Alolan Vulpix), 光辉喷火龙
// (Radiant Charizard). The ending is at least minEndingRunes characters,
// so that 伊布 (Eevee) is not taken out of 仙子伊布 (Sylveon), and follows
// at least minModifierRunes, the shortest of the modifiers. A word of any
// other script has none: its words are written apart.
func EachWordEnding(word []byte, fn func(ending []byte) bool) {
	if s := firstScript(word); s != ScriptOf('カ') && s != ScriptOf('字') {
		return
	}
	total, runes := utf8.RuneCount(word), 0
	for i := 0; runes < total-minEndingRunes; {
		_, w := utf8.DecodeRune(word[i:])
		i += w
		if runes++; runes >= minModifierRunes && fn(word[i:]) {
			return
		}
	}
}

// firstScript returns the script of the first letter of word (ScriptOf),
// or 0 when it has none: digits and the long mark before it have none.
func firstScript(word []byte) int {
	for _, r := range string(word) {
		if s := ScriptOf(r); s != 0 {
			return s
		}
	}
	return 0
}

// isVoicingMark reports whether r is a kana voicing mark, combining or
// not, full-width or half: what a name not composed (NFD) or of half-width
// katakana writes after the kana it voices.
func isVoicingMark(r rune) bool {
	switch r {
	case '\u3099', '\u309A', '\u309B', '\u309C', '\uFF9E', '\uFF9F':
		return true
	}
	return false
}

// scriptChange reports whether a letter of script b, after letters of
// script a in a word (ScriptOf; 0 for none yet, or for a character of no
// script), starts a word of its own.
func scriptChange(a, b int) bool {
	return a != 0 && b != 0 && a != b
}

// scripts are the scripts of the names of the catalogue, told apart; a
// letter of any other is its own kind.
var scripts = [...]*unicode.RangeTable{unicode.Latin, unicode.Katakana, unicode.Hiragana, unicode.Han, unicode.Hangul, unicode.Cyrillic, unicode.Greek, unicode.Thai}

// MaxScript is the largest script ScriptOf returns: that of a letter of a
// script not in scripts.
const MaxScript = len(scripts) + 1

// ScriptOf returns the script of r, 1 to MaxScript, or 0 for a character
// of no script: a digit, a mark, a sign every script uses (the long mark
// ー among them). Kana are one script, for folded names hold katakana.
func ScriptOf(r rune) int {
	if r < utf8.RuneSelf {
		if 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' {
			return 1
		}
		return 0
	}
	if s := letterBlock(r); s != 0 {
		return s
	}
	if unicode.Is(unicode.Lm, r) {
		return 0 // a modifier, as the long mark ー: of no script
	}
	for i, t := range scripts {
		if unicode.Is(t, r) {
			if t == unicode.Hiragana {
				return 2 // kana are one script: folded names hold katakana
			}
			return i + 1
		}
	}
	if unicode.IsLetter(r) {
		return len(scripts) + 1
	}
	return 0
}

// letterBlock returns the script of r when r is in a range of letters of
// one script that most names of the catalogue are written in (Han
// ideographs, katakana, hiragana), and 0 otherwise: it spares the search of
// Unicode's tables for nearly every character of a Japanese or Chinese
// name.
func letterBlock(r rune) int {
	switch {
	case 0x4E00 <= r && r <= 0x9FFF:
		return 4 // unicode.Han in scripts
	case 0x30A1 <= r && r <= 0x30FA, 0x3041 <= r && r <= 0x3096:
		return 2 // kana
	}
	return 0
}
