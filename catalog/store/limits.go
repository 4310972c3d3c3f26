package store

import "path/filepath"

// limits bound what an import holds in memory and what one of its
// transactions puts. Create takes defaultLimits; a test takes smaller ones
// (createWith), so that a few records cross each bound as a large
// snapshot does.
type limits struct {
	commitAt     int // bytes put or pending that end a transaction
	setSort      int // each sort of the sets' cards: runCounts, setOrder, cardKeys
	postings     int // bytes of posting lists held before they spill
	runSort      int // bytes of the sort of the autocomplete runs' entries
	mergeFanIn   int // runs merged at once: posting lists, numbers, autocomplete runs
	setListPiece int // bytes of a piece of a list of sets
}

var defaultLimits = limits{
	commitAt:     commitEvery,
	setSort:      setSortMemory,
	postings:     postingMemory,
	runSort:      runSortMemory,
	mergeFanIn:   mergeFanIn,
	setListPiece: setListPiece,
}

// newPostings starts posting lists, of the index or of the name groups,
// within the Writer's limits.
func (w *Writer) newPostings() *postingBuilder {
	p := newPostingBuilder(filepath.Dir(w.path), w.limits.postings)
	p.runs.fanIn = w.limits.mergeFanIn
	return p
}

// newRunSorter starts the sort of the autocomplete runs' entries within
// the Writer's limits.
func (w *Writer) newRunSorter() *sorter {
	s := newSorter(filepath.Dir(w.path), w.limits.runSort)
	s.runs.fanIn = w.limits.mergeFanIn
	return s
}
