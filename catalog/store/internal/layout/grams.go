package layout

import "unicode/utf8"

// EachGram calls fn with every run of n neighbouring characters of a
// folded name or term that holds no space: terms never do, so such runs
// are never looked up.
func EachGram(text []byte, n int, fn func(gram []byte)) {
	for len(text) > 0 {
		end, spaced := 0, false
		for i := 0; i < n; i++ {
			if end == len(text) {
				return
			}
			_, w := utf8.DecodeRune(text[end:])
			spaced = spaced || text[end] == ' '
			end += w
		}
		if !spaced {
			fn(text[:end])
		}
		_, w := utf8.DecodeRune(text)
		text = text[w:]
	}
}

// EachShortGram calls fn with every run of one, two and three neighbouring
// characters of a text that holds no space, and its length n: what
// EachGram gives for each n, in one pass.
func EachShortGram(text []byte, fn func(n int, gram []byte)) {
	var starts [3]int // of the last three characters, the latest last
	n := 0            // characters since the last space, up to three
	for i := 0; i < len(text); {
		_, w := utf8.DecodeRune(text[i:])
		if text[i] == ' ' {
			n, i = 0, i+w
			continue
		}
		starts[0], starts[1], starts[2] = starts[1], starts[2], i
		n = min(n+1, 3)
		for k := 1; k <= n; k++ {
			fn(k, text[starts[3-k]:i+w])
		}
		i += w
	}
}
