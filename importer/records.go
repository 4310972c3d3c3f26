package importer

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"crypto/rand"
	"encoding/hex"

	"github.com/catalogd/catalogd/catalog"
)

// errWrite marks a failure to write the new catalogue: not the snapshot's
// fault, and fatal.
var errWrite = errors.New("write the new catalogue")

// readArray reads the records of "sets" or "cards".
func (r *run) readArray(file, member string, s *scanner) error {
	line, col := s.start()
	kind, err := s.kind()
	if err != nil {
		return err
	}
	if kind != "array" {
		found, err := s.skipValue()
		if err != nil {
			return err
		}
		return r.report(&RecordError{File: file, Line: line, Column: col, Field: member, Expected: "an array", Found: found})
	}
	fields := setFields[:]
	if member == "cards" {
		fields = cardFields[:]
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
	bad, err := r.reportAll(file, rec, setFields[:], problems, set.Validate(), idOf(rec, setID))
	if bad || err != nil {
		r.rejectSet(set)
		return err
	}
	var dup *catalog.DuplicateError
	if err := r.w.AddSet(set); errors.As(err, &dup) {
		r.rejectSet(set)
		what := "a set id not used by another set"
		if dup.Field == "code" {
			what = fmt.Sprintf("a code not used by another set of zone %q", set.Zone)
		}
		return r.fieldError(file, rec, setFields[:], dup.Field, set.ID, what, catalog.Quote(dup.Value)+" again")
	} else if err != nil {
		return fmt.Errorf("%w: %w", errWrite, err)
	}
	return nil
}

func (r *run) addCard(file string, rec *record, problems []problem) error {
	card := toCard(rec)
	bad, err := r.reportAll(file, rec, cardFields[:], problems, card.Validate(), idOf(rec, cardID))
	if bad || err != nil {
		return err
	}
	if name, ok := r.w.SetName(card.Zone, card.SetCode); ok {
		if name != card.SetName {
			if err := r.fieldError(file, rec, cardFields[:], "setName", card.ID, fmt.Sprintf("the name of set %q of zone %q, %s", card.SetCode, card.Zone, catalog.Quote(name)), catalog.Quote(card.SetName)); err != nil {
				return err
			}
			return nil
		}
	} else {
		r.deferCard(file, rec, &card)
	}
	var dup *catalog.DuplicateError
	if err := r.w.AddCard(&card); errors.As(err, &dup) {
		return r.fieldError(file, rec, cardFields[:], "id", card.ID, "a card id not used by another card", catalog.Quote(card.ID)+" again")
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
		r.rejected[setRef{zone: set.Zone, code: set.Code}] = true
	}
}

// deferCard remembers a card whose set has not been read yet; the members of a
// snapshot may come in any order.
func (r *run) deferCard(file string, rec *record, card *catalog.Card) {
	key := setRef{card.Zone, card.SetCode, card.SetName}
	if p, ok := r.pending[key]; ok {
		p.more++
		return
	}
	at := func(i int) (int, int) { return rec.values[i].line, rec.values[i].col }
	cl, cc := at(cardSetCode)
	nl, nc := at(cardSetName)
	r.pending[key] = &pendingRef{
		seq: len(r.pending),
		codeErr: &RecordError{File: file, Line: cl, Column: cc, Record: r.recordName(), ID: card.ID, Field: "setCode",
			Expected: fmt.Sprintf("the code of a set of zone %q in the snapshot", card.Zone), Found: catalog.Quote(card.SetCode) + ", which no set has"},
		nameErr: &RecordError{File: file, Line: nl, Column: nc, Record: r.recordName(), ID: card.ID, Field: "setName",
			Found: catalog.Quote(card.SetName)},
	}
}

// checkPending reports the deferred cards whose set never came or has
// another name, in the order they were read.
func (r *run) checkPending() {
	list := make([]*pendingRef, 0, len(r.pending))
	keys := make(map[*pendingRef]setRef, len(r.pending))
	for k, p := range r.pending {
		list = append(list, p)
		keys[p] = k
	}
	slices.SortFunc(list, func(a, b *pendingRef) int { return cmp.Compare(a.seq, b.seq) })
	for _, p := range list {
		k := keys[p]
		if r.rejected[setRef{zone: k.zone, code: k.code}] {
			continue
		}
		e := p.codeErr
		if name, ok := r.w.SetName(k.zone, k.code); ok {
			if name == k.name {
				continue
			}
			e = p.nameErr
			e.Expected = fmt.Sprintf("the name of set %q of zone %q, %s", k.code, k.zone, catalog.Quote(name))
		}
		if p.more > 0 {
			e.Found += fmt.Sprintf(" (and so do %d more cards)", p.more)
		}
		if r.report(e) != nil {
			return
		}
	}
}

func idOf(rec *record, i int) string {
	if v := rec.values[i]; v.present && !v.bad {
		return v.str
	}
	return ""
}

// newGeneration names a generation: sortable by time, unique by chance.
func newGeneration(now time.Time) string {
	var b [4]byte
	rand.Read(b[:])
	return now.UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:])
}
