package store

// The autocomplete of a query of several terms (docs/CONTRACT.md, As you
// type): the names in which its last term starts a word and that hold
// every other, found by two ways that take turns (wordsWithOthers).

import (
	"cmp"
	"time"

	"github.com/catalogd/catalogd/catalog/store/internal/layout"
)

// oneWayAlone, which a test sets to othersOnly or namesOnly, makes
// wordsWithOthers take that way alone, so that the test checks its every
// answer rather than those it finds first.
var oneWayAlone int

const (
	othersOnly = 1 + iota
	namesOnly
)

// tookGramNames, which a test sets, is called when a query takes the
// way through the names' grams.
var tookGramNames = func() {}

// turnClock is the time by which wordsWithOthers bounds the turns of the
// others' way (see othersTimeShare): a monotonic clock. Which way finds
// an answer first depends on it; the answer does not.
var turnClock = func() time.Duration { return time.Since(clockStart) }

var clockStart = time.Now()

// othersStepsATurn is the most steps of the others' way between two
// readings of turnClock: each takes up to a few microseconds, a reading
// some tens of nanoseconds.
const othersStepsATurn = 8

// othersTimeShare is the most time the others' way takes, in turns, for
// each unit the names' way has taken: enough that the work the two ways
// are weighed by (see nameWork) decides where it is right, as on a
// million names that do not repeat; a bound where it is not, as on ten
// million cards of names that do, whose lists are many or rarely meet.
const othersTimeShare = 4

// othersWay is the way of wordsWithOthers that starts from the other
// terms: through the cards that the search index's lists give for every
// term (cardPlaces), or, where names repeat, through the runs of the
// names' grams (gramNames).
type othersWay interface {
	// step takes the way on; done is true once its answer is whole.
	step() (done bool, err error)
	// progress is the way's work so far (in placeWork, cardWork and
	// nameWork), and the first names found, its answer once done.
	progress() (work int, best []uint32)
}

// wordsWithOthers returns the first names of the namespace in which last
// starts where a word does, and that hold every one of others; head is
// the first word of last, or all of it. Two ways find
// them, and they take turns until one is done: the last term's names in
// rank order, each checked against the others (done once limit of them
// hold the others, or none is left), and the others' way (othersWay),
// from the names that hold the other terms. Each way is cheap where the
// other is dear: names that hold the others are common among the last
// term's, or the names or cards that hold the others are few. A turn of
// the others' way ends once its work passes the names' (see nameWork)
// or its time passes othersTimeShare times theirs: where the lists are
// many or rarely meet, a step costs far more than its work says.
func (db *DB) wordsWithOthers(r *reader, a *completer, others []term, head, last []byte) ([]uint32, error) {
	stream, err := newNameStream(a, layout.CompleteWord, head)
	if err != nil {
		return nil, err
	}
	starts := newWordStarts(last, &r.groupTexts)
	way, err := db.newOthersWay(r, a, others, last, &starts)
	if err != nil {
		return nil, err
	}
	for oneWayAlone == othersOnly {
		if done, err := way.step(); err != nil || done {
			_, best := way.progress()
			return best, cmp.Or(err, r.groupTexts.damaged)
		}
	}
	var n nameView
	var found []uint32
	var namesTook, othersTook time.Duration
	streamed, mark := 0, turnClock()
	for {
		ord, ok, err := stream.next()
		if err != nil || !ok {
			return found, cmp.Or(err, r.groupTexts.damaged)
		}
		if err := a.name(ord, &n); err != nil {
			return nil, err
		}
		if n.holds(others, &starts) {
			if found = append(found, ord); len(found) == a.limit {
				return found, r.groupTexts.damaged
			}
		}
		now := turnClock()
		namesTook, mark = namesTook+now-mark, now
		for streamed++; oneWayAlone != namesOnly && spent(way) < nameWork*streamed && othersTook < othersTimeShare*namesTook; {
			for i := 0; i < othersStepsATurn && spent(way) < nameWork*streamed; i++ {
				if done, err := way.step(); err != nil || done {
					_, best := way.progress()
					return best, cmp.Or(err, r.groupTexts.damaged)
				}
			}
			now = turnClock()
			othersTook, mark = othersTook+now-mark, now
		}
	}
}

// newOthersWay returns the others' way: through the names' grams where
// the file has their runs and they can walk a term, else through the
// cards.
func (db *DB) newOthersWay(r *reader, a *completer, others []term, last []byte, starts *wordStarts) (othersWay, error) {
	g, ok, err := db.newGramNames(r, a, others, starts)
	if err != nil {
		return nil, err
	}
	if ok {
		tookGramNames()
		return g, nil
	}
	return db.newCardPlaces(r, a, others, last, starts)
}

// spent is the work the way has done.
func spent(w othersWay) int {
	work, _ := w.progress()
	return work
}
