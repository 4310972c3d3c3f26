package importer

import (
	"fmt"
	"strings"

	"github.com/catalogd/catalogd/catalog"
)

// MaxErrors is how many problems one import reports before it stops looking.
const MaxErrors = 100

// RecordError is one problem found in a snapshot: where it is, in which
// record and field, what was expected and what was found.
//
// Line and Column point at the first byte of what is wrong: the value of a
// member for a problem with its value (its type, its length or range, a
// duplicate id or code, a set it does not name); the member's name for a
// member that is unknown or repeated; the record's opening brace for a
// missing member or a record that is not an object; the snapshot's opening
// brace for a missing "sets" or "cards".
type RecordError struct {
	File     string
	Line     int
	Column   int    // in bytes, from 1
	Record   string // "sets[3]", "cards[1234]"; empty outside any record
	ID       string // the record's id, when known
	Field    string // the JSON member; empty for a problem of the whole record or file
	Expected string
	Found    string
}

func (e *RecordError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s:%d:%d: ", e.File, e.Line, e.Column)
	if e.Record != "" {
		b.WriteString(e.Record)
		if e.ID != "" {
			fmt.Fprintf(&b, " (id %s)", catalog.Quote(e.ID)) // cut short: an id can be long
		}
		b.WriteString(": ")
	}
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	if e.Expected != "" {
		fmt.Fprintf(&b, "expected %s, found %s", e.Expected, e.Found)
	} else {
		b.WriteString(e.Found)
	}
	return b.String()
}

// ValidationError is every problem an import found, up to MaxErrors. The
// import wrote nothing.
type ValidationError struct {
	Errors    []*RecordError
	Truncated bool // more problems may follow the ones listed
}

func (e *ValidationError) Error() string {
	var b strings.Builder
	n := len(e.Errors)
	if e.Truncated {
		fmt.Fprintf(&b, "snapshot is invalid: %d problems (stopped looking after %d):", n, MaxErrors)
	} else {
		fmt.Fprintf(&b, "snapshot is invalid: %d problem%s:", n, map[bool]string{true: "", false: "s"}[n == 1])
	}
	for _, err := range e.Errors {
		b.WriteString("\n  ")
		b.WriteString(err.Error())
	}
	return b.String()
}
