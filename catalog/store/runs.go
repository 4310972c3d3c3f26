package store

import (
	"github.com/catalogd/catalogd/catalog/store/internal/layout"
)

// eachRunKey calls fn with the key of every list of runs a card whose
// search text is text is on.
func eachRunKey(text []byte, fn func(key []byte)) {
	var key []byte
	layout.EachRun(text, func(pattern []rune, length int) {
		for i, l := range layout.RunLengths {
			if l > length {
				break
			}
			if l >= layout.MinRun(len(pattern)) {
				key = layout.AppendRunKey(key[:0], pattern, i)
				fn(key)
			}
		}
	})
}

// termRunKey returns the key of the list of runs that every card holding
// term, which holds no space, is on, and false when the term has no run
// long enough: that of its longest run, at the longest length the run
// reaches.
func termRunKey(term []byte) ([]byte, bool) {
	var pattern []rune
	longest := 0
	layout.EachRun(term, func(p []rune, length int) {
		if length > longest {
			pattern, longest = p, length
		}
	})
	if longest == 0 {
		return nil, false
	}
	// The longest length the run reaches: at least minRun, which is one
	// of runLengths.
	i := 0
	for i+1 < len(layout.RunLengths) && layout.RunLengths[i+1] <= longest {
		i++
	}
	return layout.AppendRunKey(nil, pattern, i), true
}
