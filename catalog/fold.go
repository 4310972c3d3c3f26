package catalog

import (
	_ "embed"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/runes"
	"golang.org/x/text/transform"
	"golang.org/x/text/unicode/norm"
)

// Fold maps a name or a query term to the form search compares (docs/CONTRACT.md,
// Search): Unicode NFKC, which also unifies full-width and half-width
// forms; case folding; diacritics removed from letters, but not the kana
// voicing marks, so that ガ stays distinct from カ; hiragana folded to
// katakana; traditional Chinese characters folded to simplified ones;
// runs of white space collapsed to one space and the ends trimmed.
//
// Fold is idempotent: Fold(Fold(s)) == Fold(s).
func Fold(s string) string {
	if isPlainASCII(s) {
		return foldASCII(s)
	}
	if !utf8.ValidString(s) {
		// The transforms of the chain do not agree on invalid bytes (one
		// can swallow the diacritic that follows them): each run of them
		// becomes one U+FFFD first.
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	f := folders.Get().(transform.Transformer)
	f.Reset()
	out, _, err := transform.String(f, s)
	folders.Put(f)
	if err != nil {
		// s is valid UTF-8 by now, and no step of the chain fails on any.
		// What is left is the chain's own plumbing: it passes text from
		// step to step in fixed buffers and gives up when a step cannot
		// make progress in them, which no input is known to cause (norm
		// bounds its segments; case folding goes rune by rune). Should it
		// happen, keep s as it is, not the part folded so far, rather than
		// lose the name.
		out = s
	}
	return collapseSpace(out)
}

// foldScript finishes, rune by rune, what the steps before it leave
// undone. Cherokee folds to the capital letters (the small ones came
// later), but cases.Fold maps to the other case either way, so that folding
// twice would undo it. Hiragana becomes the katakana of the same sound: the
// text is decomposed at this point, the voicing marks apart, and the NFKC
// after it composes them with the katakana, some of which compose where
// their hiragana do not (ワ and U+3099 are ヷ; わ and U+3099 stay two runes).
// The typographic apostrophes and hyphens, which names are printed with
// and phones type, become the ASCII ones that keyboards type:
// Professor’s Research is Professor's Research. A traditional Chinese
// character becomes its simplified form, so that a name printed in either
// is found by a query typed in the other (寶可夢 and 宝可梦).
func foldScript(r rune) rune {
	switch r {
	case '\u2018', '\u2019', '\u201B', '\u02BC':
		return '\''
	case '\u2010', '\u2011':
		return '-'
	}
	switch {
	case r >= '\uAB70' && r <= '\uABBF':
		return r - 0xAB70 + 0x13A0
	case r >= '\u13F8' && r <= '\u13FD':
		return r - 8
	case isHiragana(r):
		return r + 0x60
	case inHanBlocks(r):
		if s, ok := simplifiedOf()[r]; ok {
			return s
		}
	}
	return r
}

// simplifiedText is the simplified form of each traditional Chinese
// character: one pair a line, tab-separated, after comment lines that
// start with "#". simplified.sh writes it from OpenCC's table.
//
//go:embed simplified.txt
var simplifiedText string

// inHanBlocks reports whether r lies where every traditional character of
// simplifiedText does: in CJK Extension A or the unified ideographs, or in
// the supplementary planes' extensions. Kana and Hangul are not looked up.
func inHanBlocks(r rune) bool {
	return '\u3400' <= r && r <= '\u9FFF' || r >= '\U00020000'
}

// simplifiedOf returns simplifiedText as a map, read on first use.
var simplifiedOf = sync.OnceValue(func() map[rune]rune {
	m := make(map[rune]rune, 4200)
	eachSimplified(func(from, to rune) { m[from] = to })
	return m
})

// traditionalOf maps a simplified character to the first traditional
// one of simplifiedText that folds to it, read on first use.
var traditionalOf = sync.OnceValue(func() map[rune]rune {
	m := make(map[rune]rune, 4200)
	eachSimplified(func(from, to rune) {
		if _, ok := m[to]; !ok {
			m[to] = from
		}
	})
	return m
})

// eachSimplified calls pair with each pair of simplifiedText, in order.
func eachSimplified(pair func(from, to rune)) {
	for line := range strings.Lines(simplifiedText) {
		from, to, ok := strings.Cut(strings.TrimSuffix(line, "\n"), "\t")
		if !ok || strings.HasPrefix(line, "#") {
			continue
		}
		f, fw := utf8.DecodeRuneInString(from)
		t, tw := utf8.DecodeRuneInString(to)
		if fw == len(from) && tw == len(to) && inHanBlocks(f) {
			pair(f, t)
		}
	}
}

// folders recycles transform chains: building one costs more than folding a
// name with it, and a chain holds state, so each call needs one of its own.
var folders = sync.Pool{New: func() any { return newFolder() }}

// newFolder builds the transform chain.
func newFolder() transform.Transformer {
	return transform.Chain(
		norm.NFKC,
		cases.Fold(),
		norm.NFD,
		runes.Remove(runes.Predicate(isDiacritic)),
		runes.Map(foldScript),
		norm.NFKC,
	)
}

// isDiacritic reports whether r is a combining mark to drop, or an invisible
// format character (a zero-width joiner, say) that would split a word. The
// kana voicing marks (U+3099, U+309A) are kept: they tell ガ from カ.
func isDiacritic(r rune) bool {
	if r == '\u3099' || r == '\u309A' {
		return false
	}
	return unicode.In(r, unicode.Mn, unicode.Cf)
}

// isHiragana covers the letters ぁ..ゖ and the iteration marks ゝ ゞ, which have
// katakana counterparts exactly 0x60 above.
func isHiragana(r rune) bool {
	return (r >= '\u3041' && r <= '\u3096') || r == '\u309D' || r == '\u309E'
}

func isPlainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// foldASCII is Fold for ASCII input, without the allocations of the
// transform chain: lower case and collapsed white space.
func foldASCII(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == ' ' || ('\t' <= c && c <= '\r') {
			space = b.Len() > 0
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		b.WriteByte(c)
	}
	return b.String()
}

// collapseSpace trims s and replaces each run of white space with one space.
func collapseSpace(s string) string {
	return strings.Join(strings.FieldsFunc(s, unicode.IsSpace), " ")
}
