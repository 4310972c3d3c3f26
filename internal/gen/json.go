package gen

import "unicode/utf8"

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string. strconv.Quote is not a JSON
// encoder (it writes \x.. and \U........ escapes); this follows RFC 8259:
// quote, backslash and control characters are escaped, invalid UTF-8 becomes
// U+FFFD as encoding/json does, and U+2028/U+2029 are escaped so the output
// is also safe to embed in JavaScript. Everything else is written verbatim.
func appendString[T string | []byte](dst []byte, s T) []byte {
	dst = append(dst, '"')
	dst = appendEscaped(dst, s)
	return append(dst, '"')
}

func appendEscaped[T string | []byte](dst []byte, s T) []byte {
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := decodeRune(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i++
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	return append(dst, s[start:]...)
}

// decodeRune is utf8.DecodeRune for both strings and byte slices; going
// through an interface to reach the standard one would cost an allocation
// per non-ASCII character, and most Japanese and Chinese names are nothing else.
func decodeRune[T string | []byte](s T) (rune, int) {
	const bad = utf8.RuneError
	n := len(s)
	c0 := s[0]
	cont := func(i int) bool { return i < n && s[i]&0xC0 == 0x80 }
	switch {
	case c0 < 0x80:
		return rune(c0), 1
	case c0 < 0xC2:
		return bad, 1
	case c0 < 0xE0:
		if !cont(1) {
			return bad, 1
		}
		return rune(c0&0x1F)<<6 | rune(s[1]&0x3F), 2
	case c0 < 0xF0:
		if !cont(1) || !cont(2) || (c0 == 0xE0 && s[1] < 0xA0) || (c0 == 0xED && s[1] >= 0xA0) {
			return bad, 1
		}
		return rune(c0&0x0F)<<12 | rune(s[1]&0x3F)<<6 | rune(s[2]&0x3F), 3
	case c0 < 0xF5:
		if !cont(1) || !cont(2) || !cont(3) || (c0 == 0xF0 && s[1] < 0x90) || (c0 == 0xF4 && s[1] >= 0x90) {
			return bad, 1
		}
		return rune(c0&0x07)<<18 | rune(s[1]&0x3F)<<12 | rune(s[2]&0x3F)<<6 | rune(s[3]&0x3F), 4
	}
	return bad, 1
}
