// Package op holds the operations of the partner API, each written once for
// both transports: a typed request, the function that reads it from the
// parameters of either transport with every rule of docs/CONTRACT.md,
// Parameters, and the function that answers it from the catalogue with the
// JSON body both transports send. REST (server's routes) and MCP (server's
// tools) only decode their wire form into Params, call one operation, and
// write its answer or its *Error, each with one mapping of its own.
package op

import "github.com/catalogd/catalogd/catalog"

// Operation is one operation of the API: Parse reads its request, Answer
// appends the JSON body of its answer to dst.
type Operation[R any] struct {
	Parse  func(Params) (R, error)
	Answer func(dst []byte, db *catalog.DB, req R) (Answer, error)
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

// The operations of docs/CONTRACT.md. ListSets reads a zone filter (MCP's
// list_sets); the REST route of listSets ignores one (AllSets).
var (
	ListSets            = Operation[ListSetsRequest]{ParseListSets, listSets}
	AllSets             = Operation[ListSetsRequest]{ParseAllSets, listSets}
	ListSetCards        = Operation[ListSetCardsRequest]{ParseListSetCards, listSetCards}
	GetCard             = Operation[GetCardRequest]{ParseGetCard, getCard}
	GetCards            = Operation[GetCardsRequest]{ParseGetCards, getCards}
	GetSetCardsByNumber = Operation[GetSetCardsByNumberRequest]{ParseGetSetCardsByNumber, getSetCardsByNumber}
	SearchCards         = Operation[SearchRequest]{ParseSearch, searchCards}
	ListChanges         = Operation[ChangesRequest]{ParseChanges, listChanges}
)

// appendCards appends the cards fn yields as a JSON array and returns how
// many there were.
func appendCards(b []byte, fn func(yield func(card []byte)) error) ([]byte, int, error) {
	b = append(b, '[')
	n := 0
	err := fn(func(card []byte) {
		if n > 0 {
			b = append(b, ',')
		}
		b = append(b, card...)
		n++
	})
	return append(b, ']'), n, fromCatalog(err)
}
