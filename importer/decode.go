package importer

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"

	"github.com/catalogd/catalogd/catalog"
)

// The members of a record, their JSON types and whether they may be missing
// or null: catalog's members (docs/CONTRACT.md, Records; Snapshots and
// validation), as the decoder needs them.
type fieldKind uint8

const (
	kindString fieldKind = iota
	kindInteger
)

type field struct {
	name     string
	kind     fieldKind
	required bool
	nullable bool
}

var (
	setFields  = fieldsOf(catalog.SetMembers[:])
	cardFields = fieldsOf(catalog.CardMembers[:])
)

func fieldsOf(members []catalog.Member) []field {
	fields := make([]field, len(members))
	for i, m := range members {
		kind := kindString
		if m.Type == "integer" {
			kind = kindInteger
		}
		fields[i] = field{m.Name, kind, m.Required, m.Nullable}
	}
	return fields
}

// Indexes into setFields, in the order of catalog.SetMembers: toSet reads
// the members by them (shape_test.go holds the two in step).
const (
	setID = iota
	setCode
	setName
	setZone
	setReleasedOn
	setCardCount
)

// Indexes into cardFields, in the order of catalog.CardMembers: toCard
// reads the members by them.
const (
	cardID = iota
	cardName
	cardSetName
	cardSetCode
	cardNumber
	cardLanguage
	cardYear
	cardVariant
	cardRarity
	cardImageURL
	cardZone
	cardTotalCards
	cardIllustrator
	cardMarketAID
	cardMarketAPath
	cardMarketBID
	cardScanFallbackURL
)

const maxFields = max(len(catalog.SetMembers), len(catalog.CardMembers))

// value is one decoded member.
type value struct {
	present bool
	null    bool
	bad     bool // already reported: a wrong type, say
	text    bool // str is to be cut from the record's text, at [off, end)
	str     string
	num     int64
	line    int
	col     int
	off     int
	end     int
}

// record is one decoded object: its position and the values of its members,
// indexed like its field table. The string values of a record are decoded
// into text, and become strings together, with one allocation.
type record struct {
	line, col int
	values    [maxFields]value
	text      []byte
}

func (r *record) str(i int) string { return r.values[i].str }

func (r *record) optString(i int) catalog.Nullable[string] {
	v := r.values[i]
	switch {
	case !v.present || v.bad:
		return catalog.Nullable[string]{}
	case v.null:
		return catalog.Null[string]()
	}
	return catalog.Some(v.str)
}

func (r *record) optInt(i int) catalog.Nullable[int64] {
	v := r.values[i]
	switch {
	case !v.present || v.bad:
		return catalog.Nullable[int64]{}
	case v.null:
		return catalog.Null[int64]()
	}
	return catalog.Some(v.num)
}

// problem is a field-level problem before it is given its file and record.
type problem struct {
	line, col int
	field     string
	expected  string
	found     string
}

// decodeRecord reads one object against fields. Problems with members are
// returned, not fatal; only a syntax error (the returned error) ends the
// file.
func decodeRecord(s *scanner, fields []field, rec *record) ([]problem, error) {
	*rec = record{text: rec.text[:0]}
	rec.line, rec.col = s.start()
	kind, err := s.kind()
	if err != nil {
		return nil, err
	}
	if kind != "object" {
		found, err := s.skipValue()
		if err != nil {
			return nil, err
		}
		// No member was read, so no rule about one can be judged.
		for i := range fields {
			rec.values[i].bad = true
		}
		return []problem{{rec.line, rec.col, "", "an object", found}}, nil
	}
	var problems []problem
	var unknown map[[sha256.Size]byte]bool // the names of unknown members met, by their hash
	more, err := s.first('{', '}', "an object")
	for err == nil && more {
		if problems, err = decodeMember(s, fields, rec, problems, &unknown); err != nil {
			return nil, err
		}
		more, err = s.more('}')
	}
	if err != nil {
		return nil, err
	}
	return rec.finish(fields, problems), nil
}

// decodeMember reads one member of a record, its name and then its value
// against the field of that name, and appends its problems to problems;
// unknown holds the names of the unknown members met so far.
func decodeMember(s *scanner, fields []field, rec *record, problems []problem, unknown *map[[sha256.Size]byte]bool) ([]problem, error) {
	line, col := s.start()
	key, n, kerr := s.scanString(true)
	if kerr != nil && !errors.Is(kerr, errTooLong) {
		return nil, kerr
	}
	// The name of a known member is the field table's, and looking it up
	// converts key on the stack: no allocation.
	i := -1
	var name string
	var sum [sha256.Size]byte // of an unknown member's name
	switch {
	case kerr != nil:
		name = describeLongString(n)
	default:
		if i = fieldIndex(fields, string(key)); i >= 0 {
			name = fields[i].name
		} else {
			name = unknownMember(string(key))
			sum = sha256.Sum256(key) // key is the scanner's, until the value is read
		}
	}
	if err := s.expect(':', "':'"); err != nil {
		return nil, err
	}
	switch {
	case i < 0 || kerr != nil:
		found, err := s.skipValue()
		if err != nil {
			return nil, err
		}
		switch {
		case len(problems) > MaxErrors:
			// The import reports no more: a record of a million members
			// must not hold a million problems.
		case kerr == nil && (*unknown)[sum]:
			problems = append(problems, problem{line, col, name, "each member once", "a duplicate member"})
		default:
			problems = append(problems, problem{line, col, name, "no member of that name (unknown property)", found})
			if kerr == nil {
				// By the whole name: two long names that start alike are
				// reported alike, and are two members.
				if *unknown == nil {
					*unknown = make(map[[sha256.Size]byte]bool)
				}
				(*unknown)[sum] = true
			}
		}
	case rec.values[i].present:
		// Which of the two values was meant is anyone's guess: neither is
		// used, and the problem is the name, so it is reported there.
		if _, err := s.skipValue(); err != nil {
			return nil, err
		}
		rec.values[i].bad = true
		if len(problems) <= MaxErrors {
			problems = append(problems, problem{line, col, name, "each member once", "a duplicate member"})
		}
	default:
		p, err := decodeValue(s, fields[i], &rec.values[i], &rec.text)
		if err != nil {
			return nil, err
		}
		problems = append(problems, p...)
	}
	return problems, nil
}

// finish ends a record whose members are read: the strings its values
// hold in rec.text become one string they share, and a required member
// missing is a problem, appended to problems.
func (rec *record) finish(fields []field, problems []problem) []problem {
	if len(rec.text) > 0 {
		text := string(rec.text)
		for i := range rec.values {
			if v := &rec.values[i]; v.text {
				v.str, v.text = text[v.off:v.end], false
			}
		}
	}
	for i, f := range fields {
		if f.required && !rec.values[i].present {
			problems = append(problems, problem{rec.line, rec.col, f.name, "the member " + strconv.Quote(f.name), "none (required member missing)"})
			rec.values[i].bad = true
		}
	}
	return problems
}

func fieldIndex(fields []field, name string) int {
	for i := range fields {
		if fields[i].name == name {
			return i
		}
	}
	return -1
}

// decodeValue reads the value of a known member, not seen before in the
// record, into v; the bytes of a string go to the end of text.
func decodeValue(s *scanner, f field, v *value, text *[]byte) ([]problem, error) {
	line, col := s.start()
	*v = value{present: true, line: line, col: col}
	kind, err := s.kind()
	if err != nil {
		return nil, err
	}
	bad := func(expected string) ([]problem, error) {
		found, err := s.skipValue()
		if err != nil {
			return nil, err
		}
		if kind == "null" {
			found = "null"
		}
		v.bad = true
		return []problem{{line, col, f.name, expected, found}}, nil
	}
	switch {
	case kind == "null" && f.nullable:
		if _, err := s.readLiteral(); err != nil {
			return nil, err
		}
		v.null = true
		return nil, nil
	case f.kind == kindString && kind == "string":
		off := len(*text)
		b, n, err := s.appendString(*text, true)
		*text = b
		if errors.Is(err, errTooLong) {
			v.bad = true
			return []problem{{line, col, f.name, fmt.Sprintf("a string of at most %d bytes", maxString), describeLongString(n)}}, nil
		}
		if err != nil {
			return nil, err
		}
		v.text, v.off, v.end = true, off, len(b)
		return nil, nil
	case f.kind == kindInteger && kind == "number":
		text, err := s.readNumber()
		if err != nil && !errors.Is(err, errNumberTooLong) {
			return nil, err
		}
		n, err := strconv.ParseInt(text, 10, 64)
		if err != nil || n == 0 && text[0] == '-' {
			// A fraction, an exponent, a value past int64 or -0, or more
			// digits than any: integers are whole numbers written in plain
			// digits.
			v.bad = true
			return []problem{{line, col, f.name, fmt.Sprintf("an integer in plain digits, at most %d", int64(catalog.MaxInteger)), text}}, nil
		}
		v.num = n
		return nil, nil
	case f.kind == kindString:
		return bad(orNull("a string", f.nullable))
	default:
		return bad(orNull("an integer", f.nullable))
	}
}

func orNull(what string, nullable bool) string {
	if nullable {
		return what + " or null"
	}
	return what
}

// toSet builds a Set from a decoded record.
func toSet(r *record) catalog.Set {
	return catalog.Set{
		ID:         r.str(setID),
		Code:       r.str(setCode),
		Name:       r.str(setName),
		Zone:       r.str(setZone),
		ReleasedOn: r.optString(setReleasedOn),
		CardCount:  r.values[setCardCount].num,
	}
}

// toCard builds a Card from a decoded record; a missing variant becomes the
// default.
func toCard(r *record) catalog.Card {
	variant := r.str(cardVariant)
	if !r.values[cardVariant].present {
		variant = catalog.DefaultVariant
	}
	return catalog.Card{
		ID:              r.str(cardID),
		Name:            r.str(cardName),
		SetName:         r.str(cardSetName),
		SetCode:         r.str(cardSetCode),
		Number:          r.str(cardNumber),
		Language:        r.str(cardLanguage),
		Year:            r.optInt(cardYear),
		Variant:         variant,
		Rarity:          r.optString(cardRarity),
		ImageURL:        r.optString(cardImageURL),
		Zone:            r.str(cardZone),
		TotalCards:      r.optInt(cardTotalCards),
		Illustrator:     r.optString(cardIllustrator),
		MarketAID:       r.optString(cardMarketAID),
		MarketAPath:     r.optString(cardMarketAPath),
		MarketBID:       r.optString(cardMarketBID),
		ScanFallbackURL: r.optString(cardScanFallbackURL),
	}
}

// unknownMember is how a problem names a member that is none of the
// record's: as it is, or quoted and cut short (catalog.Quote) when it is
// longer than a field name could be, so that a snapshot of long names
// does not make each report as long, or when it holds a character that is
// not printable, so that a name of control characters (a terminal's
// escape sequences, a line break that forges a line of the log) is shown,
// not obeyed.
func unknownMember(name string) string {
	if len(name) <= 60 && !strings.ContainsFunc(name, func(r rune) bool { return !unicode.IsPrint(r) }) {
		return name
	}
	return catalog.Quote(name)
}
