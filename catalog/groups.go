package catalog

import (
	"errors"
	"fmt"
	"unicode/utf8"
)

// A name group is one name in several languages and scripts, given by a
// snapshot's member "names" (docs/CONTRACT.md, Name groups):
// ["Bulbasaur", "フシギダネ", "妙蛙種子", "妙蛙种子"]. A card belongs to a group
// when one of its names, folded, stands in the card's folded name as whole
// words; a search term that matches any name of a card's groups matches
// the card.
//
// Limits of the groups. A group holds 2 to MaxGroupNames names, each of 1
// to MaxGroupNameLength characters that do not fold to nothing. The
// import holds every group in memory while it writes the index (to find
// the groups of each card), so all of them together are bounded too:
// MaxNameGroups groups and MaxNameGroupBytes bytes of names. Every Pokémon
// species in ten languages is 1,025 groups and about 140 KB.
const (
	MinGroupNames      = 2
	MaxGroupNames      = 32
	MaxGroupNameLength = 200
	MaxNameGroups      = 100_000
	MaxNameGroupBytes  = 8 << 20
)

// ErrNameGroupsLimit means a snapshot has more name groups, or more bytes
// of them, than a catalogue takes (MaxNameGroups, MaxNameGroupBytes).
var ErrNameGroupsLimit = errors.New("name groups past the limit")

// ValidateGroup returns every rule of a name group that names breaks, or
// nil: the field of each problem is the index of the name in the group
// ("[3]"), or "" for the group as a whole.
func ValidateGroup(names []string) []FieldError {
	var errs []FieldError
	if n := len(names); n < MinGroupNames || n > MaxGroupNames {
		errs = append(errs, FieldError{"", fmt.Sprintf("a group of %d to %d names", MinGroupNames, MaxGroupNames), fmt.Sprintf("%d name%s", n, plural(n))})
	}
	for i, name := range names {
		field := fmt.Sprintf("[%d]", i)
		switch n := utf8.RuneCountInString(name); {
		case n == 0:
			errs = append(errs, FieldError{field, "a name of at least 1 character", "an empty string"})
		case n > MaxGroupNameLength:
			errs = append(errs, FieldError{field, fmt.Sprintf("a name of at most %d characters", MaxGroupNameLength), lengthFound(name, n)})
		case Fold(name) == "":
			errs = append(errs, FieldError{field, "a name with a letter, digit or sign", Quote(name)})
		}
	}
	return errs
}
