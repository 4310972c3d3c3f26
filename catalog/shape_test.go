package catalog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// The tests of this file hold the Go side of a record to its one
// definition, SetMembers, CardMembers and PageMembers: the struct fields,
// the canonical JSON the catalogue stores (AppendJSON) and the rules of
// Validate. Each failure names the place that is out of step and the member.

// recordShapes are the records and their members.
var recordShapes = []struct {
	name    string // the Go type
	table   string // the members' table
	typ     reflect.Type
	members []Member
}{
	{"Set", "SetMembers", reflect.TypeFor[Set](), SetMembers[:]},
	{"Card", "CardMembers", reflect.TypeFor[Card](), CardMembers[:]},
	{"Page", "PageMembers", reflect.TypeFor[Page](), PageMembers[:]},
}

func TestMembersAreWellFormed(t *testing.T) {
	for _, shape := range recordShapes {
		seen := map[string]bool{}
		for _, m := range shape.members {
			where := fmt.Sprintf("catalog.%s, member %q", shape.table, m.Name)
			if m.Name == "" || seen[m.Name] {
				t.Errorf("%s: a name must be given once", where)
			}
			seen[m.Name] = true
			if m.Type != "string" && m.Type != "integer" {
				t.Errorf("%s: type %q, want \"string\" or \"integer\"", where, m.Type)
			}
			if m.Type != "string" && (m.MinLength != 0 || m.MaxLength != 0 || m.Format != "" || m.Default != "") {
				t.Errorf("%s: lengths, a format and a default are for strings", where)
			}
			if m.Type != "integer" && m.Minimum != 0 {
				t.Errorf("%s: a minimum is for integers", where)
			}
			if !slices.Contains([]string{"", "date", "uri", "zone"}, m.Format) {
				t.Errorf("%s: format %q, want \"date\", \"uri\" or \"zone\"", where, m.Format)
			}
			if m.Format != "" && (m.MinLength != 0 || m.MaxLength != 0) {
				t.Errorf("%s: a format is the member's rule, without lengths", where)
			}
			if m.MaxLength != 0 && m.MaxLength < m.MinLength {
				t.Errorf("%s: length %d to %d", where, m.MinLength, m.MaxLength)
			}
			if m.Required && (m.Nullable || m.Default != "") {
				t.Errorf("%s: a required member is neither nullable nor defaulted", where)
			}
		}
	}
}

// TestRecordTypesFollowMembers: the fields of Set, Card and Page are their
// members, in order, each of the Go type its member asks: int64 or string
// when the member is always there (required or defaulted), Nullable (with
// omitzero) when it may be absent.
func TestRecordTypesFollowMembers(t *testing.T) {
	for _, shape := range recordShapes {
		var fields []string
		for i := range shape.typ.NumField() {
			f := shape.typ.Field(i)
			name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
			fields = append(fields, name)
			m, ok := memberNamed(shape.members, name)
			if !ok {
				t.Errorf("catalog/record.go: catalog.%s.%s (json %q) is not in catalog.%s", shape.name, f.Name, name, shape.table)
				continue
			}
			want := reflect.TypeFor[string]()
			if m.Type == "integer" {
				want = reflect.TypeFor[int64]()
			}
			optional := !m.Required && m.Default == ""
			if optional {
				want = reflect.TypeFor[Nullable[string]]()
				if m.Type == "integer" {
					want = reflect.TypeFor[Nullable[int64]]()
				}
			}
			if f.Type != want {
				t.Errorf("catalog/record.go: catalog.%s.%s is %v; member %q of catalog.%s wants %v", shape.name, f.Name, f.Type, name, shape.table, want)
			}
			if got := strings.Contains(","+opts+",", ",omitzero,"); got != optional {
				t.Errorf("catalog/record.go: catalog.%s.%s has omitzero %v; member %q of catalog.%s is optional: %v", shape.name, f.Name, got, name, shape.table, optional)
			}
		}
		for _, m := range shape.members {
			if !slices.Contains(fields, m.Name) {
				t.Errorf("catalog/record.go: catalog.%s has no field for member %q of catalog.%s", shape.name, m.Name, shape.table)
			}
		}
		if names := memberNames(shape.members); sameElements(fields, names) && !slices.Equal(fields, names) {
			t.Errorf("catalog/record.go: catalog.%s has its fields in the order %v, catalog.%s %v", shape.name, fields, shape.table, names)
		}
	}
}

// TestAppendJSONFollowsMembers: the canonical JSON of a record with every
// member holds every member, in the order of its table, as encoding/json
// writes it; nulls stay null, and a record of its required and defaulted
// members only holds just those.
func TestAppendJSONFollowsMembers(t *testing.T) {
	type encoder interface{ AppendJSON([]byte) []byte }
	records := []struct {
		name, table string
		members     []Member
		full, nulls func() encoder
	}{
		{"Set", "SetMembers", SetMembers[:],
			func() encoder { return fullRecord[Set](SetMembers[:], false) },
			func() encoder { return fullRecord[Set](SetMembers[:], true) }},
		{"Card", "CardMembers", CardMembers[:],
			func() encoder { return fullRecord[Card](CardMembers[:], false) },
			func() encoder { return fullRecord[Card](CardMembers[:], true) }},
	}
	for _, r := range records {
		full := r.full()
		got := full.AppendJSON(nil)
		names := jsonMembers(t, got)
		for _, m := range r.members {
			if !slices.Contains(names, m.Name) {
				t.Errorf("catalog/encode.go: %s.AppendJSON leaves out member %q of catalog.%s, which the record has\n%s", r.name, m.Name, r.table, got)
			}
		}
		typ := reflect.TypeOf(full).Elem()
		for i := range typ.NumField() {
			name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
			if _, ok := memberNamed(r.members, name); !ok && !slices.Contains(names, name) {
				t.Errorf("catalog/encode.go: %s.AppendJSON leaves out the field %s (json %q), which the record has\n%s", r.name, typ.Field(i).Name, name, got)
			}
		}
		for _, name := range names {
			if _, ok := memberNamed(r.members, name); !ok {
				t.Errorf("catalog/encode.go: %s.AppendJSON writes member %q, which catalog.%s does not have\n%s", r.name, name, r.table, got)
			}
		}
		if want := memberNames(r.members); sameElements(names, want) && !slices.Equal(names, want) {
			t.Errorf("catalog/encode.go: %s.AppendJSON writes the members in the order %v, catalog.%s has %v", r.name, names, r.table, want)
		}
		assertSameJSON(t, got, full)

		nulls := r.nulls()
		got = nulls.AppendJSON(nil)
		var values map[string]any
		if err := json.Unmarshal(got, &values); err != nil {
			t.Fatalf("%s.AppendJSON: %v\n%s", r.name, err, got)
		}
		for _, m := range r.members {
			if v, ok := values[m.Name]; m.Nullable && (!ok || v != nil) {
				t.Errorf("catalog/encode.go: %s.AppendJSON writes the null member %q of catalog.%s as %v (present: %v)", r.name, m.Name, r.table, v, ok)
			}
		}
		assertSameJSON(t, got, nulls)
	}

	bareSet, bareCard := bareRecord[Set](SetMembers[:]), bareRecord[Card](CardMembers[:])
	for _, r := range []struct {
		name, table string
		members     []Member
		record      encoder
	}{
		{"Set", "SetMembers", SetMembers[:], bareSet},
		{"Card", "CardMembers", CardMembers[:], bareCard},
	} {
		got := r.record.AppendJSON(nil)
		var want []string
		for _, m := range r.members {
			if m.Required || m.Default != "" {
				want = append(want, m.Name)
			}
		}
		if names := jsonMembers(t, got); !slices.Equal(names, want) {
			t.Errorf("catalog/encode.go: %s.AppendJSON of a record without its optional members writes %v, want catalog.%s's required and defaulted members %v", r.name, names, r.table, want)
		}
		assertSameJSON(t, got, r.record)
	}
}

// TestValidateFollowsMembers: Validate accepts a record whose members all
// keep the rules of their table, at the bounds too, and rejects each value
// just past a bound, of the wrong format, or the wrong zone, naming the
// member.
func TestValidateFollowsMembers(t *testing.T) {
	type validator interface{ Validate() []FieldError }
	records := []struct {
		name, table string
		members     []Member
		full        func() validator
	}{
		{"Set", "SetMembers", SetMembers[:], func() validator { return fullRecord[Set](SetMembers[:], false) }},
		{"Card", "CardMembers", CardMembers[:], func() validator { return fullRecord[Card](CardMembers[:], false) }},
	}
	for _, r := range records {
		if errs := r.full().Validate(); errs != nil {
			t.Errorf("catalog/validate.go: %s.Validate rejects a record that keeps every rule of catalog.%s: %v", r.name, r.table, errs)
			continue
		}
		for _, m := range r.members {
			for _, c := range valueCases(m) {
				rec := r.full()
				f, ok := fieldOf(reflect.ValueOf(rec).Elem(), m.Name)
				if !ok {
					continue // TestRecordTypesFollowMembers says so
				}
				setMember(f, c.value)
				errs := rec.Validate()
				switch {
				case c.ok && errs != nil:
					t.Errorf("catalog/validate.go: %s.Validate rejects %s %s, which catalog.%s allows: %v", r.name, m.Name, c.what, r.table, errs)
				case !c.ok && !slices.ContainsFunc(errs, func(e FieldError) bool { return e.Field == m.Name }):
					t.Errorf("catalog/validate.go: %s.Validate accepts %s %s, which catalog.%s forbids (errors: %v)", r.name, m.Name, c.what, r.table, errs)
				case !c.ok && len(errs) != 1:
					t.Errorf("catalog/validate.go: %s.Validate of %s %s: %v, want one error, on %s", r.name, m.Name, c.what, errs, m.Name)
				}
			}
		}
	}
}

// valueCase is a value of a member and whether its table allows it.
type valueCase struct {
	value any // string, int64, or nil for null
	ok    bool
	what  string
}

// valueCases are the values at and just past the bounds of m's rules.
func valueCases(m Member) []valueCase {
	var cases []valueCase
	if m.Nullable {
		cases = append(cases, valueCase{nil, true, "null"})
	}
	if m.Type == "integer" {
		return append(cases,
			valueCase{m.Minimum, true, fmt.Sprintf("= %d (the minimum)", m.Minimum)},
			valueCase{int64(MaxInteger), true, "= MaxInteger"},
			valueCase{m.Minimum - 1, false, fmt.Sprintf("= %d (below the minimum)", m.Minimum-1)},
			valueCase{int64(MaxInteger) + 1, false, "= MaxInteger+1"},
		)
	}
	switch m.Format {
	case "zone":
		for _, z := range Zones() {
			cases = append(cases, valueCase{z, true, fmt.Sprintf("%q (a zone)", z)})
		}
		return append(cases, valueCase{"eu", false, `"eu" (not a zone)`}, valueCase{"", false, `"" (not a zone)`})
	case "date":
		return append(cases, valueCase{"2024-02-29", true, `"2024-02-29" (a date)`},
			valueCase{"2023-02-29", false, `"2023-02-29" (not a date)`}, valueCase{"", false, `"" (not a date)`})
	case "uri":
		return append(cases, valueCase{"urn:isbn:0451450523", true, "an absolute URI"},
			valueCase{"https://example.com/a.png", true, "an absolute https URI"},
			valueCase{"images/a.png", false, "a relative URI"}, valueCase{"", false, `"" (not a URI)`})
	}
	chars := func(n int, ok bool, bound string) valueCase {
		return valueCase{strings.Repeat("é", n), ok, fmt.Sprintf("of %d characters (%s)", n, bound)}
	}
	cases = append(cases, chars(m.MinLength, true, "the least length"))
	if m.MinLength > 0 {
		cases = append(cases, chars(m.MinLength-1, false, "shorter than the least length"))
	}
	if m.MaxLength > 0 {
		return append(cases, chars(m.MaxLength, true, "the greatest length"), chars(m.MaxLength+1, false, "longer than the greatest length"))
	}
	return append(cases, chars(4*MaxKeyLength, true, "no greatest length"))
}

// sampleValue is a value of m that its rules allow; i, m's place, makes the
// values of any two members differ, so that two mixed up show.
func sampleValue(m Member, i int) any {
	if m.Type == "integer" {
		return m.Minimum + int64(i) + 1
	}
	switch m.Format {
	case "date":
		return fmt.Sprintf("2024-02-%02d", i+1)
	case "uri":
		return "https://example.com/" + m.Name
	case "zone":
		return ZoneJP
	}
	return m.Name + " é"
}

// fullRecord is a record of type T with every field set: to sampleValue, or
// to null where its member is nullable and nulls is set.
func fullRecord[T any](members []Member, nulls bool) *T {
	r := new(T)
	v := reflect.ValueOf(r).Elem()
	for i := range v.NumField() {
		name, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("json"), ",")
		m, ok := memberNamed(members, name)
		var value any = name + " é" // a field without a member still gets a value
		switch {
		case ok && nulls && m.Nullable:
			value = nil
		case ok:
			value = sampleValue(m, slices.Index(members, m))
		}
		setMember(v.Field(i), value)
	}
	return r
}

// bareRecord is fullRecord without the members that may be absent.
func bareRecord[T any](members []Member) *T {
	r := fullRecord[T](members, false)
	v := reflect.ValueOf(r).Elem()
	for _, m := range members {
		if f, ok := fieldOf(v, m.Name); ok && !m.Required && m.Default == "" {
			f.Set(reflect.Zero(f.Type()))
		}
	}
	return r
}

// setMember sets the field f to value: a Nullable to a present value, or
// to null when value is nil. A value of the wrong kind becomes one of the
// field's kind, which TestRecordTypesFollowMembers reports.
func setMember(f reflect.Value, value any) {
	if f.Kind() == reflect.Struct { // a Nullable
		f.Set(reflect.Zero(f.Type()))
		f.FieldByName("Present").SetBool(true)
		if value == nil {
			f.FieldByName("Null").SetBool(true)
			return
		}
		f = f.FieldByName("Value")
	}
	switch v := value.(type) {
	case string:
		if f.Kind() == reflect.String {
			f.SetString(v)
		} else {
			f.SetInt(int64(len(v)))
		}
	case int64:
		if f.Kind() == reflect.Int64 {
			f.SetInt(v)
		} else {
			f.SetString(fmt.Sprint(v))
		}
	}
}

// fieldOf returns the field of the struct v whose JSON name is name.
func fieldOf(v reflect.Value, name string) (reflect.Value, bool) {
	for i := range v.NumField() {
		if n, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("json"), ","); n == name {
			return v.Field(i), true
		}
	}
	return reflect.Value{}, false
}

func memberNamed(members []Member, name string) (Member, bool) {
	for _, m := range members {
		if m.Name == name {
			return m, true
		}
	}
	return Member{}, false
}

func memberNames(members []Member) []string {
	var names []string
	for _, m := range members {
		names = append(names, m.Name)
	}
	return names
}

func sameElements(a, b []string) bool {
	return slices.Equal(slices.Sorted(slices.Values(a)), slices.Sorted(slices.Values(b)))
}

// jsonMembers returns the names of the members of a JSON object, in order.
func jsonMembers(t *testing.T, object []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(object))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not a JSON object (%v): %s", err, object)
	}
	var names []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatalf("%v: %s", err, object)
		}
		names = append(names, tok.(string))
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			t.Fatalf("%v: %s", err, object)
		}
	}
	return names
}
