package layout

import "unicode/utf8"

// Lists of runs. A term whose characters repeat a short pattern (8888888,
// 1212121, abcabcabc) has one to three distinct trigrams, whose lists hold
// every name with three such characters in a row: on a million serial
// numbers, thousands of cards read and checked to find one. So a card is
// also on the lists of the runs of its search text: each maximal run of a
// pattern of one to three characters (its smallest period), at least
// MinRun long, is posted under its pattern, rotated to its least form,
// once for each of RunLengths up to its length. A term with such a run
// walks the list of the longest length its run reaches, which holds only
// the cards with a run of that pattern as long as the term's (up to 12
// characters) or nearly.

// PostingRun is the kind of such a list: + a pattern's UTF-8 and a byte,
// the index of a length in RunLengths.
const PostingRun byte = 'p'

// RunLengths are the lengths of runs that lists are kept for: every
// length up to 12, so that a term of a run that short reads the runs at
// least as long as its own, then each about a quarter longer than the
// last: a longer run is rarer still.
var RunLengths = [...]int{4, 5, 6, 7, 8, 9, 10, 11, 12, 15, 19, 24, 30, 38, 48, 60, 75, 94, 118, 148, 185}

// MinRun returns the shortest run of a pattern of p characters posted:
// shorter ones have enough distinct grams. Each is one of RunLengths.
func MinRun(p int) int { return [...]int{0, 4, 6, 9}[p] }

// MaxRunPattern is the longest pattern a run is posted for.
const MaxRunPattern = 3

// EachRun calls fn with each maximal run of text, at least MinRun long,
// whose characters repeat a pattern of 1 to MaxRunPattern characters that
// is its smallest period and holds no space: the pattern rotated to its
// least form, and the run's length in characters.
func EachRun(text []byte, fn func(pattern []rune, length int)) {
	var buf [64]rune
	runes := buf[:0]
	for _, r := range string(text) {
		runes = append(runes, r)
	}
	for p := 1; p <= MaxRunPattern; p++ {
		start := 0
		for end := p; end <= len(runes); end++ {
			if end < len(runes) && runes[end] == runes[end-p] && runes[end] != ' ' {
				continue
			}
			if end-start >= MinRun(p) && SmallestPeriod(runes[start:start+p]) == p {
				fn(LeastRotation(runes[start:start+p]), end-start)
			}
			start = max(end-p+1, 0)
		}
	}
}

// SmallestPeriod returns the smallest period of a pattern of up to three
// characters, repeated: 1 when they are all one, else its length; and 0
// when it holds a space.
func SmallestPeriod(pattern []rune) int {
	same := true
	for _, r := range pattern {
		if r == ' ' {
			return 0
		}
		same = same && r == pattern[0]
	}
	if same {
		return 1
	}
	return len(pattern)
}

// LeastRotation returns the rotation of pattern that is least,
// character by character.
func LeastRotation(pattern []rune) []rune {
	var best [MaxRunPattern]rune
	n := copy(best[:], pattern)
	for i := 1; i < len(pattern); i++ {
		var rot [MaxRunPattern]rune
		copy(rot[:], pattern[i:])
		copy(rot[len(pattern)-i:], pattern[:i])
		for j := range n {
			if rot[j] != best[j] {
				if rot[j] < best[j] {
					best = rot
				}
				break
			}
		}
	}
	return append([]rune(nil), best[:n]...)
}

// AppendRunKey appends the key of the list of the runs of pattern at
// least RunLengths[i] long.
func AppendRunKey(dst []byte, pattern []rune, i int) []byte {
	var term [MaxRunPattern*utf8.UTFMax + 1]byte
	t := term[:0]
	for _, r := range pattern {
		t = utf8.AppendRune(t, r)
	}
	return AppendListKey(dst, PostingRun, append(t, byte(i)))
}

// EachRunKey calls fn with the key of every list of runs a card whose
// search text is text is on.
func EachRunKey(text []byte, fn func(key []byte)) {
	var key []byte
	EachRun(text, func(pattern []rune, length int) {
		for i, l := range RunLengths {
			if l > length {
				break
			}
			if l >= MinRun(len(pattern)) {
				key = AppendRunKey(key[:0], pattern, i)
				fn(key)
			}
		}
	})
}

// TermRunKey returns the key of the list of runs that every card holding
// term, which holds no space, is on, and false when the term has no run
// long enough: that of its longest run, at the longest length the run
// reaches.
func TermRunKey(term []byte) ([]byte, bool) {
	var pattern []rune
	longest := 0
	EachRun(term, func(p []rune, length int) {
		if length > longest {
			pattern, longest = p, length
		}
	})
	if longest == 0 {
		return nil, false
	}
	// The longest length the run reaches: at least MinRun, which is one
	// of RunLengths.
	i := 0
	for i+1 < len(RunLengths) && RunLengths[i+1] <= longest {
		i++
	}
	return AppendRunKey(nil, pattern, i), true
}
