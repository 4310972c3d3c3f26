package server

import (
	"strings"
	"unicode/utf8"

	"github.com/catalogd/catalogd/catalog"
)

// Limits of searchCards (docs/CONTRACT.md, Search).
const (
	minQueryLen  = 2
	maxQueryLen  = 200
	maxSetLen    = 50
	defaultLimit = 25
	maxLimit     = 100
)

// searchParams reads the parameters of searchCards; the MCP tool shares it.
func searchParams(q *query) catalog.SearchQuery {
	var sq catalog.SearchQuery
	if raw, ok := q.get("q"); ok {
		switch text := strings.TrimSpace(raw); {
		case !utf8.ValidString(raw):
			q.fail("q", "must be valid UTF-8")
		case utf8.RuneCountInString(text) < minQueryLen || utf8.RuneCountInString(text) > maxQueryLen:
			q.fail("q", "must be %d to %d characters long once trimmed, got %d", minQueryLen, maxQueryLen, utf8.RuneCountInString(text))
		default:
			sq.Q = text
		}
	} else if _, dup := q.values["q"]; !dup {
		q.fail("q", "is required")
	}
	sq.Zone = q.zone("zone")
	if set, ok := q.get("set"); ok {
		switch {
		case !utf8.ValidString(set):
			q.fail("set", "must be valid UTF-8")
		case set == "":
			q.fail("set", "must not be empty; leave it out to search every set")
		case utf8.RuneCountInString(set) > maxSetLen:
			q.fail("set", "must be at most %d characters long, got %d", maxSetLen, utf8.RuneCountInString(set))
		default:
			sq.Set = set
		}
	}
	sq.Limit = int(q.int("limit", defaultLimit, 1, maxLimit))
	return sq
}
