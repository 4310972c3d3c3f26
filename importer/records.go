package importer

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/catalogd/catalogd/catalog"
	"github.com/catalogd/catalogd/catalog/store/build"
)

// errWrite marks a failure to write the new catalogue: not the snapshot's
// fault, and fatal.
var errWrite = errors.New("write the new catalogue")

// readArray reads the records of "sets" or "cards".
func (r *run) readArray(file, member string, s *scanner) error {
	if ok, err := r.expectArray(file, s, "", member, "an array"); !ok {
		return err
	}
	fields := setFields
	if member == "cards" {
		fields = cardFields
	}
	var rec record
	more, err := s.first('[', ']', "an array")
	for i := 0; err == nil && more; i++ {
		if i%4096 == 0 {
			if err := r.ctx.Err(); err != nil {
				return err
			}
		}
		r.curMember, r.curIndex = member, i
		problems, derr := decodeRecord(s, fields, &rec)
		if derr != nil {
			return derr
		}
		if member == "cards" {
			err = r.addCard(file, &rec, problems)
		} else {
			err = r.addSet(file, &rec, problems)
		}
		if err == nil {
			more, err = s.more(']')
		}
	}
	r.curMember = ""
	return err
}

// expectArray reports whether the value s is at is an array, for the
// caller to open (scanner.first). Any other value is skipped and reported
// as the field of record that expected what it says.
func (r *run) expectArray(file string, s *scanner, record, field, expected string) (bool, error) {
	line, col := s.start()
	kind, err := s.kind()
	if err != nil || kind == "array" {
		return err == nil, err
	}
	found, err := s.skipValue()
	if err != nil {
		return false, err
	}
	return false, r.report(&RecordError{File: file, Line: line, Column: col, Record: record, Field: field, Expected: expected, Found: found})
}

// recordName names the record being read, for messages.
func (r *run) recordName() string {
	if r.curMember == "" {
		return ""
	}
	return r.curMember + "[" + strconv.Itoa(r.curIndex) + "]"
}

// reportAll reports the decoding problems and the rule violations of one
// record; it returns whether there were any.
func (r *run) reportAll(file string, rec *record, fields []field, problems []problem, rules []catalog.FieldError, id string) (bool, error) {
	for _, p := range problems {
		if err := r.report(&RecordError{File: file, Line: p.line, Column: p.col, Record: r.recordName(), ID: id, Field: p.field, Expected: p.expected, Found: p.found}); err != nil {
			return true, err
		}
	}
	for _, fe := range rules {
		i := fieldIndex(fields, fe.Field)
		line, col := rec.line, rec.col
		if i >= 0 {
			if rec.values[i].bad {
				continue // already reported as a problem
			}
			if rec.values[i].present {
				line, col = rec.values[i].line, rec.values[i].col
			}
		}
		if err := r.report(&RecordError{File: file, Line: line, Column: col, Record: r.recordName(), ID: id, Field: fe.Field, Expected: fe.Expected, Found: fe.Found}); err != nil {
			return true, err
		}
	}
	return len(problems) > 0 || len(rules) > 0, nil
}

// fieldError reports a problem with one field of the current record.
func (r *run) fieldError(file string, rec *record, fields []field, name, id, expected, found string) error {
	line, col := rec.line, rec.col
	if i := fieldIndex(fields, name); i >= 0 && rec.values[i].present {
		line, col = rec.values[i].line, rec.values[i].col
	}
	return r.report(&RecordError{File: file, Line: line, Column: col, Record: r.recordName(), ID: id, Field: name, Expected: expected, Found: found})
}

func (r *run) addSet(file string, rec *record, problems []problem) error {
	set := toSet(rec)
	bad, err := r.reportAll(file, rec, setFields, problems, set.Validate(), idOf(rec, setID))
	if bad || err != nil {
		r.rejectSet(set)
		return err
	}
	var dup *build.DuplicateError
	if err := r.w.AddSet(set); errors.As(err, &dup) {
		r.rejectSet(set)
		what := "a set id not used by another set"
		if dup.Field == "code" {
			what = fmt.Sprintf("a code not used by another set of zone %q", set.Zone)
		}
		return r.fieldError(file, rec, setFields, dup.Field, set.ID, what, catalog.Quote(dup.Value)+" again")
	} else if err != nil {
		return fmt.Errorf("%w: %w", errWrite, err)
	}
	return nil
}

func (r *run) addCard(file string, rec *record, problems []problem) error {
	card := toCard(rec)
	bad, err := r.reportAll(file, rec, cardFields, problems, card.Validate(), idOf(rec, cardID))
	if bad || err != nil {
		return err
	}
	if name, ok := r.w.SetName(card.Zone, card.SetCode); ok {
		if name != card.SetName {
			if err := r.fieldError(file, rec, cardFields, "setName", card.ID, fmt.Sprintf("the name of set %q of zone %q, %s", card.SetCode, card.Zone, catalog.Quote(name)), catalog.Quote(card.SetName)); err != nil {
				return err
			}
			return nil
		}
	} else if err := r.deferCard(file, rec, &card); err != nil {
		return err
	}
	var dup *build.DuplicateError
	if err := r.w.AddCard(&card); errors.As(err, &dup) {
		return r.fieldError(file, rec, cardFields, "id", card.ID, "a card id not used by another card", catalog.Quote(card.ID)+" again")
	} else if err != nil {
		return fmt.Errorf("%w: %w", errWrite, err)
	}
	r.cards++
	if r.cfg.afterCard != nil {
		if err := r.cfg.afterCard(r.cards); err != nil {
			return fmt.Errorf("%w: %w", errWrite, err)
		}
	}
	return nil
}

// rejectSet remembers a set that was reported as invalid, so that its cards
// are not also reported as naming a set that does not exist.
func (r *run) rejectSet(set catalog.Set) {
	if set.Zone != "" && set.Code != "" {
		// Copies, not parts of the record's decoded text.
		r.rejected[setRef{zone: strings.Clone(set.Zone), code: strings.Clone(set.Code)}] = true
	}
}

// deferCard has the Writer remember a card whose set has not been read yet;
// the members of a snapshot may come in any order. The Writer keeps such
// references in the file it writes, not in memory: a snapshot whose cards
// come first names every set before it is read.
func (r *run) deferCard(file string, rec *record, card *catalog.Card) error {
	note := func(dst []byte) []byte {
		for _, i := range []int{cardSetCode, cardSetName} {
			dst = binary.AppendUvarint(dst, uint64(rec.values[i].line))
			dst = binary.AppendUvarint(dst, uint64(rec.values[i].col))
		}
		for _, s := range []string{file, r.recordName()} {
			dst = binary.AppendUvarint(dst, uint64(len(s)))
			dst = append(dst, s...)
		}
		return append(dst, card.ID...)
	}
	if err := r.w.DeferSetCheck(card.Zone, card.SetCode, card.SetName, note); err != nil {
		return fmt.Errorf("%w: %w", errWrite, err)
	}
	return nil
}

// deferredCard is what deferCard's note keeps of the first card of a
// reference, to report it.
type deferredCard struct {
	code, name [2]int // line and column of its setCode and setName
	file       string
	record, id string
}

func parseDeferredCard(note []byte) (c deferredCard, ok bool) {
	var n [4]uint64
	for i := range n {
		v, w := binary.Uvarint(note)
		if w <= 0 {
			return c, false
		}
		n[i], note = v, note[w:]
	}
	c.code, c.name = [2]int{int(n[0]), int(n[1])}, [2]int{int(n[2]), int(n[3])}
	var s [2]string
	for i := range s {
		l, w := binary.Uvarint(note)
		if w <= 0 || uint64(len(note)-w) < l {
			return c, false
		}
		s[i], note = string(note[w:w+int(l)]), note[w+int(l):]
	}
	c.file, c.record, c.id = s[0], s[1], string(note)
	return c, true
}

// checkPending reports the deferred cards whose set never came or has
// another name, in the order they were read. Only as many as can still be
// reported are kept, whatever the number of references. When a file was
// not read to its end (r.unread), a set that never came may lie past
// where it stopped: only another name is reported then.
func (r *run) checkPending() error {
	keep := MaxErrors - len(r.errs) + 1 // one more tells that the list was cut
	type unmatched struct {
		first uint64 // the order of its first card
		e     *RecordError
	}
	var found []unmatched
	firstRead := func() {
		slices.SortFunc(found, func(a, b unmatched) int { return cmp.Compare(a.first, b.first) })
		found = found[:min(keep, len(found))]
	}
	err := r.w.CheckSetRefs(func(p *build.SetRefProblem) error {
		if r.rejected[setRef{zone: p.Zone, code: p.Code}] || r.unread && !p.Known {
			return nil
		}
		c, ok := parseDeferredCard(p.Note)
		if !ok {
			return errors.New("the note of a deferred card is damaged")
		}
		e := &RecordError{File: c.file, Line: c.code[0], Column: c.code[1], Record: c.record, ID: c.id, Field: "setCode",
			Expected: fmt.Sprintf("the code of a set of zone %q in the snapshot", p.Zone), Found: catalog.Quote(p.Code) + ", which no set of that zone has"}
		if p.Known {
			e.Line, e.Column, e.Field = c.name[0], c.name[1], "setName"
			e.Expected = fmt.Sprintf("the name of set %q of zone %q, %s", p.Code, p.Zone, catalog.Quote(p.KnownName))
			e.Found = catalog.Quote(p.SetName)
		}
		if p.More > 0 {
			e.Found += fmt.Sprintf(" (and so do %d more cards)", p.More)
		}
		if found = append(found, unmatched{p.First, e}); len(found) >= 2*keep {
			firstRead()
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("%w: %w", errWrite, err)
	}
	firstRead()
	for _, p := range found {
		if r.report(p.e) != nil {
			break
		}
	}
	return nil
}

func idOf(rec *record, i int) string {
	if v := rec.values[i]; v.present && !v.bad {
		return v.str
	}
	return ""
}
