package store

import (
	"errors"

	"github.com/catalogd/catalogd/catalog/store/internal/layout"
)

// Errors of the catalogue. Callers compare with errors.Is.
var (
	// ErrNotFound means the set or card is not in the active catalogue.
	ErrNotFound = errors.New("not found")
	// ErrDamaged means the catalogue file is not as the import wrote it
	// (layout.ErrDamaged): import the catalogue again.
	ErrDamaged = layout.ErrDamaged
)

// What a catalogue file says of itself, as the import wrote it in the
// meta bucket (internal/layout).
type (
	// Info is the catalogue's generation, import time, sources, counts
	// and history.
	Info = layout.Info
	// Source is one snapshot the import read.
	Source = layout.Source
	// ZoneCount is the cards and sets of one zone.
	ZoneCount = layout.ZoneCount
	// HistoryStep is one import in the history the file keeps.
	HistoryStep = layout.HistoryStep
)

// The bounds of a query that its callers check first.
const (
	// MaxAutocompleteLimit is the most names one autocomplete answers.
	MaxAutocompleteLimit = layout.MaxAutocompleteLimit
	// MinFuzzyTerm is the fewest code points of a term that may take an
	// edit in a fuzzy search, and TwoEditsFrom the fewest that may take
	// two.
	MinFuzzyTerm = layout.MinFuzzyTerm
	TwoEditsFrom = layout.TwoEditsFrom
)
