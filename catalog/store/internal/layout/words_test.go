package layout

import (
	"slices"
	"testing"
)

// TestWordValue reads back the cards each value names, and refuses the
// values no build writes.
func TestWordValue(t *testing.T) {
	for _, cards := range [][]uint32{nil, {0}, {7}, {0, 1}, {3, 9_999_999}, {GroupWord - 1}} {
		v := WordValue(cards)
		got, n, ok := WordCards(v)
		if !ok || !slices.Equal(got[:n], cards) {
			t.Errorf("WordValue(%v) = %#x, read as %v (ok %v)", cards, v, got[:n], ok)
		}
	}
	if WordValue(nil) != 0 {
		t.Errorf("a word of no cards named has value %#x, want 0", WordValue(nil))
	}
	for _, v := range []uint64{
		1 << 32,   // a second card without a first
		2 | 2<<32, // one card twice
		5 | 3<<32, // out of order
		WordValue([]uint32{4, 2}),
	} {
		if cards, n, ok := WordCards(v); ok {
			t.Errorf("WordCards(%#x) = %v, want it refused", v, cards[:n])
		}
	}
}
