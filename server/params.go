package server

import (
	"fmt"
	"net/url"
	"strconv"

	"github.com/catalogd/catalogd/catalog"
)

// query reads and checks the query parameters of one request with the rules
// of docs/CONTRACT.md, Parameters, the same for every endpoint: integers in plain
// decimal digits within range; a parameter given twice is an error; unknown
// parameters are ignored. Problems accumulate so that one 400 names every bad
// parameter.
type query struct {
	values url.Values
	errs   paramErrors
}

// parseQuery decodes a raw query string. A query string that cannot be
// decoded is itself a 400.
func parseQuery(raw string) (*query, error) {
	if raw == "" {
		// The common getCard: nothing to decode, and no map to make.
		return new(query), nil
	}
	values, err := url.ParseQuery(raw)
	if err != nil {
		return nil, paramErrors{{Parameter: "(query string)", Detail: "cannot be decoded: " + err.Error()}}
	}
	return &query{values: values}, nil
}

func (q *query) fail(name, format string, args ...any) {
	q.errs = append(q.errs, paramError{Parameter: name, Detail: fmt.Sprintf(format, args...)})
}

// get returns the single value of name, and whether it was given.
func (q *query) get(name string) (string, bool) {
	vs, ok := q.values[name]
	if !ok {
		return "", false
	}
	if len(vs) > 1 {
		q.fail(name, "given %d times; give it once", len(vs))
		return "", false
	}
	return vs[0], true
}

// int returns the integer name within min..max, or def when absent.
func (q *query) int(name string, def, min, max int64) int64 {
	v, ok := q.get(name)
	if !ok {
		return def
	}
	n, valid := parseDigits(v)
	if !valid {
		q.fail(name, "must be an integer from %d to %d in plain decimal digits, got %s", min, max, quoteParam(v))
		return def
	}
	if n < min || n > max {
		q.fail(name, "must be from %d to %d, got %s", min, max, quoteParam(v))
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

// zone returns the zone filter, "" when absent.
func (q *query) zone(name string) string {
	v, ok := q.get(name)
	if !ok {
		return ""
	}
	if catalog.ZoneIndex(v) < 0 {
		q.fail(name, `must be one of "intl", "jp", "chn", got %s`, quoteParam(v))
		return ""
	}
	return v
}

// err returns the problems found, or nil.
func (q *query) err() error {
	if len(q.errs) == 0 {
		return nil
	}
	return q.errs
}

func quoteParam(v string) string { return catalog.Quote(v) }

// Limits of listSetCards (docs/CONTRACT.md, Endpoints).
const (
	defaultPageSize = 50
	maxPageSize     = 200
	maxPage         = catalog.MaxInteger
)
