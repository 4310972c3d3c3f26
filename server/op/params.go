package op

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/catalogd/catalogd/catalog"
)

// Params are the parameters of one request as its transport decoded them:
// the path and query parameters of a REST request, the arguments of an MCP
// tool call. Every operation reads them with the same rules
// (docs/CONTRACT.md, Parameters). A Params is passed by value and read in
// place: reading the parameters of a request allocates nothing.
type Params struct {
	// Path holds the parameters of a route's path, unescaped, each given
	// once; a name here hides the same name in Values.
	Path [2]PathParam
	// Values holds the others by name, each as often as it was given.
	Values map[string][]string
}

// PathParam is one parameter of a route's path.
type PathParam struct{ Name, Value string }

// lookup returns the first value of name, how many values it has, and all
// of them when they come from Values.
func (p *Params) lookup(name string) (first string, n int, all []string) {
	for _, pp := range p.Path {
		if pp.Name == name && name != "" {
			return pp.Value, 1, nil
		}
	}
	all = p.Values[name]
	if len(all) == 0 {
		return "", 0, all
	}
	return all[0], len(all), all
}

// DecodeQuery decodes a raw query string. A query string that cannot be
// decoded is itself a 400, naming "(query string)".
func DecodeQuery(raw string) (map[string][]string, error) {
	if raw == "" {
		return nil, nil
	}
	values, err := url.ParseQuery(raw)
	if err != nil {
		return nil, invalid([]ParamError{{Parameter: "(query string)", Detail: "cannot be decoded: " + err.Error()}})
	}
	return values, nil
}

// reader reads the parameters of one request with the rules of
// docs/CONTRACT.md, Parameters, the same for every operation: integers in
// plain decimal digits within range; a parameter given twice is an error
// (but for the one that takes a list); unknown parameters are ignored.
// Problems accumulate so that one answer names every bad parameter.
type reader struct {
	p    Params
	errs []ParamError
}

func (r *reader) fail(name, format string, args ...any) {
	r.errs = append(r.errs, ParamError{Parameter: name, Detail: fmt.Sprintf(format, args...)})
}

// err returns the problems found as one Invalid error, or nil.
func (r *reader) err() error {
	if len(r.errs) == 0 {
		return nil
	}
	return invalid(r.errs)
}

// given reports whether name was given at all, once or more, or as an
// empty list of values.
func (r *reader) given(name string) bool {
	_, n, all := r.p.lookup(name)
	return n > 0 || all != nil
}

// one returns the single value of name, and whether it was given once.
func (r *reader) one(name string) (string, bool) {
	v, n, _ := r.p.lookup(name)
	switch n {
	case 0:
		return "", false
	case 1:
		return v, true
	}
	r.fail(name, "given %d times; give it once", n)
	return "", false
}

// list returns every value of name, nil when it was not given.
func (r *reader) list(name string) []string {
	_, _, all := r.p.lookup(name)
	return all
}

// required returns the value of name, which names one record: given once,
// not empty.
func (r *reader) required(name string) string {
	v, ok := r.one(name)
	switch {
	case !ok && !r.given(name):
		r.fail(name, "is required")
	case ok && v == "":
		r.fail(name, "must not be empty")
	case ok && !utf8.ValidString(v):
		r.fail(name, "must be valid UTF-8")
	}
	return v
}

// integer returns the integer name within min..max, or def when absent.
func (r *reader) integer(name string, def, min, max int64) int64 {
	v, ok := r.one(name)
	if !ok {
		return def
	}
	n, valid := parseDigits(v)
	if !valid {
		r.fail(name, "must be an integer from %d to %d in plain decimal digits, got %s", min, max, catalog.Quote(v))
		return def
	}
	if n < min || n > max {
		r.fail(name, "must be from %d to %d, got %s", min, max, catalog.Quote(v))
		return def
	}
	return n
}

// parseDigits reads plain decimal digits; leading zeros are allowed and a
// value past int64 reads as the largest one, which every range check
// rejects.
func parseDigits(s string) (int64, bool) {
	if s == "" {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 1<<63 - 1, true
	}
	return n, true
}

// boolean returns the flag name: "true" or "false", false when absent.
func (r *reader) boolean(name string) bool {
	v, ok := r.one(name)
	switch {
	case !ok || v == "false":
		return false
	case v == "true":
		return true
	}
	r.fail(name, `must be "true" or "false", got %s`, catalog.Quote(v))
	return false
}

// zone returns the zone filter, "" when absent.
func (r *reader) zone(name string) string {
	v, ok := r.one(name)
	if !ok {
		return ""
	}
	if catalog.ZoneIndex(v) < 0 {
		r.fail(name, `must be one of "intl", "jp", "chn", got %s`, catalog.Quote(v))
		return ""
	}
	return v
}

// text returns the value of name trimmed of white space, which must then
// be min to max characters (Unicode code points) long; required says
// whether it may be left out.
func (r *reader) text(name string, min, max int, required bool) string {
	raw, ok := r.one(name)
	if !ok {
		if required && !r.given(name) {
			r.fail(name, "is required")
		}
		return ""
	}
	text := strings.TrimSpace(raw)
	switch n := utf8.RuneCountInString(text); {
	case !utf8.ValidString(raw):
		r.fail(name, "must be valid UTF-8")
	case n < min || n > max:
		r.fail(name, "must be %d to %d characters long once trimmed, got %d", min, max, n)
	default:
		return text
	}
	return ""
}
