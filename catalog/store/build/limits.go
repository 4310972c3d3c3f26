package build

import "path/filepath"

// Limits bound what an import holds in memory and what one of its
// transactions puts. Create takes DefaultLimits; a test takes smaller ones
// (CreateWith), so that a few records cross each bound as a large
// snapshot does.
type Limits struct {
	CommitAt     int // bytes put or pending that end a transaction
	SetSort      int // each sort of the sets' cards: runCounts, setOrder, cardKeys
	Postings     int // bytes of posting lists held before they spill
	RunSort      int // bytes of the sort of the autocomplete runs' entries
	PlaceSort    int // bytes of each sort of the cards' places: by name, by card
	MergeFanIn   int // runs merged at once: posting lists, numbers, autocomplete runs
	SetListPiece int // bytes of a piece of a list of sets
	// NameGramsAt is the cards a distinct name has on average from which
	// the names' grams get runs (writeCompletions; 0 for nameGramsAt):
	// where names repeat, those runs are a fraction of the cards' lists.
	NameGramsAt int
}

// DefaultLimits returns the limits of Create, which bound the memory of
// an import of any size (docs/OPERATIONS.md).
func DefaultLimits() Limits {
	return Limits{
		CommitAt:     commitEvery,
		SetSort:      setSortMemory,
		Postings:     postingMemory,
		RunSort:      runSortMemory,
		PlaceSort:    placeSortMemory,
		MergeFanIn:   mergeFanIn,
		SetListPiece: setListPiece,
		NameGramsAt:  nameGramsAt,
	}
}

// sortMemory bounds the memory of the search index sort before it spills to
// disk.
const sortMemory = 16 << 20

// setSortMemory bounds the memory of each sort of what is known of sets
// before it spills to disk.
const setSortMemory = 4 << 20

// postingMemory bounds the posting lists the Writer builds in memory before
// it writes them to a temporary file (see postingBuilder).
const postingMemory = 32 << 20

// newPostings starts posting lists, of the index or of the name groups,
// within the Writer's limits.
func (w *Writer) newPostings() *postingBuilder {
	p := newPostingBuilder(filepath.Dir(w.path), w.limits.Postings)
	p.runs.fanIn = w.limits.MergeFanIn
	return p
}

// newPlaceSorter starts a sort of the cards' places within the Writer's
// limits.
func (w *Writer) newPlaceSorter() *sorter {
	s := newSorter(filepath.Dir(w.path), w.limits.PlaceSort)
	s.runs.fanIn = w.limits.MergeFanIn
	return s
}

// newRunSorter starts the sort of the autocomplete runs' entries within
// the Writer's limits.
func (w *Writer) newRunSorter() *sorter {
	s := newSorter(filepath.Dir(w.path), w.limits.RunSort)
	s.runs.fanIn = w.limits.MergeFanIn
	return s
}
