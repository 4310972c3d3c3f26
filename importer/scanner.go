package importer

import (
	"errors"
	"fmt"
	"io"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/catalogd/catalogd/catalog"
)

// scanner reads JSON from a stream one value at a time and knows, for every
// value, the line and column where it starts. It is strict: invalid UTF-8,
// control characters in strings, and everything RFC 8259 forbids are syntax
// errors. Strings longer than maxString bytes are not kept in memory.
//
// encoding/json cannot report line and column, and does not reject
// duplicate keys; a snapshot decoder that must do both has to see the tokens
// itself.
type scanner struct {
	r   io.Reader
	buf []byte
	pos int // next byte in buf
	end int // end of valid data in buf
	err error

	offset    int64 // of buf[0] in the stream
	line      int   // of buf[pos]
	lineStart int64 // stream offset of the first byte of line

	str []byte // scratch for strings
}

// Limits that keep memory bounded whatever the input.
const (
	maxString = 64 << 10 // bytes of one string value
	maxNumber = 64       // characters of one number value
	maxDepth  = 64       // nesting of skipped values
)

// syntaxError is a fault in the JSON itself: the file cannot be read past it.
type syntaxError struct {
	line, col int
	msg       string
}

func (e *syntaxError) Error() string { return fmt.Sprintf("%d:%d: %s", e.line, e.col, e.msg) }

// errTooLong marks a string value over maxString; the scanner has skipped it
// and may go on.
var errTooLong = errors.New("string too long")

// errNumberTooLong marks a number value over maxNumber characters, which no
// field takes; the scanner has skipped it and may go on.
var errNumberTooLong = errors.New("number too long")

func newScanner(r io.Reader) *scanner {
	return &scanner{r: r, buf: make([]byte, 64<<10), line: 1}
}

// position returns the line and column (in bytes, from 1) of the next byte.
func (s *scanner) position() (int, int) {
	return s.line, int(s.offset + int64(s.pos) - s.lineStart + 1)
}

// start skips white space and returns the position of the next token: the
// first byte of the value or member name that a problem is reported at.
func (s *scanner) start() (int, int) {
	s.peek()
	return s.position()
}

func (s *scanner) fail(format string, args ...any) error {
	line, col := s.position()
	return &syntaxError{line, col, fmt.Sprintf(format, args...)}
}

// fill reads more input; it reports false at the end of the input or on a
// read error (kept in s.err).
func (s *scanner) fill() bool {
	if s.err != nil {
		return false
	}
	if s.pos > 0 {
		n := copy(s.buf, s.buf[s.pos:s.end])
		s.offset += int64(s.pos)
		s.end = n
		s.pos = 0
	}
	for {
		n, err := s.r.Read(s.buf[s.end:])
		s.end += n
		if err != nil {
			s.err = err
			return n > 0
		}
		if n > 0 {
			return true
		}
	}
}

// readErr turns the end of input into a syntax error at the current position
// and passes other read errors through.
func (s *scanner) readErr(what string) error {
	if s.err == nil || errors.Is(s.err, io.EOF) {
		return s.fail("unexpected end of input %s", what)
	}
	return s.err
}

// peek skips white space and returns the next byte without consuming it.
func (s *scanner) peek() (byte, bool) {
	for {
		for s.pos < s.end {
			switch c := s.buf[s.pos]; c {
			case ' ', '\t', '\r':
				s.pos++
			case '\n':
				s.pos++
				s.line++
				s.lineStart = s.offset + int64(s.pos)
			default:
				return c, true
			}
		}
		if !s.fill() {
			return 0, false
		}
	}
}

// atEOF reports whether only white space is left.
func (s *scanner) atEOF() (bool, error) {
	if _, ok := s.peek(); ok {
		return false, nil
	}
	if s.err != nil && !errors.Is(s.err, io.EOF) {
		return false, s.err
	}
	return true, nil
}

// expect consumes the byte c after white space.
func (s *scanner) expect(c byte, what string) error {
	got, ok := s.peek()
	if !ok {
		return s.readErr("where " + what + " was expected")
	}
	if got != c {
		return s.fail("expected %s, found %s", what, describeByte(got))
	}
	s.pos++
	return nil
}

// more consumes the separator after an element of an object or array and
// reports whether another element follows.
func (s *scanner) more(closing byte) (bool, error) {
	c, ok := s.peek()
	if !ok {
		return false, s.readErr(fmt.Sprintf("where ',' or '%c' was expected", closing))
	}
	switch c {
	case ',':
		s.pos++
		return true, nil
	case closing:
		s.pos++
		return false, nil
	}
	return false, s.fail("expected ',' or '%c', found %s", closing, describeByte(c))
}

// first consumes the opening byte of an object or array and reports whether
// it has any element.
func (s *scanner) first(opening, closing byte, what string) (bool, error) {
	if err := s.expect(opening, what); err != nil {
		return false, err
	}
	c, ok := s.peek()
	if !ok {
		return false, s.readErr("inside " + what)
	}
	if c == closing {
		s.pos++
		return false, nil
	}
	return true, nil
}

// kind returns the JSON type of the next value, after white space.
func (s *scanner) kind() (string, error) {
	c, ok := s.peek()
	if !ok {
		return "", s.readErr("where a value was expected")
	}
	switch {
	case c == '"':
		return "string", nil
	case c == '{':
		return "object", nil
	case c == '[':
		return "array", nil
	case c == 't' || c == 'f':
		return "boolean", nil
	case c == 'n':
		return "null", nil
	case c == '-' || ('0' <= c && c <= '9'):
		return "number", nil
	}
	if s.offset+int64(s.pos) == 0 {
		switch c {
		case 0xEF:
			return "", s.fail("expected a value, found byte 0xef, the start of a UTF-8 byte-order mark: JSON has none, save the file without it")
		case 0xFE, 0xFF:
			return "", s.fail("expected a value, found byte %#02x, the start of a UTF-16 byte-order mark: a snapshot is UTF-8", c)
		}
	}
	return "", s.fail("expected a value, found %s", describeByte(c))
}

// readString reads a string value. A string over maxString bytes is
// consumed and errTooLong returned, with its length.
func (s *scanner) readString() (string, error) {
	b, n, err := s.scanString(true)
	if err != nil {
		if errors.Is(err, errTooLong) {
			return describeLongString(n), err
		}
		return "", err
	}
	return string(b), nil
}

// scanString consumes a string; when keep, it returns the decoded bytes
// (valid until the next call). It returns the decoded length in bytes.
func (s *scanner) scanString(keep bool) ([]byte, int, error) {
	b, n, err := s.appendString(s.str[:0], keep)
	s.str = b[:0]
	if err != nil {
		return nil, n, err
	}
	return b, n, nil
}

// appendString consumes a string and, when keep, appends its decoded bytes
// to dst. It returns the decoded length in bytes. A string over maxString
// bytes appends nothing and returns errTooLong.
func (s *scanner) appendString(dst []byte, keep bool) ([]byte, int, error) {
	if err := s.expect('"', "a string"); err != nil {
		return dst, 0, err
	}
	start := len(dst)
	n := 0
	tooLong := false
	emit := func(b ...byte) {
		n += len(b)
		if keep && !tooLong {
			if n > maxString {
				tooLong = true
				dst = dst[:start]
				return
			}
			dst = append(dst, b...)
		}
	}
	for {
		if s.pos >= s.end && !s.fill() {
			return dst[:start], n, s.readErr("inside a string")
		}
		// The plain run up to the next quote, escape, control or non-ASCII byte.
		i := s.pos
		for i < s.end {
			c := s.buf[i]
			if c < 0x20 || c == '"' || c == '\\' || c >= utf8.RuneSelf {
				break
			}
			i++
		}
		emit(s.buf[s.pos:i]...)
		s.pos = i
		if s.pos >= s.end {
			continue
		}
		c := s.buf[s.pos]
		switch {
		case c == '"':
			s.pos++
			if tooLong {
				return dst[:start], n, errTooLong
			}
			return dst, n, nil
		case c < 0x20:
			return dst[:start], n, s.fail("control character %#02x inside a string (escape it)", c)
		case c == '\\':
			r, err := s.scanEscape()
			if err != nil {
				return dst[:start], n, err
			}
			var enc [utf8.UTFMax]byte
			emit(enc[:utf8.EncodeRune(enc[:], r)]...)
		default:
			// A multi-byte UTF-8 sequence: make sure all of it is buffered.
			for s.end-s.pos < utf8.UTFMax && !utf8.FullRune(s.buf[s.pos:s.end]) {
				if !s.fill() {
					return dst[:start], n, s.readErr("inside a string")
				}
			}
			r, size := utf8.DecodeRune(s.buf[s.pos:s.end])
			if r == utf8.RuneError && size <= 1 {
				return dst[:start], n, s.fail("invalid UTF-8 inside a string")
			}
			emit(s.buf[s.pos : s.pos+size]...)
			s.pos += size
		}
	}
}

func (s *scanner) need(k int) bool {
	for s.end-s.pos < k {
		if !s.fill() {
			return false
		}
	}
	return true
}

// scanEscape consumes one escape sequence (the backslash included).
func (s *scanner) scanEscape() (rune, error) {
	line, col := s.position()
	if !s.need(2) {
		return 0, s.readErr("inside an escape sequence")
	}
	c := s.buf[s.pos+1]
	switch c {
	case '"', '\\', '/':
		s.pos += 2
		return rune(c), nil
	case 'b':
		s.pos += 2
		return '\b', nil
	case 'f':
		s.pos += 2
		return '\f', nil
	case 'n':
		s.pos += 2
		return '\n', nil
	case 'r':
		s.pos += 2
		return '\r', nil
	case 't':
		s.pos += 2
		return '\t', nil
	case 'u':
		r, err := s.scanHex()
		if err != nil {
			return 0, err
		}
		if utf16.IsSurrogate(r) {
			if s.need(6) && s.buf[s.pos] == '\\' && s.buf[s.pos+1] == 'u' {
				save := s.pos
				r2, err := s.scanHex()
				if err != nil {
					return 0, err
				}
				if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
					return d, nil
				}
				s.pos = save
			}
			return 0, &syntaxError{line, col, "unpaired UTF-16 surrogate in a \\u escape"}
		}
		return r, nil
	}
	return 0, s.fail("invalid escape sequence: \\ then %s", describeByte(c))
}

// scanHex consumes \uXXXX.
func (s *scanner) scanHex() (rune, error) {
	if !s.need(6) {
		return 0, s.readErr("inside a \\u escape")
	}
	var r rune
	for _, c := range s.buf[s.pos+2 : s.pos+6] {
		var d byte
		switch {
		case '0' <= c && c <= '9':
			d = c - '0'
		case 'a' <= c && c <= 'f':
			d = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, s.fail("invalid \\u escape")
		}
		r = r<<4 | rune(d)
	}
	s.pos += 6
	return r, nil
}

// readNumber consumes a number and returns its text (valid until the next
// call). The grammar is RFC 8259's; its value is the caller's to judge. A
// number over maxNumber characters is consumed, not kept: the text then
// says its length, with errNumberTooLong.
func (s *scanner) readNumber() (string, error) {
	line, col := s.position()
	s.str = s.str[:0]
	n := 0
	for {
		if s.pos >= s.end && !s.fill() {
			break
		}
		c := s.buf[s.pos]
		if !(c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E' || ('0' <= c && c <= '9')) {
			break
		}
		if n < maxNumber {
			s.str = append(s.str, c)
		}
		n++
		s.pos++
	}
	if n > maxNumber {
		return fmt.Sprintf("a number of %d characters", n), errNumberTooLong
	}
	if !validNumber(s.str) {
		return "", &syntaxError{line, col, fmt.Sprintf("invalid number %q", s.str)}
	}
	return string(s.str), nil
}

// validNumber checks the JSON number grammar.
func validNumber(b []byte) bool {
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
	default:
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			return false
		}
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			return false
		}
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
	}
	return i == len(b)
}

// readLiteral consumes true, false or null.
func (s *scanner) readLiteral() (string, error) {
	c, ok := s.peek()
	if !ok {
		return "", s.readErr("where a value was expected")
	}
	var lit string
	switch c {
	case 't':
		lit = "true"
	case 'f':
		lit = "false"
	case 'n':
		lit = "null"
	default:
		return "", s.fail("expected a value, found %s", describeByte(c))
	}
	if !s.need(len(lit)) || string(s.buf[s.pos:s.pos+len(lit)]) != lit {
		return "", s.fail("invalid literal (expected %s)", lit)
	}
	s.pos += len(lit)
	return lit, nil
}

// skipValue consumes one value of any kind and returns a short description
// of it for messages ("an object", "true", "a string of 4 bytes").
func (s *scanner) skipValue() (string, error) {
	return s.skip(0)
}

func (s *scanner) skip(depth int) (string, error) {
	if depth > maxDepth {
		return "", s.fail("values nested deeper than %d levels", maxDepth)
	}
	kind, err := s.kind()
	if err != nil {
		return "", err
	}
	switch kind {
	case "string":
		str, err := s.readString()
		if errors.Is(err, errTooLong) {
			return str, nil
		}
		if err != nil {
			return "", err
		}
		return "the string " + catalog.Quote(str), nil
	case "number":
		text, err := s.readNumber()
		if errors.Is(err, errNumberTooLong) {
			return text, nil
		}
		return text, err
	case "boolean", "null":
		return s.readLiteral()
	case "array":
		more, err := s.first('[', ']', "an array")
		for err == nil && more {
			if _, err = s.skip(depth + 1); err == nil {
				more, err = s.more(']')
			}
		}
		return "an array", err
	default:
		more, err := s.first('{', '}', "an object")
		for err == nil && more {
			if _, _, err = s.scanString(false); err != nil && !errors.Is(err, errTooLong) {
				break
			}
			if err = s.expect(':', "':'"); err == nil {
				if _, err = s.skip(depth + 1); err == nil {
					more, err = s.more('}')
				}
			}
		}
		return "an object", err
	}
}

// describeLongString describes a string of n bytes, too long to be kept,
// in messages.
func describeLongString(n int) string {
	return fmt.Sprintf("a string of %d bytes", n)
}

func describeByte(c byte) string {
	if c >= 0x20 && c < 0x7f {
		return fmt.Sprintf("'%c'", c)
	}
	return fmt.Sprintf("byte %#02x", c)
}
