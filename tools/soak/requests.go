package main

import (
	"math/rand/v2"
	"net/url"
	"strconv"
	"sync"

	"github.com/catalogd/catalogd/tools/internal/query"
)

// kind is a route of the mix.
type kind int

const (
	getCard kind = iota
	listSetCards
	search
	listChanges
	listSets
	// exportCatalog is not in the mix: downloads come on a schedule of
	// their own (traffic.downloads).
	exportCatalog
	kinds
)

var kindNames = [kinds]string{"getCard", "listSetCards", "search", "listChanges", "listSets", "exportCatalog"}

// mix is the share of each kind among new requests, in percent; listSets
// takes what is left.
var mix = [kinds]int{getCard: 40, listSetCards: 25, search: 20, listChanges: 5, listSets: 10}

const (
	repeatPercent = 15  // requests that repeat an earlier one with If-None-Match
	pageSize      = 50  // of listSetCards
	recentSize    = 512 // answers kept for repeats
)

// request is one request of the mix.
type request struct {
	kind   kind
	path   string // escaped path and query under the API base
	cardID string // getCard: the id the answer must hold
	// A repeat: the ETag of the earlier answer and the generation that
	// gave it.
	ifNoneMatch, tagGeneration string
}

// picker chooses requests among the core records. Each worker has its own
// random source; the answers kept for repeats are shared.
type picker struct {
	core *core
	// since is the generation of the first import, from which change
	// lists are asked: every later generation's history holds it.
	since string

	mu     sync.Mutex
	recent []request // with ifNoneMatch and tagGeneration set
	next   int
}

func (p *picker) pick(r *rand.Rand) request {
	if r.IntN(100) < repeatPercent {
		p.mu.Lock()
		n := len(p.recent)
		var req request
		if n > 0 {
			req = p.recent[r.IntN(n)]
		}
		p.mu.Unlock()
		if n > 0 {
			return req
		}
	}
	roll := r.IntN(100)
	k := getCard
	for ; k < listSets; k++ {
		if roll < mix[k] {
			break
		}
		roll -= mix[k]
	}
	switch k {
	case getCard:
		c := p.core.cards[r.IntN(len(p.core.cards))]
		return request{kind: getCard, path: "/catalog/cards/" + url.PathEscape(c.ID), cardID: c.ID}
	case listSetCards:
		s := p.core.sets[r.IntN(len(p.core.sets))]
		name := s.code
		if r.IntN(4) == 0 {
			name = s.id
		}
		pages := max(1, (s.cards+pageSize-1)/pageSize)
		page := 1 + r.IntN(pages+1) // one past the end now and then
		return request{kind: listSetCards, path: "/catalog/sets/" + url.PathEscape(name) +
			"/cards?page=" + strconv.Itoa(page) + "&pageSize=" + strconv.Itoa(pageSize)}
	case search:
		return request{kind: search, path: "/catalog/search?" + p.searchQuery(r)}
	case listChanges:
		v := url.Values{"since": {p.since}, "limit": {strconv.Itoa(1 + r.IntN(1000))}}
		if r.IntN(2) == 0 {
			v.Set("zone", p.core.cards[r.IntN(len(p.core.cards))].Zone)
		}
		return request{kind: listChanges, path: "/catalog/changes?" + v.Encode()}
	}
	return request{kind: listSets, path: "/catalog/sets"}
}

// searchQuery is a fragment of a real card name, sometimes with the card's
// printed number as a second term, its zone, its set or a limit.
func (p *picker) searchQuery(r *rand.Rand) string {
	var c record
	var q string
	for q == "" {
		c = p.core.cards[r.IntN(len(p.core.cards))]
		q = query.Fragment(c.Name, r)
	}
	if r.IntN(10) == 0 {
		if n := query.LeadingNumber(c.Number); n != "" {
			q += " " + n
		}
	}
	v := url.Values{"q": {q}}
	switch r.IntN(8) {
	case 0, 1:
		v.Set("zone", c.Zone)
	case 2:
		v.Set("set", c.SetCode)
	case 3:
		v.Set("zone", c.Zone)
		v.Set("set", c.SetCode)
	}
	if r.IntN(3) == 0 {
		v.Set("limit", strconv.Itoa(1+r.IntN(100)))
	}
	return v.Encode()
}

// remember keeps req's answer, its ETag from generation, for repeats.
func (p *picker) remember(req request, etag, generation string) {
	req.ifNoneMatch, req.tagGeneration = etag, generation
	p.mu.Lock()
	if len(p.recent) < recentSize {
		p.recent = append(p.recent, req)
	} else {
		p.recent[p.next] = req
		p.next = (p.next + 1) % recentSize
	}
	p.mu.Unlock()
}
