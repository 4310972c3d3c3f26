package catalog

import (
	"bytes"
	"slices"
	"testing"
)

func TestNumberKeyOrder(t *testing.T) {
	// docs/CONTRACT.md, Printed-number order, with numbers without digits last.
	ordered := []string{"1", "2", "TG02", "3", "10", "025/165", "112/102", "SV-P", "XY"}
	for i := 0; i+1 < len(ordered); i++ {
		a, b := NumberKey(ordered[i]), NumberKey(ordered[i+1])
		if bytes.Compare(a, b) >= 0 {
			t.Errorf("NumberKey(%q) >= NumberKey(%q)", ordered[i], ordered[i+1])
		}
	}
	// A run of digits comes before every other character, at any place.
	for _, pair := range [][2]string{{"A1-1", "A-1"}, {"T1", "T 1"}, {"B2a", "B!2"}} {
		if bytes.Compare(NumberKey(pair[0]), NumberKey(pair[1])) >= 0 {
			t.Errorf("NumberKey(%q) >= NumberKey(%q)", pair[0], pair[1])
		}
	}
	shuffled := slices.Clone(ordered)
	slices.Reverse(shuffled)
	slices.SortFunc(shuffled, func(a, b string) int { return bytes.Compare(NumberKey(a), NumberKey(b)) })
	if !slices.Equal(shuffled, ordered) {
		t.Errorf("sorted by key: %q, want %q", shuffled, ordered)
	}
}

func TestNumberKeyEquality(t *testing.T) {
	equal := [][]string{
		{"25", "025", "25/102", "025/165", "０２５"},
		{"TG02", "tg2", "TG002/TG30"},
		{"SWSH001", "swsh1"},
	}
	for _, group := range equal {
		for _, n := range group[1:] {
			if NormalizeNumber(n) != NormalizeNumber(group[0]) {
				t.Errorf("NormalizeNumber(%q) = %q, NormalizeNumber(%q) = %q; want equal", n, NormalizeNumber(n), group[0], NormalizeNumber(group[0]))
			}
			if !bytes.Equal(NumberKey(n), NumberKey(group[0])) {
				t.Errorf("NumberKey(%q) != NumberKey(%q)", n, group[0])
			}
		}
	}
	if bytes.Equal(NumberKey("25"), NumberKey("250")) {
		t.Error("25 and 250 have the same key")
	}
}

// TestNumberKeyOfPlainNumbers: a number of printable ASCII without white
// space is normalized apart, on the stack; its key is the one the general
// way gives, at the edges of what is plain too.
func TestNumberKeyOfPlainNumbers(t *testing.T) {
	numbers := []string{
		"025/073", "25", "0", "000", "0/0", "/5", "TG02", "SV-P", "sv-p", "A1-01a007",
		"!~", "0~0", "1234567890123456789012345678901234567890/2", "AbC" + string(bytes.Repeat([]byte("0"), 40)) + "9",
		// Not plain: the general way alone.
		"25 /73", " 25", "25\t", "ＴＧ０２", "é1", "a\x00", "a\x7f1", "",
	}
	for _, n := range numbers {
		general := AppendNormalizedNumberKey(nil, NormalizeFoldedNumber(Fold(n)))
		if got := NumberKey(n); !bytes.Equal(got, general) {
			t.Errorf("NumberKey(%q) = %x, want %x, the key of %q", n, got, general, NormalizeNumber(n))
		}
	}
	dst := make([]byte, 0, 64)
	if allocs := testing.AllocsPerRun(100, func() { dst = AppendNumberKey(dst[:0], "TG025/TG030") }); allocs != 0 {
		t.Errorf("AppendNumberKey of a plain number allocates %v times, want none", allocs)
	}
}

// TestNumberKeyIsSelfDelimiting: a card id appended to the key must not
// change the order of two different numbers.
func TestNumberKeyIsSelfDelimiting(t *testing.T) {
	pairs := [][2]string{{"1", "10"}, {"A", "AB"}, {"2", "TG02"}, {"a\x00", "a"}, {"a\x01b", "a"}}
	for _, p := range pairs {
		lo, hi := p[0], p[1]
		if bytes.Compare(NumberKey(lo), NumberKey(hi)) > 0 {
			lo, hi = hi, lo
		}
		a := append(NumberKey(lo), "\xff\xff-id"...)
		b := append(NumberKey(hi), "\x00"...)
		if bytes.Compare(a, b) >= 0 {
			t.Errorf("key of %q plus an id sorts after key of %q plus an id", lo, hi)
		}
	}
}

func TestNumberKeyLongDigitRuns(t *testing.T) {
	long := "1" + string(bytes.Repeat([]byte("0"), 300))
	if bytes.Compare(NumberKey("99999999999999999999"), NumberKey(long)) >= 0 {
		t.Error("a 21-digit number does not sort before a 301-digit one")
	}
}

func BenchmarkNumberKey(b *testing.B) {
	var dst []byte
	for _, n := range []string{"025/165", "TG02", "SV-P 012"} {
		b.Run(n, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				dst = AppendNumberKey(dst[:0], n)
			}
		})
	}
}
