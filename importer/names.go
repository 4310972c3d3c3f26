package importer

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/catalogd/catalogd/catalog"
)

// readNames reads the member "names" of a snapshot: an array of name
// groups, each an array of 2 to 32 names (docs/CONTRACT.md, Name groups).
// A bad group is reported with its line and column and left out; the
// others go on to the Writer.
func (r *run) readNames(file string, s *scanner) error {
	if ok, err := r.expectArray(file, s, "", "names", "an array of name groups"); !ok {
		return err
	}
	more, err := s.first('[', ']', "an array")
	for i := 0; err == nil && more; i++ {
		r.curMember, r.curIndex = "names", i
		if err = r.readGroup(file, s); err == nil {
			more, err = s.more(']')
		}
	}
	r.curMember = ""
	return err
}

// readGroup reads one name group and hands it to the Writer when it breaks
// no rule.
func (r *run) readGroup(file string, s *scanner) error {
	line, col := s.start()
	report := func(line, col int, field, expected, found string) error {
		return r.report(&RecordError{File: file, Line: line, Column: col, Record: r.recordName(), Field: field, Expected: expected, Found: found})
	}
	if ok, err := r.expectArray(file, s, r.recordName(), "", fmt.Sprintf("a name group: an array of %d to %d names", catalog.MinGroupNames, catalog.MaxGroupNames)); !ok {
		return err
	}
	var names []string
	var places [][3]int // the index, line and column of each name kept
	bad := false
	count := 0 // names read, of which the first MaxGroupNames are kept
	more, err := s.first('[', ']', "an array")
	for j := 0; err == nil && more; j++ {
		count++
		nline, ncol := s.start()
		var k string
		if k, err = s.kind(); err != nil {
			return err
		}
		if k != "string" {
			var found string
			if found, err = s.skipValue(); err != nil {
				return err
			}
			if err = report(nline, ncol, "["+strconv.Itoa(j)+"]", "a name (a string)", found); err != nil {
				return err
			}
			bad = true
		} else {
			var name string
			name, err = s.readString()
			switch {
			case errors.Is(err, errTooLong):
				err = report(nline, ncol, "["+strconv.Itoa(j)+"]", fmt.Sprintf("a name of at most %d characters", catalog.MaxGroupNameLength), name)
				bad = true
			case err != nil:
				return err
			case len(names) < catalog.MaxGroupNames:
				names, places = append(names, name), append(places, [3]int{j, nline, ncol})
			}
		}
		if err == nil {
			more, err = s.more(']')
		}
	}
	if err != nil {
		return err
	}
	if count < catalog.MinGroupNames || count > catalog.MaxGroupNames {
		// Only the first names are kept: the group is reported by its count.
		if err := report(line, col, "", fmt.Sprintf("a group of %d to %d names", catalog.MinGroupNames, catalog.MaxGroupNames), countOf(count, "name")); err != nil {
			return err
		}
		bad = true
	}
	for _, p := range catalog.ValidateGroup(names) {
		if p.Field == "" {
			continue // the count, checked above on every name read
		}
		n, _ := strconv.Atoi(p.Field[1 : len(p.Field)-1])
		at := places[n]
		if err := report(at[1], at[2], "["+strconv.Itoa(at[0])+"]", p.Expected, p.Found); err != nil {
			return err
		}
		bad = true
	}
	if bad || r.namesPastLimit {
		return nil
	}
	if err := r.w.AddNames(names); errors.Is(err, catalog.ErrNameGroupsLimit) {
		r.namesPastLimit = true
		found := strings.TrimPrefix(err.Error(), catalog.ErrNameGroupsLimit.Error()+": ")
		return report(line, col, "", fmt.Sprintf("at most %d name groups of at most %d bytes of names in all", catalog.MaxNameGroups, catalog.MaxNameGroupBytes), found)
	} else if err != nil {
		return fmt.Errorf("%w: %w", errWrite, err)
	}
	return nil
}

// countOf is n things in English: "1 name", "2 names".
func countOf(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return strconv.Itoa(n) + " " + thing + "s"
}
