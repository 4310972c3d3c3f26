package store

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"math"
	"unicode/utf8"

	"github.com/catalogd/catalogd/catalog/store/internal/layout"
	bolt "go.etcd.io/bbolt"
)

// Where names repeat, the cards that the lists give for a query's terms
// are each name many times over, and the names that hold the terms few:
// on ten million cards of the generator, the cards of `mew g` took 5 ms
// to meet, its names through their grams 0.06 ms to read and check
// (docs/BENCHMARKS.md, Autocomplete). The names' grams have runs there
// (layout.CompleteGram), and gramNames finds the names that hold the
// other terms through them.

// gramNames finds the first names of the namespace that hold every one
// of others and a word that starts with the last term, in rank order:
// the names on the runs of every term, each a run of one of its grams
// (every name whose forms hold the term is on it) united with the runs of
// the groups whose text holds the term. Each name met on all of them is
// checked as the names' way checks its own, against every term: a term
// whose names the runs cannot give (held by more groups than a query
// reads, or holding a zero byte, which no gram's run does) is left out of
// the walk, not out of the check. Done once limit of them hold the terms,
// or none is left.
type gramNames struct {
	a      *completer
	others []term
	starts *wordStarts
	unions []nameUnion // of the terms walked
	next   uint32      // the place to look from
	n      nameView
	best   []uint32 // the names found, in rank order
	work   int      // in placeWork and nameWork
	done   bool
}

// nameUnion is the names of one term, from several runs, in rank order:
// each source's next is its next place, until done.
type nameUnion []*nameSource

// gramStepPlaces is the most places a step of gramNames reads before it
// ends, for the names' way to take its turns while runs rarely meet. A
// test sets it to 1.
var gramStepPlaces = 64

// newGramNames returns the way through the names' grams, or ok false
// where the file has no runs of grams or no term's names can be walked
// by them: the cards' way is taken then.
func (db *DB) newGramNames(r *reader, a *completer, others []term, starts *wordStarts) (g *gramNames, ok bool, err error) {
	if !db.nameGrams {
		return nil, false, nil
	}
	g = &gramNames{a: a, others: others, starts: starts}
	for i := range others {
		u, ok, err := g.union(r, others[i].text)
		if err != nil {
			return nil, false, err
		}
		if !ok {
			continue
		}
		if len(u) == 0 {
			g.done = true // no name holds the term
		}
		g.unions = append(g.unions, u)
	}
	return g, len(g.unions) > 0, nil
}

// union finds the runs of the names that hold text: of its gram with the
// shortest run, and of each group whose text holds it. ok is false when
// they cannot be found so: more groups may hold it than a query reads
// one by one, or it holds a zero byte.
func (g *gramNames) union(r *reader, text []byte) (u nameUnion, ok bool, err error) {
	a := g.a
	if bytes.IndexByte(text, 0) >= 0 {
		return nil, false, nil // no gram with a zero byte has a run (build/completions.go)
	}
	ref := func(c *bolt.Cursor, key []byte) listRef {
		l, e := readListRef(c, key)
		err = cmp.Or(err, e)
		return l
	}
	apart, _ := groupGrams(r, text, ref)
	if err != nil {
		return nil, false, err
	}
	if len(apart) > 0 && apart[0].count > layout.MaxGroupLists {
		return nil, false, nil
	}
	var shortest []byte
	none := false
	layout.EachGram(text, min(3, utf8.RuneCount(text)), func(gram []byte) {
		if none || err != nil {
			return
		}
		var run []byte
		if run, err = findRun(a.c, layout.CompleteGram, gram); run == nil {
			none = true // no name's forms hold the gram, so none holds text
		} else if shortest == nil || len(run) < len(shortest) {
			shortest = run
		}
	})
	if err != nil {
		return nil, false, err
	}
	var runs [][]byte
	if !none && shortest != nil {
		runs = append(runs, shortest)
	}
	var gid [4]byte
	eachGroupHolding(r, text, apart, func(id uint32) {
		binary.BigEndian.PutUint32(gid[:], id)
		if run, e := findRun(a.other, layout.CompleteGroup, gid[:]); e != nil {
			err = e
		} else if run != nil {
			runs = append(runs, run)
		}
	})
	if err != nil {
		return nil, false, err
	}
	u = nameUnion{}
	for _, run := range runs {
		names, err := newRunNames(run, a.ns)
		if err != nil {
			return nil, false, damagef("autocomplete index damaged: run of %q: %v; import the catalogue again", text, err)
		}
		if err := u.add(&nameSource{names: names}); err != nil {
			return nil, false, err
		}
	}
	return u, true, cmp.Or(r.groupListCursors.damaged, r.groupTexts.damaged)
}

// add reads the source's first place and adds it to u, unless it has
// none.
func (u *nameUnion) add(s *nameSource) error {
	if err := s.advance(); err != nil {
		return damagef("autocomplete index damaged: %v; import the catalogue again", err)
	}
	if !s.done {
		*u = append(*u, s)
	}
	return nil
}

// seek returns the first place at or after from on any of the union's
// runs, reading at most *budget places, a placeWork each to work. It
// pauses, with ok false, when the budget is spent first: the runs keep
// what they read, and the same seek goes on from there.
func (u nameUnion) seek(from uint32, budget, work *int) (place uint32, ok, paused bool, err error) {
	for _, s := range u {
		for !s.done && s.next < from {
			if *budget <= 0 {
				return 0, false, true, nil
			}
			if err := s.advance(); err != nil {
				return 0, false, false, damagef("autocomplete index damaged: %v; import the catalogue again", err)
			}
			*budget--
			*work += placeWork
		}
		if !s.done && (!ok || s.next < place) {
			place, ok = s.next, true
		}
	}
	return place, ok, false, nil
}

// step reads the runs on to the next name on every union, and checks it;
// or ends once it has read gramStepPlaces places. done is true once
// limit names are found or none is left.
func (g *gramNames) step() (done bool, err error) {
	at, budget := g.next, gramStepPlaces
	for i := 0; i < len(g.unions) && !g.done; {
		place, ok, paused, err := g.unions[i].seek(at, &budget, &g.work)
		switch {
		case err != nil:
			return false, err
		case paused:
			g.next = at
			return false, nil
		case !ok:
			g.done = true
		case place > at:
			at, i = place, 0
		default:
			i++
		}
	}
	if g.done {
		return true, nil
	}
	g.work += nameWork
	if err := g.a.name(at, &g.n); err != nil {
		return false, err
	}
	if g.n.holds(g.others, g.starts) {
		if g.best = append(g.best, at); len(g.best) == g.a.limit {
			g.done = true
		}
	}
	if at == math.MaxUint32 {
		g.done = true
	}
	g.next = at + 1
	return g.done, nil
}

// progress is the way's work so far, and the names it has found.
func (g *gramNames) progress() (work int, best []uint32) { return g.work, g.best }
