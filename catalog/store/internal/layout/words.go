package layout

import (
	"math"
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
// script, in order, each with its value (WordValue). The backward words
// are the longer ones (catalog/store/build/words.go, minBackwardWord),
// each written from its end, for the walk of a term two edits away
// (catalog/store/words.go, nearWords).
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

// The value of a word in the dictionary names the cards whose search
// texts hold it, when they are few: a mistyped term's near words are then
// read as a list of their own cards, not through their grams, whose lists
// hold every card with the word inside a longer one. A word held by more
// than MaxWordCards cards, or by a name group's text, has 0, and its cards
// are found by its grams, as a term's are; so has every word of a file
// written before words had values, which is answered as before.
const MaxWordCards = 2

// GroupWord is the card a word of a name group's text is sorted with by
// the build: no card has that ordinal.
const GroupWord = math.MaxUint32

// WordValue returns the value of a word held by the cards of ascending
// ordinals cards, at most MaxWordCards of them: each ordinal plus one, the
// first in the low 32 bits.
func WordValue(cards []uint32) uint64 {
	var v uint64
	for i, c := range cards {
		v |= uint64(c+1) << (32 * i)
	}
	return v
}

// WordCards returns the cards a word's value names, in ascending order,
// none for 0; ok is false when the value is not one WordValue returns.
func WordCards(v uint64) (cards [MaxWordCards]uint32, n int, ok bool) {
	for i := range MaxWordCards {
		c := uint32(v >> (32 * i))
		if c == 0 {
			break
		}
		cards[i], n = c-1, i+1
	}
	ok = v>>(32*n) == 0
	for i := 1; i < n; i++ {
		ok = ok && cards[i-1] < cards[i]
	}
	return cards, n, ok
}
