package importer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/catalogd/catalogd/catalog"
	"github.com/catalogd/catalogd/catalog/store"
)

// The tests of this file hold the import to the one definition of the
// records, catalog.SetMembers and catalog.CardMembers: which members a
// snapshot may and must hold, with which types and nulls, and that each one
// reaches the catalogue file. Each failure names the member.

// TestDecoderFieldsAreMembers: the decoder knows the members of catalog's
// tables, and no others, with their types, presence and nulls.
func TestDecoderFieldsAreMembers(t *testing.T) {
	for _, c := range []struct {
		decoder, table string
		fields         []field
		members        []catalog.Member
	}{
		{"setFields", "SetMembers", setFields, catalog.SetMembers[:]},
		{"cardFields", "CardMembers", cardFields, catalog.CardMembers[:]},
	} {
		var want []field
		for _, m := range c.members {
			kind := kindString
			if m.Type == "integer" {
				kind = kindInteger
			}
			want = append(want, field{m.Name, kind, m.Required, m.Nullable})
		}
		for _, f := range c.fields {
			if !slices.Contains(want, f) {
				t.Errorf("importer/decode.go: %s has %+v, which catalog.%s does not", c.decoder, f, c.table)
			}
		}
		for _, w := range want {
			if !slices.Contains(c.fields, w) {
				t.Errorf("importer/decode.go: %s lacks %+v of catalog.%s", c.decoder, w, c.table)
			}
		}
		if len(c.fields) > maxFields {
			t.Errorf("importer/decode.go: %s has %d members, a record holds %d", c.decoder, len(c.fields), maxFields)
		}
	}
}

// TestImportKeepsEveryMember imports a set and a card with every member,
// a card with every nullable member null, and a set and a card with their
// required members only, into a real catalogue file: the file holds each
// member as the snapshot gave it, in the order of its table, and the
// default of a member left out.
func TestImportKeepsEveryMember(t *testing.T) {
	set := sampleRecord(catalog.SetMembers[:])
	card := sampleRecord(catalog.CardMembers[:])
	card["setCode"], card["setName"], card["zone"] = set["code"], set["name"], set["zone"]
	nulls := sampleRecord(catalog.CardMembers[:])
	nulls["id"], nulls["number"] = "nulls", "2"
	nulls["setCode"], nulls["setName"], nulls["zone"] = set["code"], set["name"], set["zone"]
	for _, m := range catalog.CardMembers {
		if m.Nullable {
			nulls[m.Name] = nil
		}
	}
	bareSet := requiredOnly(set, catalog.SetMembers[:])
	bareSet["id"], bareSet["code"] = "bare", "bare"
	bareCard := requiredOnly(card, catalog.CardMembers[:])
	bareCard["id"], bareCard["number"] = "bare", "3"

	db := importSnapshot(t, []map[string]any{set, bareSet}, []map[string]any{card, nulls, bareCard})
	if err := db.err; err != nil {
		t.Fatalf("import: %v", err)
	}
	sets, err := db.SetsJSON("")
	if err != nil {
		t.Fatal(err)
	}
	var stored []json.RawMessage
	if err := json.Unmarshal(sets, &stored); err != nil || len(stored) != 2 {
		t.Fatalf("sets: %s (%v), want two", sets, err)
	}
	for i, want := range []map[string]any{set, bareSet} {
		assertStoredAs(t, "set", stored[i], want, catalog.SetMembers[:])
	}
	for _, want := range []map[string]any{card, nulls, bareCard} {
		got, err := db.AppendCard(nil, want["id"].(string))
		if err != nil {
			t.Fatalf("card %q: %v", want["id"], err)
		}
		assertStoredAs(t, "card", got, want, catalog.CardMembers[:])
	}
}

// TestImportRejectsWhatMembersForbid: for each member, a record without it
// where it is required, with null where it is not nullable, and with a
// value of the other JSON type is refused with an error on that member; so
// is a member no table has.
func TestImportRejectsWhatMembersForbid(t *testing.T) {
	set := sampleRecord(catalog.SetMembers[:])
	for _, kind := range []struct {
		array   string
		members []catalog.Member
	}{
		{"sets", catalog.SetMembers[:]},
		{"cards", catalog.CardMembers[:]},
	} {
		good := sampleRecord(kind.members)
		if kind.array == "cards" {
			good["setCode"], good["setName"], good["zone"] = set["code"], set["name"], set["zone"]
		}
		var records []map[string]any
		var wants []string // what record i is, and the member its error is on
		var fields []string
		spoil := func(field, what string, edit func(r map[string]any)) {
			r := clone(good)
			r["id"] = fmt.Sprintf("spoilt-%d", len(records))
			if kind.array == "sets" {
				r["code"] = r["id"]
			} else {
				r["number"] = fmt.Sprint(len(records) + 1)
			}
			edit(r)
			records = append(records, r)
			wants = append(wants, what)
			fields = append(fields, field)
		}
		for _, m := range kind.members {
			if m.Required {
				spoil(m.Name, "without "+m.Name+", which it requires", func(r map[string]any) { delete(r, m.Name) })
			}
			if !m.Nullable {
				spoil(m.Name, m.Name+" null, which is not nullable", func(r map[string]any) { r[m.Name] = nil })
			}
			other, what := any("1"), "a string"
			if m.Type == "string" {
				other, what = 1, "an integer"
			}
			spoil(m.Name, fmt.Sprintf("%s %s, which is of type %s", m.Name, what, m.Type), func(r map[string]any) { r[m.Name] = other })
		}
		spoil("notAMember", "a member notAMember, which it does not have", func(r map[string]any) { r["notAMember"] = "x" })

		sets, cards := []map[string]any{set}, records
		if kind.array == "sets" {
			sets, cards = records, nil
		}
		res := importSnapshot(t, sets, cards)
		var verr *ValidationError
		if !errors.As(res.err, &verr) {
			t.Fatalf("import of spoilt %s: %v, want a validation error", kind.array, res.err)
		}
		if verr.Truncated {
			t.Fatalf("import of spoilt %s: more than %d problems; split the records", kind.array, MaxErrors)
		}
		for i, field := range fields {
			name := fmt.Sprintf("%s[%d]", kind.array, i)
			if !slices.ContainsFunc(verr.Errors, func(e *RecordError) bool { return e.Record == name && e.Field == field }) {
				t.Errorf("importer: a record of %s %s was imported without an error on %s (catalog.Member tables and importer/decode.go out of step?)", kind.array, wants[i], field)
			}
		}
	}
}

// TestImportTakesTheLongestName: a card name of catalog.MaxNameLength
// characters of the one that folds longest (U+FDFA, 33 bytes folded)
// imports, and is found as typed: its forms, keys of the index, stay under
// bbolt's 32 KiB.
func TestImportTakesTheLongestName(t *testing.T) {
	set := requiredOnly(sampleRecord(catalog.SetMembers[:]), catalog.SetMembers[:])
	card := requiredOnly(sampleRecord(catalog.CardMembers[:]), catalog.CardMembers[:])
	card["setName"], card["setCode"] = set["name"], set["code"]
	name := strings.Repeat("\ufdfa", catalog.MaxNameLength)
	card["name"] = name
	db := importSnapshot(t, []map[string]any{set}, []map[string]any{card})
	if db.err != nil {
		t.Fatalf("a name of %d characters: %v", catalog.MaxNameLength, db.err)
	}
	names, err := db.Autocomplete(store.AutocompleteQuery{Q: "\ufdfa", Limit: 5})
	if err != nil || len(names) != 1 || names[0].Name != name {
		t.Errorf("autocomplete of its first character: %d names, %v", len(names), err)
	}
}

// sampleRecord is a snapshot record of every member with a value its rules
// allow; each member's value differs from the others', so that two mixed
// up show.
func sampleRecord(members []catalog.Member) map[string]any {
	r := map[string]any{}
	for i, m := range members {
		switch {
		case m.Type == "integer":
			r[m.Name] = m.Minimum + int64(i) + 1
		case m.Format == "date":
			r[m.Name] = fmt.Sprintf("2024-02-%02d", i+1)
		case m.Format == "uri":
			r[m.Name] = "https://example.com/" + m.Name
		case m.Format == "zone":
			r[m.Name] = catalog.ZoneJP
		default:
			r[m.Name] = m.Name + " é"
		}
	}
	return r
}

// requiredOnly is r without the members that are not required.
func requiredOnly(r map[string]any, members []catalog.Member) map[string]any {
	out := clone(r)
	for _, m := range members {
		if !m.Required {
			delete(out, m.Name)
		}
	}
	return out
}

func clone(r map[string]any) map[string]any {
	out := make(map[string]any, len(r))
	for k, v := range r {
		out[k] = v
	}
	return out
}

type importedDB struct {
	*store.DB
	err error
}

// importSnapshot imports one snapshot of sets and cards into a new
// catalogue file, and opens it when the import succeeded.
func importSnapshot(t *testing.T, sets, cards []map[string]any) importedDB {
	t.Helper()
	dir := t.TempDir()
	file := filepath.Join(dir, "snapshot.json")
	data, err := json.Marshal(map[string]any{"sets": nonNil(sets), "cards": nonNil(cards)})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}
	dbPath := filepath.Join(dir, "catalog.db")
	if _, err := Import(t.Context(), Config{DB: dbPath, Inputs: []string{file}}); err != nil {
		return importedDB{err: err}
	}
	return importedDB{DB: mustOpen(t, dbPath)}
}

func nonNil(records []map[string]any) []map[string]any {
	if records == nil {
		return []map[string]any{}
	}
	return records
}

// assertStoredAs checks that the stored JSON of a record holds the members
// of the snapshot's record want, with their values, in the order of
// members, and the default of each defaulted member want leaves out.
func assertStoredAs(t *testing.T, kind string, stored []byte, want map[string]any, members []catalog.Member) {
	t.Helper()
	var got map[string]any
	if err := json.Unmarshal(stored, &got); err != nil {
		t.Fatalf("stored %s: %v\n%s", kind, err, stored)
	}
	var wantOrder []string
	for _, m := range members {
		w, ok := want[m.Name]
		if !ok && m.Default != "" {
			w, ok = m.Default, true
		}
		if !ok {
			if g, there := got[m.Name]; there {
				t.Errorf("importer: stored %s %q has member %q = %v, which the snapshot does not", kind, want["id"], m.Name, g)
			}
			continue
		}
		wantOrder = append(wantOrder, m.Name)
		g, there := got[m.Name]
		if !there {
			t.Errorf("importer: stored %s %q lacks member %q, which the snapshot has (toSet or toCard in importer/decode.go?)\n%s", kind, want["id"], m.Name, stored)
			continue
		}
		if w, _ := json.Marshal(w); !reflect.DeepEqual(g, jsonValue(t, w)) {
			t.Errorf("importer: stored %s %q has %s = %v, the snapshot %s (an index of importer/decode.go out of step with catalog's members?)", kind, want["id"], m.Name, g, w)
		}
	}
	for name := range got {
		if !slices.ContainsFunc(members, func(m catalog.Member) bool { return m.Name == name }) {
			t.Errorf("importer: stored %s %q has member %q, which catalog's members do not", kind, want["id"], name)
		}
	}
	var order []string
	dec := json.NewDecoder(bytes.NewReader(stored))
	dec.Token()
	for dec.More() {
		tok, _ := dec.Token()
		order = append(order, tok.(string))
		var skip json.RawMessage
		dec.Decode(&skip)
	}
	if !slices.Equal(order, wantOrder) && len(order) == len(wantOrder) {
		t.Errorf("importer: stored %s %q has its members in the order %v, catalog's members %v", kind, want["id"], order, wantOrder)
	}
}

func jsonValue(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return v
}
