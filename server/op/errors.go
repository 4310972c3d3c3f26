package op

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/catalogd/catalogd/catalog/store"
)

// Kind says what went wrong with an operation, in the terms both transports
// answer in: REST maps each kind to a status once (server.writeError), MCP
// to a tool error once (server.toolError).
type Kind int

const (
	// Invalid: a parameter breaks a rule; Params names each one.
	Invalid Kind = iota + 1
	// NotFound: the set or card asked for is not in the active catalogue.
	NotFound
	// Gone: the generation a list of changes starts from is no longer held.
	Gone
	// NotYet: the generation a list of changes starts from is newer than
	// the catalogue served: a replica beside this one switched to it
	// first, and this one will within seconds.
	NotYet
)

// FromCatalogue reports whether err is an answer of the catalogue, not of
// the request's parameters alone: a record not found, a generation gone
// or not yet served. Such an answer names the generation that gave it, as
// a success does (docs/CONTRACT.md, Answers).
func FromCatalogue(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Kind != Invalid
}

// Error is the one error an operation returns for a bad request. Any other
// error is the server's own fault: the transports log it and tell the
// client nothing internal.
type Error struct {
	Kind Kind
	// Detail says what is wrong, for a person: the problem's detail, the
	// tool error's text.
	Detail string
	// Params lists every bad parameter of an Invalid request, in the order
	// they were read.
	Params []ParamError
	// Err is the catalogue's error behind a NotFound or Gone.
	Err error
}

// ParamError is one parameter that breaks a rule.
type ParamError struct {
	Parameter string `json:"parameter"`
	Detail    string `json:"detail"`
}

// Error is the detail: for an Invalid error, the one bad parameter, or
// that there are several (Params names them).
func (e *Error) Error() string { return e.Detail }

func (e *Error) Unwrap() error { return e.Err }

// detailedParams is how many bad parameters the detail of a 400 names;
// its errors name them all (a getCards of 100 bad ids has 100).
const detailedParams = 3

// invalid is the error of a request whose parameters break the rules. Its
// detail names them, for a client that logs the detail alone.
func invalid(params []ParamError) *Error {
	if len(params) == 1 {
		// "parameter", not "query parameter": a path segment can be the bad one.
		return &Error{Kind: Invalid, Detail: "invalid parameter " + params[0].Parameter + ": " + params[0].Detail, Params: params}
	}
	var b strings.Builder
	b.WriteString("invalid parameters: ")
	for i, p := range params[:min(len(params), detailedParams)] {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(p.Parameter + ": " + p.Detail)
	}
	if more := len(params) - detailedParams; more > 0 {
		fmt.Fprintf(&b, "; and %d more, in errors", more)
	}
	return &Error{Kind: Invalid, Detail: b.String(), Params: params}
}

// InvalidParams returns the parameters an Invalid error names, nil for any
// other error.
func InvalidParams(err error) []ParamError {
	var e *Error
	if errors.As(err, &e) && e.Kind == Invalid {
		return e.Params
	}
	return nil
}

// InvalidWith returns the error of a request whose parameters break the rules,
// for a transport that finds a problem in its own wire form before the
// operation reads it: more names those found next, by the operation. A
// parameter the transport named did not reach the operation, which may
// then call it missing, so more's problems of that parameter are left out.
func InvalidWith(params []ParamError, more error) error {
	all := params[:len(params):len(params)]
	for _, p := range InvalidParams(more) {
		if !slices.ContainsFunc(params, func(q ParamError) bool { return q.Parameter == p.Parameter }) {
			all = append(all, p)
		}
	}
	if len(all) == 0 {
		return more
	}
	return invalid(all)
}

// fromCatalog turns the catalogue's sentinel errors into the kinds the
// transports answer; any other error stays as it is.
func fromCatalog(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, store.ErrNewerGeneration):
		return &Error{Kind: NotYet, Err: err, Detail: err.Error() + ": this server is switching to it; retry in a few seconds"}
	case errors.Is(err, store.ErrOutsideHistory):
		return &Error{Kind: Gone, Err: err, Detail: err.Error() + ", which holds the changes of its last imports only: download /catalog/export (with the same zone, for a copy of one zone) and sync from its Catalog-Generation"}
	case errors.Is(err, store.ErrNotFound):
		return &Error{Kind: NotFound, Err: err, Detail: err.Error() + " in the active catalogue"}
	}
	return err
}
