package catalog

import (
	"encoding/binary"
	"math"
	"strings"
)

// The normalized printed number (docs/CONTRACT.md, Printed-number order) is the part of a printed
// number before the first "/", folded and trimmed, with the leading zeros of
// every digit run dropped: "25", "025" and "25/102" all normalize to "25",
// and "TG02" to "tg2". Two printed numbers are equal when their normalized
// forms are.
//
// NumberKey turns a printed number into a byte string whose byte order is the
// order of docs/CONTRACT.md, Printed-number order: first the value of the first digit run (numbers
// without digits after all others), then the normalized form with every digit
// run compared by value. So 1 < 2 < TG02 < 3 < 10 < 025/165 < 112/102 < A.
// The key is self-delimiting: a card id may follow it in a composite key
// without changing the order.

// NormalizeNumber returns the normalized printed number of printed. The
// number is folded before it is cut at the first "/", so that a full-width
// "／" cuts it too.
func NormalizeNumber(printed string) string {
	return NormalizeFoldedNumber(Fold(printed))
}

// NormalizeFoldedNumber is NormalizeNumber of s, which must be folded
// already (Fold(s) == s), as a search term is: folding it again would
// cost more than the rest.
func NormalizeFoldedNumber(s string) string {
	before, _, _ := strings.Cut(s, "/")
	folded := strings.TrimSpace(before)
	if !strings.ContainsAny(folded, "0123456789") {
		return folded
	}
	var buf [64]byte
	return string(appendNumberForm(buf[:0], folded))
}

// appendNumberForm appends s with the zeros before each digit run dropped
// ("0" stays) and ASCII letters in lower case. Lowering is all that Fold
// does to a plain number (appendNormalizedPlainNumber), and nothing to a
// folded one, which has no capital ASCII letters left: one loop serves
// both.
func appendNumberForm(dst []byte, s string) []byte {
	for i := 0; i < len(s); {
		if c := s[i]; !isDigit(c) {
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			dst = append(dst, c)
			i++
			continue
		}
		j := i
		for j < len(s) && isDigit(s[j]) {
			j++
		}
		run := strings.TrimLeft(s[i:j], "0")
		if run == "" {
			run = "0"
		}
		dst = append(dst, run...)
		i = j
	}
	return dst
}

// Key bytes. The escape keeps a 0x00 inside a number from ending the key.
const (
	keyHasDigits byte = 0x00
	keyNoDigits  byte = 0x01
	keyDigitRun  byte = 0x01 // before a digit run, below every other byte but the escape
	keyEscape    byte = 0x00 // before 0xFE or 0xFF: a literal 0x00 or 0x01
	keyEscaped   byte = 0xFF
	keyEnd       byte = 0x00 // with keyEndMark: the end of the key
	keyEndMark   byte = 0x00
)

// AppendNumberKey appends the sort key of a printed number to dst. A
// number of printable ASCII without white space, as nearly every printed
// number is, is normalized in a buffer on the stack: a card by id appends
// the key of the number its id names on every lookup.
func AppendNumberKey(dst []byte, printed string) []byte {
	var buf [32]byte
	if norm, ok := appendNormalizedPlainNumber(buf[:0], printed); ok {
		return AppendNormalizedNumberKey(dst, norm)
	}
	return AppendNormalizedNumberKey(dst, NormalizeNumber(printed))
}

// appendNormalizedPlainNumber appends NormalizeNumber(printed) to dst when
// every byte of printed is printable ASCII other than the space. Fold of
// such a number only lowers its case, and trimming finds no space to
// trim: what is left is the cut at "/" and the leading zeros of its digit
// runs. ok is false, and dst as it was, for any other number.
func appendNormalizedPlainNumber(dst []byte, printed string) (norm []byte, ok bool) {
	for i := 0; i < len(printed); i++ {
		if c := printed[i]; c <= ' ' || c > '~' {
			return dst, false
		}
	}
	before, _, _ := strings.Cut(printed, "/")
	return appendNumberForm(dst, before), true
}

// NumberKey returns the sort key of a printed number.
func NumberKey(printed string) []byte { return AppendNumberKey(nil, printed) }

// AppendNormalizedNumberKey appends the key of norm, a number as
// NormalizeNumber or NormalizeFoldedNumber gives it: the class byte; for
// numbers with digits, the first digit run as a length-prefixed value; then
// the whole normalized form with every digit run length-prefixed, so that
// runs compare by value whatever their width; then the end mark.
func AppendNormalizedNumberKey[S ~string | ~[]byte](dst []byte, norm S) []byte {
	first, ok := firstDigitRun(norm)
	if ok {
		dst = append(dst, keyHasDigits)
		dst = appendDigitRun(dst, first)
	} else {
		dst = append(dst, keyNoDigits)
	}
	for i := 0; i < len(norm); {
		c := norm[i]
		if isDigit(c) {
			j := i
			for j < len(norm) && isDigit(norm[j]) {
				j++
			}
			dst = append(dst, keyDigitRun)
			dst = appendDigitRun(dst, norm[i:j])
			i = j
			continue
		}
		if c == keyEscape || c == keyDigitRun {
			dst = append(dst, keyEscape, keyEscaped-1+c)
		} else {
			dst = append(dst, c)
		}
		i++
	}
	return append(dst, keyEnd, keyEndMark)
}

// appendDigitRun encodes a run of digits without leading zeros so that byte
// order is numeric order: its length, then the digits. A length under 255 is
// one byte; a longer one is 0xFF and four bytes, which sorts after.
func appendDigitRun[S ~string | ~[]byte](dst []byte, run S) []byte {
	if n := len(run); n < 0xFF {
		dst = append(dst, byte(n))
	} else {
		dst = append(dst, 0xFF)
		dst = binary.BigEndian.AppendUint32(dst, uint32(min(n, math.MaxUint32)))
	}
	return append(dst, run...)
}

func firstDigitRun[S ~string | ~[]byte](s S) (S, bool) {
	i := 0
	for i < len(s) && !isDigit(s[i]) {
		i++
	}
	if i == len(s) {
		return s[:0], false
	}
	j := i
	for j < len(s) && isDigit(s[j]) {
		j++
	}
	return s[i:j], true
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }
