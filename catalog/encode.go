package catalog

import (
	"strconv"
	"unicode/utf8"
)

// The catalogue stores every record as its canonical JSON so that serving a
// record is a copy, not an encoding. These appenders produce the same bytes as
// encoding/json would for the same struct, minus HTML escaping, which a JSON
// API has no use for and which would turn "<" in names into "\u003c".

// AppendJSON appends the canonical JSON of s to dst.
func (s *Set) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"id":`...)
	dst = AppendJSONString(dst, s.ID)
	dst = append(dst, `,"code":`...)
	dst = AppendJSONString(dst, s.Code)
	dst = append(dst, `,"name":`...)
	dst = AppendJSONString(dst, s.Name)
	dst = append(dst, `,"zone":`...)
	dst = AppendJSONString(dst, s.Zone)
	dst = appendNullableString(dst, `,"releasedOn":`, s.ReleasedOn)
	dst = append(dst, `,"cardCount":`...)
	dst = appendInt(dst, s.CardCount)
	return append(dst, '}')
}

// AppendJSON appends the canonical JSON of c to dst.
func (c *Card) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"id":`...)
	dst = AppendJSONString(dst, c.ID)
	dst = append(dst, `,"name":`...)
	dst = AppendJSONString(dst, c.Name)
	dst = append(dst, `,"setName":`...)
	dst = AppendJSONString(dst, c.SetName)
	dst = append(dst, `,"setCode":`...)
	dst = AppendJSONString(dst, c.SetCode)
	dst = append(dst, `,"number":`...)
	dst = AppendJSONString(dst, c.Number)
	dst = append(dst, `,"language":`...)
	dst = AppendJSONString(dst, c.Language)
	dst = appendNullableInt(dst, `,"year":`, c.Year)
	dst = append(dst, `,"variant":`...)
	dst = AppendJSONString(dst, c.Variant)
	dst = appendNullableString(dst, `,"rarity":`, c.Rarity)
	dst = appendNullableString(dst, `,"imageUrl":`, c.ImageURL)
	dst = append(dst, `,"zone":`...)
	dst = AppendJSONString(dst, c.Zone)
	dst = appendNullableInt(dst, `,"totalCards":`, c.TotalCards)
	dst = appendNullableString(dst, `,"illustrator":`, c.Illustrator)
	dst = appendNullableString(dst, `,"marketAId":`, c.MarketAID)
	dst = appendNullableString(dst, `,"marketAPath":`, c.MarketAPath)
	dst = appendNullableString(dst, `,"marketBId":`, c.MarketBID)
	dst = appendNullableString(dst, `,"scanFallbackUrl":`, c.ScanFallbackURL)
	return append(dst, '}')
}

func appendNullableInt(dst []byte, member string, n Nullable[int64]) []byte {
	if !n.Present {
		return dst
	}
	dst = append(dst, member...)
	if n.Null {
		return append(dst, "null"...)
	}
	return appendInt(dst, n.Value)
}

func appendNullableString(dst []byte, member string, n Nullable[string]) []byte {
	if !n.Present {
		return dst
	}
	dst = append(dst, member...)
	if n.Null {
		return append(dst, "null"...)
	}
	return AppendJSONString(dst, n.Value)
}

func appendInt(dst []byte, v int64) []byte { return strconv.AppendInt(dst, v, 10) }

const hexDigits = "0123456789abcdef"

// AppendJSONString appends s as a JSON string. Invalid UTF-8 becomes U+FFFD, and
// U+2028 and U+2029 are escaped, as encoding/json does.
func AppendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '"', '\\':
				dst = append(dst, '\\', b)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
