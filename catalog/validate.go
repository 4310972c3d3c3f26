package catalog

import (
	"fmt"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"
)

// FieldError is one rule of docs/CONTRACT.md, Records, that one field of one record
// breaks.
type FieldError struct {
	Field    string // the JSON member name
	Expected string // what the rule asks for
	Found    string // what the record holds, quoted or summarised
}

func (e FieldError) Error() string {
	return fmt.Sprintf("%s: expected %s, found %s", e.Field, e.Expected, e.Found)
}

// Validate returns every rule of docs/CONTRACT.md, Records, that s breaks, or nil. It
// checks values only: the presence and JSON types of members are the
// decoder's to check.
func (s *Set) Validate() []FieldError {
	var errs []FieldError
	errs = checkLen(errs, "id", s.ID, 1, MaxKeyLength)
	errs = checkLen(errs, "code", s.Code, 1, MaxKeyLength)
	errs = checkMinLen(errs, "name", s.Name, 1)
	errs = checkZone(errs, s.Zone)
	if s.ReleasedOn.HasValue() && !ValidDate(s.ReleasedOn.Value) {
		errs = append(errs, FieldError{"releasedOn", "a calendar date YYYY-MM-DD", Quote(s.ReleasedOn.Value)})
	}
	errs = checkRange(errs, "cardCount", s.CardCount, 0)
	return errs
}

// Validate returns every rule of docs/CONTRACT.md, Records, that c breaks, or nil. It
// checks values only: the presence and JSON types of members are the
// decoder's to check.
func (c *Card) Validate() []FieldError {
	var errs []FieldError
	errs = checkLen(errs, "id", c.ID, 1, MaxKeyLength)
	errs = checkLen(errs, "name", c.Name, 1, MaxNameLength)
	if !lastFailed(errs, "name") && foldsToNothing(c.Name) {
		// Spaces, or marks alone: no word of the search index.
		errs = append(errs, FieldError{"name", "a name with a letter, digit or sign", Quote(c.Name)})
	}
	errs = checkMinLen(errs, "setName", c.SetName, 1)
	errs = checkLen(errs, "setCode", c.SetCode, 1, MaxKeyLength)
	errs = checkLen(errs, "number", c.Number, 1, MaxNumberLength)
	if !lastFailed(errs, "number") && normalizesToNothing(c.Number) {
		// Looked up by its normalized form, an empty one ("/1", spaces)
		// would be found by no number of its own, and by every other such.
		errs = append(errs, FieldError{"number", "a printed number with a letter, digit or sign before any /", Quote(c.Number)})
	}
	errs = checkMinLen(errs, "language", c.Language, 2)
	if c.Year.HasValue() {
		errs = checkRange(errs, "year", c.Year.Value, 1996)
	}
	if c.Rarity.HasValue() {
		if n := utf8.RuneCountInString(c.Rarity.Value); n < 1 || n > 100 {
			errs = append(errs, FieldError{"rarity", "a string of 1 to 100 characters", lengthFound(c.Rarity.Value, n)})
		}
	}
	if c.ImageURL.HasValue() {
		errs = checkURI(errs, "imageUrl", c.ImageURL.Value)
	}
	errs = checkZone(errs, c.Zone)
	if c.TotalCards.HasValue() {
		errs = checkRange(errs, "totalCards", c.TotalCards.Value, 1)
	}
	for _, f := range []struct {
		name string
		v    Nullable[string]
	}{
		{"illustrator", c.Illustrator},
		{"marketAId", c.MarketAID},
		{"marketAPath", c.MarketAPath},
		{"marketBId", c.MarketBID},
	} {
		if f.v.HasValue() {
			errs = checkMinLen(errs, f.name, f.v.Value, 1)
		}
	}
	if c.ScanFallbackURL.HasValue() {
		errs = checkURI(errs, "scanFallbackUrl", c.ScanFallbackURL.Value)
	}
	return errs
}

// lastFailed reports whether the last error of errs is of field: the rule
// just checked did not hold, and the next of the same field need not be.
func lastFailed(errs []FieldError, field string) bool {
	return len(errs) > 0 && errs[len(errs)-1].Field == field
}

// foldsToNothing reports whether Fold(s) is empty. An ASCII letter or
// digit folds to itself, and a Han ideograph or a kana to another
// (letterBlock), so nearly every name is told without folding it.
func foldsToNothing(s string) bool {
	for _, r := range s {
		if r < utf8.RuneSelf && isASCIIAlnum(byte(r)) || letterBlock(r) != 0 {
			return false
		}
	}
	return Fold(s) == ""
}

// normalizesToNothing reports whether NormalizeNumber(n) is empty. A
// number that starts with an ASCII letter or digit keeps it, which nearly
// every number is told by without normalizing it.
func normalizesToNothing(n string) bool {
	return (n == "" || !isASCIIAlnum(n[0])) && NormalizeNumber(n) == ""
}

// isASCIIAlnum reports whether c is an ASCII letter or digit.
func isASCIIAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// MaxKeyLength and MaxNumberLength bound, in characters, the fields that
// find a record (ids, set codes, printed numbers). The catalogue file
// (catalog/store) makes its keys of them, and a key holds at most 32 KiB:
// these bounds keep the longest, a number's sort key with its set's code
// and its card's id, well under it.
// Real ids and codes are under 30 characters, numbers under 10.
//
// MaxNameLength bounds a card's name: its folded and romanized forms are
// keys of autocomplete's index, and a character folds to at most 33 bytes
// (U+FDFA), so 500 keep a key under 17 KB. Real names are under 60
// characters.
const (
	MaxKeyLength    = 256
	MaxNumberLength = 64
	MaxNameLength   = 500
)

// checkLen checks that v has at least min and at most max characters.
func checkLen(errs []FieldError, field, v string, min, max int) []FieldError {
	if len(v) <= max { // max characters take at least max bytes
		return checkMinLen(errs, field, v, min)
	}
	if n := utf8.RuneCountInString(v); n > max {
		return append(errs, FieldError{field, fmt.Sprintf("a string of at most %d characters", max), lengthFound(v, n)})
	}
	return checkMinLen(errs, field, v, min)
}

func checkMinLen(errs []FieldError, field, v string, min int) []FieldError {
	// Counting stops at min: a long value needs no full count.
	n := 0
	for range v {
		n++
		if n >= min {
			return errs
		}
	}
	return append(errs, FieldError{field, fmt.Sprintf("a string of at least %d character%s", min, plural(min)), lengthFound(v, n)})
}

func checkRange(errs []FieldError, field string, v, min int64) []FieldError {
	if v >= min && v <= MaxInteger {
		return errs
	}
	return append(errs, FieldError{field, fmt.Sprintf("an integer from %d to %d", min, int64(MaxInteger)), fmt.Sprint(v)})
}

func checkZone(errs []FieldError, zone string) []FieldError {
	if ZoneIndex(zone) >= 0 {
		return errs
	}
	return append(errs, FieldError{"zone", `one of "intl", "jp", "chn"`, Quote(zone)})
}

func checkURI(errs []FieldError, field, v string) []FieldError {
	if ValidURI(v) {
		return errs
	}
	return append(errs, FieldError{field, "an absolute URI with a scheme", Quote(v)})
}

// ValidDate reports whether s is a calendar date in the form YYYY-MM-DD,
// leap years respected.
func ValidDate(s string) bool {
	if len(s) != len("2006-01-02") {
		return false
	}
	_, err := time.Parse(time.DateOnly, s)
	return err == nil
}

// ValidURI reports whether s is an absolute URI (RFC 3986): a scheme, and no
// white space or control characters; an http or https URI also needs a host.
func ValidURI(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] == 0x7f {
			return false
		}
	}
	scheme, _, ok := strings.Cut(s, ":")
	if !ok || !validScheme(scheme) {
		return false
	}
	u, err := url.Parse(s)
	if err != nil || u.Scheme == "" {
		return false
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
		return u.Host != ""
	}
	return true
}

func validScheme(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'):
		default:
			return false
		}
	}
	return true
}

// quoteMax is the characters of a found value a message shows.
const quoteMax = 60

// Quote renders a found value for a message, cut short when it is long,
// and then with its length.
func Quote(s string) string {
	const max = quoteMax
	if utf8.RuneCountInString(s) <= max {
		return fmt.Sprintf("%q", s)
	}
	n := 0
	for i := range s {
		if n == max {
			return fmt.Sprintf("%q… (%d characters)", s[:i], utf8.RuneCountInString(s))
		}
		n++
	}
	return fmt.Sprintf("%q", s)
}

// lengthFound renders a value of n characters, a wrong length, with that
// length, which Quote gives already when it cuts the value short.
func lengthFound(v string, n int) string {
	if v == "" {
		return "an empty string"
	}
	if n > quoteMax {
		return Quote(v)
	}
	return fmt.Sprintf("%s (%d character%s)", Quote(v), n, plural(n))
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
