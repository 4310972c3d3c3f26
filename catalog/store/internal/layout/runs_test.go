package layout

import (
	"slices"
	"strconv"
	"testing"
)

// TestEachRun finds the maximal runs of short patterns, by their least
// rotation.
func TestEachRun(t *testing.T) {
	for text, want := range map[string][]string{
		"8888":           {"8:4"},
		"888":            nil,
		"x88888y 1111":   {"8:5", "1:4"},
		"2121212":        {"12:7"},
		"21212":          nil,
		"bcabcabca":      {"abc:9"},
		"1212 1212":      nil,
		"アアアアアア":         {"ア:6"},
		"ab ab ab ab ab": nil,
	} {
		var got []string
		EachRun([]byte(text), func(p []rune, n int) { got = append(got, string(p)+":"+strconv.Itoa(n)) })
		if !slices.Equal(got, want) {
			t.Errorf("runs of %q: %q, want %q", text, got, want)
		}
	}
}
