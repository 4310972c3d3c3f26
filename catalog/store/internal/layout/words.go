package layout

import (
	"unicode"
	"unicode/utf8"

	"github.com/catalogd/catalogd/catalog"
)

// MinFuzzyTerm is the code points of the shortest term that may be a
// typo: shorter terms match exactly, fuzzy or not.
const MinFuzzyTerm = 5

// TwoEditsFrom is the code points from which a term may be two edits
// from a word, not one.
const TwoEditsFrom = 9

// MinDictWord is the shortest word a term of MinFuzzyTerm may be one
// edit from (the build's minBackwardWord is the shortest a term of
// TwoEditsFrom may be two edits from).
const MinDictWord = MinFuzzyTerm - 1

// BucketWords holds the dictionary: a kind byte (WordsForward or
// WordsBackward), the script of the words (WordScripts of them) and a
// 4-byte big-endian piece number -> an FST of a range of the words of that
// script, in order. The backward words are the longer ones
// (catalog/store/build/words.go, minBackwardWord), each written from its
// end, for the walk of a term two edits away (catalog/store/words.go,
// nearWords).
var BucketWords = []byte("words")

// The kinds of the dictionary's pieces.
const (
	WordsForward  byte = 'f'
	WordsBackward byte = 'b' // each word's characters in reverse
)

// WordScripts counts the values of wordScript: 0, and each script
// catalog.ScriptOf returns.
const WordScripts = catalog.MaxScript + 1

// HasDigit reports whether text holds a decimal digit of any script.
func HasDigit(text []byte) bool {
	for _, r := range string(text) {
		if '0' <= r && r <= '9' || r >= utf8.RuneSelf && unicode.IsDigit(r) {
			return true
		}
	}
	return false
}

// DictWord reports whether a word goes into the dictionary: one that a
// term may be a few edits from.
func DictWord(word []byte) bool {
	return utf8.RuneCount(word) >= MinDictWord && !HasDigit(word)
}

// AppendReversed appends the characters of text in reverse.
func AppendReversed(dst, text []byte) []byte {
	for len(text) > 0 {
		r, w := utf8.DecodeLastRune(text)
		if r == utf8.RuneError && w == 1 {
			dst = append(dst, text[len(text)-1])
		} else {
			dst = utf8.AppendRune(dst, r)
		}
		text = text[:len(text)-w]
	}
	return dst
}
