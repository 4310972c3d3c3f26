// Package op holds the operations of the partner API, each written once for
// both transports: a typed request, the function that reads it from the
// parameters of either transport with every rule of docs/CONTRACT.md,
// Parameters, and the function that answers it from the catalogue with the
// JSON body both transports send. REST (server's routes) and MCP (server's
// tools) only decode their wire form into Params, call one operation, and
// write its answer or its *Error, each with one mapping of its own.
package op

import (
	"github.com/catalogd/catalogd/catalog/store"
)

// Operation is one operation of the API: Parse reads its request, Answer
// appends the JSON body of its answer to dst.
type Operation[R any] struct {
	Parse  func(Params) (R, error)
	Answer func(dst []byte, db *store.DB, req R) (Answer, error)
}

// Answer is the JSON body of an answer, the same bytes for REST and MCP,
// and the counts an MCP summary tells.
type Answer struct {
	Body []byte
	// N is the number of records in data.
	N int
	// Total is the number of cards of the set, on all its pages
	// (listSetCards).
	Total int64
	// Missing is the number of ids in notFound (getCards).
	Missing int
}

// The operations of docs/CONTRACT.md. ListSets reads a zone filter, which
// only MCP's list_sets has: the REST route of listSets takes no parameter
// and writes the list from the file (SetsParts).
var (
	ListSets            = Operation[ListSetsRequest]{ParseListSets, listSets}
	ListSetCards        = Operation[ListSetCardsRequest]{ParseListSetCards, listSetCards}
	GetCard             = Operation[GetCardRequest]{ParseGetCard, getCard}
	GetCards            = Operation[GetCardsRequest]{ParseGetCards, getCards}
	GetSetCardsByNumber = Operation[GetSetCardsByNumberRequest]{ParseGetSetCardsByNumber, getSetCardsByNumber}
	SearchCards         = Operation[SearchRequest]{ParseSearch, searchCards}
	AutocompleteNames   = Operation[AutocompleteRequest]{ParseAutocomplete, autocompleteNames}
	ListChanges         = Operation[ChangesRequest]{ParseChanges, listChanges}
)

// cardArray appends cards to a JSON array as the catalogue yields them:
// its add is what the catalogue's lookups call. (A method value the
// lookups do not keep costs no allocation, where a closure handed through
// a function value would move what it captures to the heap.)
type cardArray struct {
	b []byte
	n int // cards added
}

func (a *cardArray) add(card []byte) {
	if a.n > 0 {
		a.b = append(a.b, ',')
	}
	a.b = append(a.b, card...)
	a.n++
}

// cardsOpen starts a body of cards: {"data":[.
func cardsOpen(b []byte) cardArray { return cardArray{b: append(b, `{"data":[`...)} }
