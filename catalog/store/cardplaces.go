package store

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"slices"

	"github.com/catalogd/catalogd/catalog/store/internal/layout"
)

// The work of the ways of wordsWithOthers, in turns: a name checked
// costs about what reading four cards does, and a card's place, or a
// place of a run, about a sixteenth of a card.
const (
	placeWork = 1
	cardWork  = 16
	nameWork  = 4 * cardWork
)

// roundsAStep is the most rounds of the lists' walk in a step of the
// cards' way: tens to hundreds of nanoseconds each. A test sets it to 1,
// for steps to end between rounds as often as they may.
var roundsAStep = 8

// cardPlaces finds the first names of the cards that hold every term,
// from the search index's lists, a card at a time in ordinal order. The
// place of each card's name (layout.CompletePlace) tells its rank without
// reading the card, and the starts of its words whether one may start
// with the last term; a card is read, and checked against the terms, only
// when its name would be among the first found so far and it may. So a
// query reads about limit × ln(cards) of the cards the lists give that
// have a word starting so, not all of them.
type cardPlaces struct {
	r       *reader
	a       *completer
	walks   []*zoneWalk // of the zones still to walk, the first walked
	check   func(*layout.IndexEntry) bool
	starts  *wordStarts // of the last term, shared with the names' way
	first   uint64      // the last term's layout.WordStartBit, 0 to read every card
	best    []uint32    // the first places found so far
	work    int         // in placeWork, cardWork and nameWork
	block   []byte      // of places, number blockNo, when loaded
	blockNo uint32
	loaded  bool
}

func (db *DB) newCardPlaces(r *reader, a *completer, others []term, last []byte, starts *wordStarts) (*cardPlaces, error) {
	terms := slices.Clone(others)
	if !slices.ContainsFunc(terms, func(t term) bool { return bytes.Equal(t.text, last) }) {
		terms = append(terms, term{text: last}) // unless it runs on past a word: one of others then
	}
	for i := range terms {
		terms[i].number = "\x00" // a name has no number
	}
	p, err := db.plan(r, nil, terms)
	if err != nil {
		return nil, err
	}
	c := &cardPlaces{r: r, a: a, starts: starts}
	for z, zr := range db.zoneOrdinals {
		if (a.ns == 0 || z == a.ns-1) && zr.lo < zr.hi {
			c.walks = append(c.walks, &zoneWalk{driver: p.driver(&r.listCursors, db.denseList, false, len(terms) == 1, 0), entries: indexBlocks{c: r.entryCursors[z]}, next: zr.lo, hi: zr.hi})
		}
	}
	if c.starts.oneWord {
		c.first = layout.WordStartBit(c.starts.first)
	}
	c.check = func(e *layout.IndexEntry) bool {
		return matches(e, terms, &r.groupTexts) && c.starts.entry(e)
	}
	return c, nil
}

// step takes rounds of the lists' walk (seekBelow) until the lists meet
// on a card or roundsAStep have passed; it meets that card, and reads it
// if its name would be among the first. done is true once there is none
// left. A step ends after a few rounds, rather than seek on to the next
// card the lists share, for the names' way to take its turns while long
// lists are walked that rarely meet.
func (c *cardPlaces) step() (done bool, err error) {
	for len(c.walks) > 0 {
		w := c.walks[0]
		ord, met, ok := seekBelow(w.driver, w.next, w.hi, roundsAStep)
		if !ok {
			c.walks = c.walks[1:]
			continue
		}
		if !met {
			w.next = ord
			return false, nil
		}
		w.next = ord + 1 // below hi, so no wrap
		c.work += placeWork
		place, starts, err := c.place(ord)
		if err != nil {
			return false, err
		}
		if starts&c.first != c.first || slices.Contains(c.best, place) || len(c.best) == c.a.limit && place > c.best[len(c.best)-1] {
			return false, nil
		}
		c.work += cardWork
		e, err := w.entries.decoded(ord)
		if err != nil {
			return false, damagef("search index damaged: card %d: %v; import the catalogue again", ord, err)
		}
		if c.check(&e) {
			c.best = layout.MergeFirst(nil, c.best, []uint32{place}, c.a.limit)
		}
		return false, nil
	}
	return true, cmp.Or(c.r.listCursors.damaged, c.r.groupTexts.damaged)
}

// place returns the place of the name of card ord in the namespace, and
// the starts of its words.
func (c *cardPlaces) place(ord uint32) (uint32, uint64, error) {
	if n := ord / layout.PlaceBlockSize; !c.loaded || n != c.blockNo {
		var key [5]byte
		key[0] = layout.CompletePlace
		binary.BigEndian.PutUint32(key[1:], n)
		k, v := c.a.other.Seek(key[:])
		if !bytes.Equal(k, key[:]) {
			return 0, 0, damagef("autocomplete index damaged: no places of cards %d on; import the catalogue again", n*layout.PlaceBlockSize)
		}
		c.block, c.blockNo, c.loaded = v, n, true
	}
	place, starts, ok := layout.CardPlace(c.block, ord, c.a.ns)
	if !ok {
		return 0, 0, damagef("autocomplete index damaged: no place of card %d; import the catalogue again", ord)
	}
	return place, starts, nil
}

// progress is the way's work so far, and the first places found.
func (c *cardPlaces) progress() (work int, best []uint32) { return c.work, c.best }
