package importer

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/catalogd/catalogd/catalog"
)

// The fixtures under testdata/invalid are the sample's records with exactly
// one rule of docs/CONTRACT.md, Snapshots and validation, broken, so each must give exactly one problem,
// at a position known from the file: the first byte of the bad value, of the
// member name for an unknown or repeated member, of the record for a missing
// member (RecordError documents the convention). Columns count bytes, and
// sets[2] and cards[2] hold Japanese text before most of their members, so a
// column counted in characters would be caught. A few fixtures are indented,
// with spaces after ':' and ',', so a position taken before the white space
// is skipped would be caught too.
func TestImportRejectsEachBrokenRule(t *testing.T) {
	tests := []struct {
		name       string // a file under testdata/invalid, or a directory whose last file holds the problem
		line, col  int
		record, id string
		field      string
		expected   string // part of RecordError.Expected
		found      string // part of RecordError.Found
	}{
		{"snapshot-not-object.json", 1, 1, "", "", "", "a snapshot object", "an array"},
		{"snapshot-unknown-member.json", 9, 3, "", "", "meta", "only the members \"sets\", \"cards\" and \"names\"", "an object"},
		{"names-not-array.json", 5, 11, "", "", "names", "an array of name groups", "\"Bulbasaur\""},
		{"names-group-not-array.json", 7, 1, "names[1]", "", "", "a name group", "an object"},
		{"names-group-of-one.json", 7, 1, "names[1]", "", "", "a group of 2 to 32 names", "1 name"},
		{"names-too-many.json", 7, 1, "names[1]", "", "", "a group of 2 to 32 names", "33 names"},
		{"names-not-string.json", 7, 32, "names[1]", "", "[2]", "a name (a string)", "6"},
		{"names-empty-name.json", 7, 14, "names[1]", "", "[1]", "a name of at least 1 character", "an empty string"},
		{"snapshot-duplicate-member.json", 9, 3, "", "", "sets", "each member once", "a duplicate member"},
		{"snapshot-missing-sets.json", 1, 1, "", "", "sets", "the member \"sets\"", "none"},
		{"snapshot-missing-cards.json", 2, 1, "", "", "cards", "the member \"cards\"", "none"},
		{"snapshot-sets-not-array.json", 1, 9, "", "", "sets", "an array", "an object"},
		{"snapshot-cards-null.json", 5, 11, "", "", "cards", "an array", "null"},
		{"snapshot-trailing-data.json", 10, 1, "", "", "", "the end of the file", "more data"},
		{"set-not-object.json", 4, 1, "sets[2]", "", "", "an object", "\"jp-ADV1\""},
		{"set-unknown-property.json", 4, 108, "sets[2]", "jp-ADV1", "series", "unknown property", "\"ADV\""},
		{"set-duplicate-member.json", 26, 7, "sets[2]", "jp-ADV1", "name", "each member once", "a duplicate member"},
		{"set-id-missing.json", 4, 1, "sets[2]", "", "id", "the member \"id\"", "none"},
		{"set-id-empty.json", 4, 7, "sets[2]", "", "id", "at least 1 character", "an empty string"},
		{"set-id-null.json", 4, 7, "sets[2]", "", "id", "a string", "null"},
		{"set-id-number.json", 4, 7, "sets[2]", "", "id", "a string", "1"},
		{"set-code-missing.json", 4, 1, "sets[2]", "jp-ADV1", "code", "the member \"code\"", "none"},
		{"set-code-empty.json", 4, 24, "sets[2]", "jp-ADV1", "code", "at least 1 character", "an empty string"},
		{"set-code-null.json", 4, 24, "sets[2]", "jp-ADV1", "code", "a string", "null"},
		{"set-code-array.json", 4, 24, "sets[2]", "jp-ADV1", "code", "a string", "an array"},
		{"set-name-missing.json", 4, 1, "sets[2]", "jp-ADV1", "name", "the member \"name\"", "none"},
		{"set-name-empty.json", 4, 38, "sets[2]", "jp-ADV1", "name", "at least 1 character", "an empty string"},
		{"set-name-null.json", 4, 38, "sets[2]", "jp-ADV1", "name", "a string", "null"},
		{"set-name-object.json", 4, 38, "sets[2]", "jp-ADV1", "name", "a string", "an object"},
		{"set-zone-missing.json", 4, 1, "sets[2]", "jp-ADV1", "zone", "the member \"zone\"", "none"},
		{"set-zone-invalid.json", 4, 63, "sets[2]", "jp-ADV1", "zone", "\"intl\", \"jp\", \"chn\"", "\"eu\""},
		{"set-zone-uppercase.json", 4, 63, "sets[2]", "jp-ADV1", "zone", "\"intl\", \"jp\", \"chn\"", "\"JP\""},
		{"set-zone-null.json", 4, 63, "sets[2]", "jp-ADV1", "zone", "a string", "null"},
		{"set-releasedOn-null.json", 4, 81, "sets[2]", "jp-ADV1", "releasedOn", "a string", "null"},
		{"set-releasedOn-number.json", 4, 81, "sets[2]", "jp-ADV1", "releasedOn", "a string", "20030131"},
		{"set-releasedOn-empty.json", 4, 81, "sets[2]", "jp-ADV1", "releasedOn", "calendar date", "\"\""},
		{"set-releasedOn-feb29-nonleap.json", 4, 81, "sets[2]", "jp-ADV1", "releasedOn", "calendar date", "\"2023-02-29\""},
		{"set-releasedOn-feb29-century.json", 4, 81, "sets[2]", "jp-ADV1", "releasedOn", "calendar date", "\"1900-02-29\""},
		{"set-releasedOn-apr31.json", 4, 81, "sets[2]", "jp-ADV1", "releasedOn", "calendar date", "\"2003-04-31\""},
		{"set-releasedOn-month13.json", 4, 81, "sets[2]", "jp-ADV1", "releasedOn", "calendar date", "\"2003-13-01\""},
		{"set-releasedOn-day00.json", 4, 81, "sets[2]", "jp-ADV1", "releasedOn", "calendar date", "\"2003-01-00\""},
		{"set-releasedOn-unpadded.json", 4, 81, "sets[2]", "jp-ADV1", "releasedOn", "calendar date", "\"2003-1-31\""},
		{"set-releasedOn-slashes.json", 4, 81, "sets[2]", "jp-ADV1", "releasedOn", "calendar date", "\"2003/01/31\""},
		{"set-releasedOn-datetime.json", 4, 81, "sets[2]", "jp-ADV1", "releasedOn", "calendar date", "\"2003-01-31T00:00:00Z\""},
		{"set-cardCount-missing.json", 4, 1, "sets[2]", "jp-ADV1", "cardCount", "the member \"cardCount\"", "none"},
		{"set-cardCount-negative.json", 4, 106, "sets[2]", "jp-ADV1", "cardCount", "an integer from 0 to 9007199254740991", "-1"},
		{"set-cardCount-fraction.json", 4, 106, "sets[2]", "jp-ADV1", "cardCount", "an integer in plain digits", "1.0"},
		{"set-cardCount-exponent.json", 4, 106, "sets[2]", "jp-ADV1", "cardCount", "an integer in plain digits", "1e2"},
		{"set-cardCount-too-large.json", 4, 106, "sets[2]", "jp-ADV1", "cardCount", "an integer from 0 to 9007199254740991", "9007199254740992"},
		{"set-cardCount-past-int64.json", 4, 106, "sets[2]", "jp-ADV1", "cardCount", "an integer in plain digits", "18446744073709551616"},
		{"set-cardCount-string.json", 4, 106, "sets[2]", "jp-ADV1", "cardCount", "an integer", "\"0\""},
		{"set-cardCount-null.json", 4, 106, "sets[2]", "jp-ADV1", "cardCount", "an integer", "null"},
		{"set-cardCount-boolean.json", 4, 106, "sets[2]", "jp-ADV1", "cardCount", "an integer", "false"},
		{"set-duplicate-id.json", 4, 7, "sets[2]", "jp-SV1a", "id", "a set id not used by another set", "\"jp-SV1a\" again"},
		{"set-duplicate-zone-code.json", 4, 24, "sets[2]", "jp-ADV1", "code", "a code not used by another set of zone \"jp\"", "\"SV1a\" again"},
		{"card-not-object.json", 8, 1, "cards[2]", "", "", "an object", "42"},
		{"card-unknown-property.json", 79, 7, "cards[2]", "jp-SV1a-001", "price", "unknown property", "1.5"},
		{"card-duplicate-member.json", 8, 347, "cards[2]", "jp-SV1a-001", "rarity", "each member once", "a duplicate member"},
		{"card-id-missing.json", 8, 1, "cards[2]", "", "id", "the member \"id\"", "none"},
		{"card-name-missing.json", 8, 1, "cards[2]", "jp-SV1a-001", "name", "the member \"name\"", "none"},
		{"card-setName-missing.json", 8, 1, "cards[2]", "jp-SV1a-001", "setName", "the member \"setName\"", "none"},
		{"card-setCode-missing.json", 8, 1, "cards[2]", "jp-SV1a-001", "setCode", "the member \"setCode\"", "none"},
		{"card-number-missing.json", 8, 1, "cards[2]", "jp-SV1a-001", "number", "the member \"number\"", "none"},
		{"card-language-missing.json", 8, 1, "cards[2]", "jp-SV1a-001", "language", "the member \"language\"", "none"},
		{"card-zone-missing.json", 8, 1, "cards[2]", "jp-SV1a-001", "zone", "the member \"zone\"", "none"},
		{"card-id-empty.json", 8, 7, "cards[2]", "", "id", "at least 1 character", "an empty string"},
		{"card-id-null.json", 8, 7, "cards[2]", "", "id", "a string", "null"},
		{"card-id-number.json", 8, 7, "cards[2]", "", "id", "a string", "1"},
		{"card-name-empty.json", 8, 28, "cards[2]", "jp-SV1a-001", "name", "at least 1 character", "an empty string"},
		{"card-name-null.json", 8, 28, "cards[2]", "jp-SV1a-001", "name", "a string", "null"},
		{"card-name-number.json", 8, 28, "cards[2]", "jp-SV1a-001", "name", "a string", "25"},
		{"card-name-too-long.json", 8, 28, "cards[2]", "jp-SV1a-001", "name", "a string of at most 65536 bytes", "a string of 90000 bytes"},
		{"card-name-blank.json", 8, 28, "cards[2]", "jp-SV1a-001", "name", "a name with a letter, digit or sign", `"\u3000\u200b"`},
		{"card-name-501-characters.json", 8, 28, "cards[2]", "jp-SV1a-001", "name", "a string of at most 500 characters", "(501 characters)"},
		{"card-setName-empty.json", 8, 56, "cards[2]", "jp-SV1a-001", "setName", "at least 1 character", "an empty string"},
		{"card-setName-null.json", 8, 56, "cards[2]", "jp-SV1a-001", "setName", "a string", "null"},
		{"card-setName-number.json", 8, 56, "cards[2]", "jp-SV1a-001", "setName", "a string", "1"},
		{"card-setCode-empty.json", 8, 96, "cards[2]", "jp-SV1a-001", "setCode", "at least 1 character", "an empty string"},
		{"card-setCode-null.json", 8, 96, "cards[2]", "jp-SV1a-001", "setCode", "a string", "null"},
		{"card-setCode-boolean.json", 8, 96, "cards[2]", "jp-SV1a-001", "setCode", "a string", "true"},
		{"card-number-empty.json", 8, 112, "cards[2]", "jp-SV1a-001", "number", "at least 1 character", "an empty string"},
		{"card-number-blank.json", 8, 112, "cards[2]", "jp-SV1a-001", "number", "a printed number with a letter, digit or sign before any /", `"/165"`},
		{"card-number-null.json", 8, 112, "cards[2]", "jp-SV1a-001", "number", "a string", "null"},
		{"card-number-integer.json", 8, 112, "cards[2]", "jp-SV1a-001", "number", "a string", "1"},
		{"card-language-empty.json", 8, 129, "cards[2]", "jp-SV1a-001", "language", "at least 2 characters", "an empty string"},
		{"card-language-one-char.json", 8, 129, "cards[2]", "jp-SV1a-001", "language", "at least 2 characters", "\"j\" (1 character)"},
		{"card-language-one-codepoint.json", 8, 129, "cards[2]", "jp-SV1a-001", "language", "at least 2 characters", "\"日\" (1 character)"},
		{"card-language-null.json", 8, 129, "cards[2]", "jp-SV1a-001", "language", "a string", "null"},
		{"card-language-array.json", 8, 129, "cards[2]", "jp-SV1a-001", "language", "a string", "an array"},
		{"card-year-too-small.json", 70, 15, "cards[2]", "jp-SV1a-001", "year", "an integer from 1996 to 9007199254740991", "1995"},
		{"card-year-negative.json", 8, 141, "cards[2]", "jp-SV1a-001", "year", "an integer from 1996 to 9007199254740991", "-2023"},
		{"card-year-fraction.json", 8, 141, "cards[2]", "jp-SV1a-001", "year", "an integer in plain digits", "2023.0"},
		{"card-year-exponent.json", 8, 141, "cards[2]", "jp-SV1a-001", "year", "an integer in plain digits", "2.023e3"},
		{"card-year-too-large.json", 8, 141, "cards[2]", "jp-SV1a-001", "year", "an integer from 1996 to 9007199254740991", "9007199254740992"},
		{"card-year-string.json", 8, 141, "cards[2]", "jp-SV1a-001", "year", "an integer", "\"2023\""},
		{"card-year-null.json", 8, 141, "cards[2]", "jp-SV1a-001", "year", "an integer", "null"},
		{"card-variant-null.json", 8, 156, "cards[2]", "jp-SV1a-001", "variant", "a string", "null"},
		{"card-variant-number.json", 8, 156, "cards[2]", "jp-SV1a-001", "variant", "a string", "1"},
		{"card-rarity-empty.json", 8, 176, "cards[2]", "jp-SV1a-001", "rarity", "a string of 1 to 100 characters", "an empty string"},
		{"card-rarity-101-codepoints.json", 8, 176, "cards[2]", "jp-SV1a-001", "rarity", "a string of 1 to 100 characters", "(101 characters)"},
		{"card-rarity-null.json", 8, 176, "cards[2]", "jp-SV1a-001", "rarity", "a string", "null"},
		{"card-rarity-number.json", 8, 176, "cards[2]", "jp-SV1a-001", "rarity", "a string", "3"},
		{"card-imageUrl-relative.json", 8, 196, "cards[2]", "jp-SV1a-001", "imageUrl", "an absolute URI with a scheme", "\"/ja/SV/SV1a/001/high.png\""},
		{"card-imageUrl-no-scheme.json", 8, 196, "cards[2]", "jp-SV1a-001", "imageUrl", "an absolute URI with a scheme", "\"assets.tcgdex.net/ja/SV/SV1a/001/high.png\""},
		{"card-imageUrl-scheme-relative.json", 8, 196, "cards[2]", "jp-SV1a-001", "imageUrl", "an absolute URI with a scheme", "\"//assets.tcgdex.net/ja/SV/SV1a/001/high.png\""},
		{"card-imageUrl-no-host.json", 8, 196, "cards[2]", "jp-SV1a-001", "imageUrl", "an absolute URI with a scheme", "\"https:///ja/SV/SV1a/001/high.png\""},
		{"card-imageUrl-space.json", 8, 196, "cards[2]", "jp-SV1a-001", "imageUrl", "an absolute URI with a scheme", "\"https://assets.tcgdex.net/ja/SV/SV1a/001/high res.png\""},
		{"card-imageUrl-empty.json", 8, 196, "cards[2]", "jp-SV1a-001", "imageUrl", "an absolute URI with a scheme", "\"\""},
		{"card-imageUrl-null.json", 8, 196, "cards[2]", "jp-SV1a-001", "imageUrl", "a string", "null"},
		{"card-imageUrl-object.json", 8, 196, "cards[2]", "jp-SV1a-001", "imageUrl", "a string", "an object"},
		{"card-zone-invalid.json", 8, 255, "cards[2]", "jp-SV1a-001", "zone", "\"intl\", \"jp\", \"chn\"", "\"eu\""},
		{"card-zone-empty.json", 8, 255, "cards[2]", "jp-SV1a-001", "zone", "\"intl\", \"jp\", \"chn\"", "\"\""},
		{"card-zone-null.json", 8, 255, "cards[2]", "jp-SV1a-001", "zone", "a string", "null"},
		{"card-totalCards-zero.json", 8, 273, "cards[2]", "jp-SV1a-001", "totalCards", "an integer from 1 to 9007199254740991", "0"},
		{"card-totalCards-negative.json", 8, 273, "cards[2]", "jp-SV1a-001", "totalCards", "an integer from 1 to 9007199254740991", "-73"},
		{"card-totalCards-fraction.json", 8, 273, "cards[2]", "jp-SV1a-001", "totalCards", "an integer in plain digits", "73.5"},
		{"card-totalCards-exponent.json", 8, 273, "cards[2]", "jp-SV1a-001", "totalCards", "an integer in plain digits", "7.3E1"},
		{"card-totalCards-too-large.json", 8, 273, "cards[2]", "jp-SV1a-001", "totalCards", "an integer from 1 to 9007199254740991", "9007199254740992"},
		{"card-totalCards-string.json", 8, 273, "cards[2]", "jp-SV1a-001", "totalCards", "an integer or null", "\"73\""},
		{"card-totalCards-boolean.json", 8, 273, "cards[2]", "jp-SV1a-001", "totalCards", "an integer or null", "true"},
		{"card-illustrator-empty.json", 8, 290, "cards[2]", "jp-SV1a-001", "illustrator", "at least 1 character", "an empty string"},
		{"card-marketAId-empty.json", 8, 317, "cards[2]", "jp-SV1a-001", "marketAId", "at least 1 character", "an empty string"},
		{"card-marketAPath-empty.json", 8, 361, "cards[2]", "jp-SV1a-001", "marketAPath", "at least 1 character", "an empty string"},
		{"card-marketBId-empty.json", 8, 338, "cards[2]", "jp-SV1a-001", "marketBId", "at least 1 character", "an empty string"},
		{"card-illustrator-array.json", 8, 290, "cards[2]", "jp-SV1a-001", "illustrator", "a string or null", "an array"},
		{"card-marketAId-number.json", 8, 317, "cards[2]", "jp-SV1a-001", "marketAId", "a string or null", "568124"},
		{"card-marketAPath-number.json", 8, 361, "cards[2]", "jp-SV1a-001", "marketAPath", "a string or null", "1"},
		{"card-marketBId-number.json", 8, 338, "cards[2]", "jp-SV1a-001", "marketBId", "a string or null", "701036"},
		{"card-scanFallbackUrl-relative.json", 8, 365, "cards[2]", "jp-SV1a-001", "scanFallbackUrl", "an absolute URI with a scheme", "\"scans/jp-SV1a-001.png\""},
		{"card-scanFallbackUrl-empty.json", 8, 365, "cards[2]", "jp-SV1a-001", "scanFallbackUrl", "an absolute URI with a scheme", "\"\""},
		{"card-scanFallbackUrl-number.json", 8, 365, "cards[2]", "jp-SV1a-001", "scanFallbackUrl", "a string or null", "0"},
		{"card-duplicate-id.json", 8, 7, "cards[2]", "intl-base1-1", "id", "a card id not used by another card", "\"intl-base1-1\" again"},
		{"card-setCode-unknown.json", 8, 96, "cards[2]", "jp-SV1a-001", "setCode", "the code of a set of zone \"jp\" in the snapshot", "\"SV1b\", which no set of that zone has"},
		{"card-setCode-other-case.json", 8, 96, "cards[2]", "jp-SV1a-001", "setCode", "the code of a set of zone \"jp\" in the snapshot", "\"sv1a\", which no set of that zone has"},
		{"card-setCode-other-zone.json", 8, 77, "cards[2]", "jp-SV1a-001", "setCode", "the code of a set of zone \"jp\" in the snapshot", "\"base1\", which no set of that zone has"},
		{"card-setName-mismatch.json", 8, 56, "cards[2]", "jp-SV1a-001", "setName", "the name of set \"SV1a\" of zone \"jp\", \"トリプレットビート\"", "\"Triplet Beat\""},
		{"card-setName-mismatch-cards-first.json", 4, 56, "cards[2]", "jp-SV1a-001", "setName", "the name of set \"SV1a\" of zone \"jp\", \"トリプレットビート\"", "\"Triplet Beat\""},
		{"card-setCode-unknown-cards-first.json", 4, 96, "cards[2]", "jp-SV1a-001", "setCode", "the code of a set of zone \"jp\" in the snapshot", "\"SV1b\", which no set of that zone has"},
		{"card-duplicate-id-across-files", 2, 7, "cards[0]", "jp-SV1a-001", "id", "a card id not used by another card", "\"jp-SV1a-001\" again"},
		{"set-duplicate-id-across-files", 2, 7, "sets[0]", "jp-ADV1", "id", "a set id not used by another set", "\"jp-ADV1\" again"},
	}
	for _, tt := range tests {
		t.Run(strings.TrimSuffix(tt.name, ".json"), func(t *testing.T) {
			t.Parallel()
			inputs := fixtureInputs(t, filepath.Join("testdata", "invalid", tt.name))
			db := filepath.Join(t.TempDir(), "catalog.db")
			_, err := Import(context.Background(), Config{DB: db, Inputs: inputs})
			ve := asValidationError(t, err)
			if got, want := len(ve.Errors), 1; got != want {
				t.Fatalf("%d problems, want %d:\n%v", got, want, err)
			}
			if ve.Truncated {
				t.Errorf("truncated with one problem")
			}
			e := ve.Errors[0]
			file := inputs[len(inputs)-1]
			if e.File != file || e.Line != tt.line || e.Column != tt.col {
				t.Errorf("at %s:%d:%d, want %s:%d:%d", e.File, e.Line, e.Column, file, tt.line, tt.col)
			}
			if e.Record != tt.record || e.ID != tt.id || e.Field != tt.field {
				t.Errorf("record %q id %q field %q, want record %q id %q field %q", e.Record, e.ID, e.Field, tt.record, tt.id, tt.field)
			}
			if e.Expected == "" || !strings.Contains(e.Expected, tt.expected) {
				t.Errorf("expected %q, want it to say %q", e.Expected, tt.expected)
			}
			if e.Found == "" || !strings.Contains(e.Found, tt.found) {
				t.Errorf("found %q, want it to say %q", e.Found, tt.found)
			}
			if strings.Count(e.Found, " characters)") > 1 {
				t.Errorf("found %q gives the length twice", e.Found)
			}
			if got, want := err.Error(), wantMessage(file, tt.line, tt.col, tt.record, tt.id, tt.field)+"expected "+e.Expected+", found "+e.Found; !strings.Contains(got, want) {
				t.Errorf("message:\n%s\nwant it to contain:\n%s", got, want)
			}
			assertDirHolds(t, filepath.Dir(db), "catalog.db.lock")
		})
	}
}

// A syntax error ends the file: it is reported where the scanner stopped,
// inside the record being read, and nothing of the file is used.
func TestImportRejectsInvalidJSON(t *testing.T) {
	tests := []struct {
		name      string // under testdata/syntax
		line, col int
		record    string
		found     string
	}{
		{"empty.json", 1, 1, "", "unexpected end of input"},
		{"truncated.json", 4, 143, "cards[0]", "unexpected end of input"},
		{"missing-comma.json", 3, 1, "", "expected ',' or ']', found '{'"},
		{"trailing-comma.json", 3, 1, "sets[1]", "expected a value, found ']'"},
		{"single-quotes.json", 2, 81, "sets[0]", "expected a value, found '''"},
		{"invalid-utf8.json", 4, 35, "cards[0]", "invalid UTF-8"},
		{"control-character.json", 4, 35, "cards[0]", "control character"},
		{"invalid-escape.json", 4, 35, "cards[0]", "invalid escape"},
		{"invalid-escape-control.json", 1, 29, "cards[0]", `invalid escape sequence: \ then byte 0x1b`},
		{"lone-surrogate.json", 4, 35, "cards[0]", "unpaired UTF-16 surrogate"},
		{"leading-zero.json", 2, 106, "sets[0]", "invalid number \"00\""},
		{"plus-sign.json", 4, 141, "cards[0]", "expected a value, found '+'"},
		{"bare-fraction.json", 4, 141, "cards[0]", "invalid number \"2023.\""},
		{"bad-literal.json", 4, 193, "cards[0]", "invalid literal"},
		{"too-deep.json", 4, 252, "cards[0]", "nested deeper than 64"},
		{"byte-order-mark.json", 1, 1, "", "byte 0xef, the start of a UTF-8 byte-order mark"},
		{"utf-16.json", 1, 1, "", "byte 0xff, the start of a UTF-16 byte-order mark: a snapshot is UTF-8"},
	}
	for _, tt := range tests {
		t.Run(strings.TrimSuffix(tt.name, ".json"), func(t *testing.T) {
			t.Parallel()
			file := filepath.Join("testdata", "syntax", tt.name)
			db := filepath.Join(t.TempDir(), "catalog.db")
			_, err := Import(context.Background(), Config{DB: db, Inputs: []string{file}})
			ve := asValidationError(t, err)
			if got, want := len(ve.Errors), 1; got != want {
				t.Fatalf("%d problems, want %d:\n%v", got, want, err)
			}
			e := ve.Errors[0]
			if e.File != file || e.Line != tt.line || e.Column != tt.col || e.Record != tt.record {
				t.Errorf("at %s:%d:%d in %q, want %s:%d:%d in %q", e.File, e.Line, e.Column, e.Record, file, tt.line, tt.col, tt.record)
			}
			if !strings.HasPrefix(e.Found, "invalid JSON: ") || !strings.Contains(e.Found, tt.found) {
				t.Errorf("found %q, want invalid JSON saying %q", e.Found, tt.found)
			}
			if got, want := err.Error(), wantMessage(file, tt.line, tt.col, tt.record, "", "")+e.Found; !strings.Contains(got, want) {
				t.Errorf("message:\n%s\nwant it to contain:\n%s", got, want)
			}
			assertDirHolds(t, filepath.Dir(db), "catalog.db.lock")
		})
	}
}

// Problems come in file order even when a card's set can only be judged
// once every set is read, which reports it last internally.
func TestImportReportsEveryProblemInFileOrder(t *testing.T) {
	file := filepath.Join("testdata", "several-problems.json")
	db := filepath.Join(t.TempDir(), "catalog.db")
	_, err := Import(context.Background(), Config{DB: db, Inputs: []string{file}})
	ve := asValidationError(t, err)
	type where struct {
		line, col         int
		record, id, field string
	}
	want := []where{
		{16, 21, "sets[1]", "jp-SV1a", "releasedOn"},
		{33, 18, "cards[0]", "intl-base1-1", "setCode"},
		{53, 15, "cards[1]", "intl-base1-2", "year"},
		{65, 15, "cards[2]", "jp-SV1a-001", "name"},
		{72, 17, "cards[2]", "jp-SV1a-001", "rarity"},
	}
	var got []where
	for _, e := range ve.Errors {
		got = append(got, where{e.Line, e.Column, e.Record, e.ID, e.Field})
		if e.File != file {
			t.Errorf("problem in %q, want %q", e.File, file)
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("problems\n%+v\nwant\n%+v", got, want)
	}
	if ve.Truncated {
		t.Errorf("truncated with %d problems", len(ve.Errors))
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, "snapshot is invalid: 5 problems:\n") {
		t.Errorf("message starts %q", strings.SplitN(msg, "\n", 2)[0])
	}
	last := -1
	for _, w := range want {
		i := strings.Index(msg, wantMessage(file, w.line, w.col, w.record, w.id, w.field))
		if i <= last {
			t.Fatalf("message does not list %+v after the problems before it:\n%s", w, msg)
		}
		last = i
	}
}

// Cards naming a set that never comes are reported once per set reference,
// with a count, so that a snapshot whose sets are missing does not use the
// whole report on one mistake.
func TestImportReportsAMissingSetOnce(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "snapshot.json")
	writeFile(t, file, `{"sets":[],"cards":[
{"id":"a","name":"A","setName":"Nope","setCode":"nope","number":"1","language":"en","zone":"intl"},
{"id":"b","name":"B","setName":"Nope","setCode":"nope","number":"2","language":"en","zone":"intl"},
{"id":"c","name":"C","setName":"Nope","setCode":"nope","number":"3","language":"en","zone":"intl"}
]}
`)
	_, err := Import(context.Background(), Config{DB: filepath.Join(dir, "catalog.db"), Inputs: []string{file}})
	ve := asValidationError(t, err)
	if got, want := len(ve.Errors), 1; got != want {
		t.Fatalf("%d problems, want %d:\n%v", got, want, err)
	}
	e := ve.Errors[0]
	if e.Line != 2 || e.Column != 49 || e.Record != "cards[0]" || e.Field != "setCode" {
		t.Errorf("at %d:%d %s %s, want 2:49 cards[0] setCode", e.Line, e.Column, e.Record, e.Field)
	}
	if !strings.Contains(e.Found, "(and so do 2 more cards)") {
		t.Errorf("found %q, want it to count the other cards", e.Found)
	}
}

// Cards whose sets never come are reported in the order they were read,
// however many distinct sets they name, and each with the count of the
// cards that named its set after it: here three times as many sets as can be
// reported, whose order as keys is the reverse of the cards', each named by
// two cards far apart, and then a set that comes after its cards under
// another name.
func TestImportReportsTheFirstMissingSetsRead(t *testing.T) {
	const n = 3 * MaxErrors
	var b strings.Builder
	b.WriteString(`{"cards":[` + "\n")
	card := func(i, ref int, code, name string) {
		if i > 0 {
			b.WriteString(",\n")
		}
		fmt.Fprintf(&b, `{"id":"intl-%d","name":"Card","setName":%q,"setCode":%q,"number":"%d","language":"en","zone":"intl"}`, i, name, code, ref)
	}
	for i := range 2 * n {
		ref := n - 1 - i%n
		card(i, ref, fmt.Sprintf("s%04d", ref), "Set")
	}
	card(2*n, 0, "late", "Another name")
	b.WriteString("\n" + `],"sets":[{"id":"intl-late","code":"late","name":"Late","zone":"intl","cardCount":1}]}` + "\n")
	dir := t.TempDir()
	file := filepath.Join(dir, "snapshot.json")
	writeFile(t, file, b.String())

	_, err := Import(context.Background(), Config{DB: filepath.Join(dir, "catalog.db"), Inputs: []string{file}})
	ve := asValidationError(t, err)
	if got, want := len(ve.Errors), MaxErrors; got != want {
		t.Fatalf("%d problems, want %d", got, want)
	}
	if !ve.Truncated {
		t.Errorf("not truncated, with %d sets missing", n)
	}
	for i, e := range ve.Errors {
		code := fmt.Sprintf("s%04d", n-1-i)
		if e.Record != fmt.Sprintf("cards[%d]", i) || e.Line != i+2 || e.Field != "setCode" || e.Found != fmt.Sprintf("%q, which no set of that zone has (and so do 1 more cards)", code) {
			t.Fatalf("problem %d is %s line %d %s found %s, want cards[%d] line %d setCode found %q (and so do 1 more cards)", i, e.Record, e.Line, e.Field, e.Found, i, i+2, code)
		}
	}

	// A set that comes after its cards under another name is reported
	// too, in the order of the cards.
	writeFile(t, file, `{"cards":[
{"id":"intl-1","name":"Card","setName":"Another name","setCode":"late","number":"1","language":"en","zone":"intl"},
{"id":"intl-2","name":"Card","setName":"Set","setCode":"s1","number":"1","language":"en","zone":"intl"},
{"id":"intl-3","name":"Card","setName":"Another name","setCode":"late","number":"2","language":"en","zone":"intl"}
],"sets":[{"id":"intl-late","code":"late","name":"Late","zone":"intl","cardCount":2}]}
`)
	_, err = Import(context.Background(), Config{DB: filepath.Join(dir, "catalog.db"), Inputs: []string{file}})
	ve = asValidationError(t, err)
	if len(ve.Errors) != 2 || ve.Truncated {
		t.Fatalf("%d problems (truncated %v), want 2:\n%v", len(ve.Errors), ve.Truncated, err)
	}
	if e := ve.Errors[0]; e.Record != "cards[0]" || e.Field != "setName" || e.Found != `"Another name" (and so do 1 more cards)` || e.Expected != `the name of set "late" of zone "intl", "Late"` {
		t.Errorf("first problem %s %s expected %s found %s", e.Record, e.Field, e.Expected, e.Found)
	}
	if e := ve.Errors[1]; e.Record != "cards[1]" || e.Field != "setCode" || e.Found != `"s1", which no set of that zone has` {
		t.Errorf("second problem %s %s found %s", e.Record, e.Field, e.Found)
	}
}

// A set name may be as long as any string, also on a card read before its
// set: 40,000 bytes, more than a key of the file may take.
func TestImportOfALongSetNameBeforeItsSet(t *testing.T) {
	name := strings.Repeat("Long ", 8_000)
	cards := fmt.Sprintf(`"cards":[{"id":"intl-1","name":"Card","setName":%q,"setCode":"s","number":"1","language":"en","zone":"intl"}]`, name)
	dir := t.TempDir()
	file := filepath.Join(dir, "snapshot.json")
	writeFile(t, file, `{`+cards+fmt.Sprintf(`,"sets":[{"id":"intl-s","code":"s","name":%q,"zone":"intl","cardCount":1}]}`, name))
	if _, err := Import(context.Background(), Config{DB: filepath.Join(dir, "catalog.db"), Inputs: []string{file}}); err != nil {
		t.Fatalf("the set comes after its card: %v", err)
	}
	writeFile(t, file, `{`+cards+`,"sets":[]}`)
	_, err := Import(context.Background(), Config{DB: filepath.Join(dir, "catalog.db"), Inputs: []string{file}})
	ve := asValidationError(t, err)
	if len(ve.Errors) != 1 || ve.Errors[0].Field != "setCode" || ve.Errors[0].Record != "cards[0]" {
		t.Fatalf("the set never comes: %v, want the card's setCode reported", err)
	}
}

// TestImportCutsLongUnknownMembers: a member no record has is named in
// its problem as it is, or cut short when it is long: a snapshot of
// members of 65,000 characters does not make a report of megabytes. Two
// long names that start alike are two members, not one given twice. A
// name of control characters is quoted, so that a terminal or a log shows
// it rather than obeys it.
func TestImportCutsLongUnknownMembers(t *testing.T) {
	long, other := strings.Repeat("x", 65_000), strings.Repeat("x", 64_999)+"y"
	forged := `\u001b[2J\nh/good.json:1:1: all fine` // as JSON escapes
	dir := t.TempDir()
	file := filepath.Join(dir, "snapshot.json")
	writeFile(t, file, fmt.Sprintf(`{"sets":[{"id":"intl-s","code":"s","name":"S","zone":"intl","cardCount":0,%q:1,"short":2,%q:3,"%s":4}],"cards":[],%q:5}`, long, other, forged, long))
	_, err := Import(context.Background(), Config{DB: filepath.Join(dir, "catalog.db"), Inputs: []string{file}})
	ve := asValidationError(t, err)
	if len(ve.Errors) != 5 {
		t.Fatalf("%d problems, want 5: %v", len(ve.Errors), err)
	}
	if msg := err.Error(); strings.ContainsRune(msg, 0x1b) || strings.Count(msg, "\n") != len(ve.Errors) {
		t.Errorf("the report holds control characters of the snapshot:\n%s", msg)
	}
	cut := `"` + strings.Repeat("x", 60) + `"… (65000 characters)`
	for i, want := range []string{cut, "short", cut, `"\x1b[2J\nh/good.json:1:1: all fine"`, cut} {
		if got := ve.Errors[i].Field; got != want {
			t.Errorf("problem %d names the member %.80q, want %q", i, got, want)
		}
	}
	if len(err.Error()) > 2000 {
		t.Errorf("a message of %d bytes for five problems", len(err.Error()))
	}
}

// TestImportReportsTheNameGroupsLimitOnce: past the limit of name groups,
// the group that goes past it is reported, saying which limit, and the
// groups after it are not, so that the problems after them still show.
func TestImportReportsTheNameGroupsLimitOnce(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"sets":[],"names":[`)
	for i := range catalog.MaxNameGroups + 150 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `["g%da","g%db"]`, i, i)
	}
	b.WriteString(`],"cards":[{"id":"intl-1","name":"Card","setName":"S","setCode":"s","number":"1","language":"en","zone":"intl","year":1}]}`)
	dir := t.TempDir()
	file := filepath.Join(dir, "snapshot.json")
	writeFile(t, file, b.String())
	_, err := Import(context.Background(), Config{DB: filepath.Join(dir, "catalog.db"), Inputs: []string{file}})
	ve := asValidationError(t, err)
	if len(ve.Errors) != 2 {
		t.Fatalf("%d problems, want the limit once and the card's year: %v", len(ve.Errors), err)
	}
	limit, year := ve.Errors[0], ve.Errors[1]
	if want := fmt.Sprintf("names[%d]", catalog.MaxNameGroups); limit.Record != want || limit.Found != fmt.Sprintf("more than %d groups", catalog.MaxNameGroups) {
		t.Errorf("the limit: %s found %q, want %s found more than %d groups", limit.Record, limit.Found, want, catalog.MaxNameGroups)
	}
	if year.Record != "cards[0]" || year.Field != "year" {
		t.Errorf("the second problem is %s %s, want the card's year", year.Record, year.Field)
	}
}

func TestImportStopsAfterMaxErrors(t *testing.T) {
	for _, tt := range []struct {
		bad       int
		truncated bool
	}{
		{MaxErrors, false},
		{MaxErrors + 1, true},
		{250, true},
	} {
		t.Run(fmt.Sprint(tt.bad), func(t *testing.T) {
			dir := t.TempDir()
			file := filepath.Join(dir, "snapshot.json")
			writeFile(t, file, badYears(tt.bad))
			_, err := Import(context.Background(), Config{DB: filepath.Join(dir, "catalog.db"), Inputs: []string{file}})
			ve := asValidationError(t, err)
			if got, want := len(ve.Errors), MaxErrors; got != want {
				t.Fatalf("%d problems, want %d", got, want)
			}
			if got, want := ve.Truncated, tt.truncated; got != want {
				t.Errorf("truncated=%v, want %v", got, want)
			}
			for i, e := range ve.Errors {
				if got, want := e.Record, fmt.Sprintf("cards[%d]", i); got != want || e.Line != i+3 || e.Field != "year" {
					t.Fatalf("problem %d is %s line %d field %s, want %s line %d field year", i, got, e.Line, e.Field, want, i+3)
				}
			}
			msg := err.Error()
			head := strings.SplitN(msg, "\n", 2)[0]
			says := strings.Contains(head, fmt.Sprintf("stopped looking after %d", MaxErrors))
			if says != tt.truncated {
				t.Errorf("message %q, want it to say it stopped looking: %v", head, tt.truncated)
			}
			if got, want := strings.Count(msg, "\n"), MaxErrors; got != want {
				t.Errorf("message lists %d problems, want %d", got, want)
			}
		})
	}
}

// badYears is a snapshot with n cards, each with one bad value, one a line
// from line 3.
func badYears(n int) string {
	var b strings.Builder
	b.WriteString(`{"sets":[{"id":"intl-base1","code":"base1","name":"Base Set","zone":"intl","cardCount":0}],` + "\n" + `"cards":[` + "\n")
	for i := range n {
		if i > 0 {
			b.WriteString(",\n")
		}
		fmt.Fprintf(&b, `{"id":"intl-base1-%d","name":"Card %d","setName":"Base Set","setCode":"base1","number":"%d","language":"en","year":1995,"zone":"intl"}`, i, i, i)
	}
	b.WriteString("\n]}\n")
	return b.String()
}

// fixtureInputs returns path, or the files of the directory path in name
// order.
func fixtureInputs(t *testing.T, path string) []string {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if !st.IsDir() {
		return []string{path}
	}
	files, err := filepath.Glob(filepath.Join(path, "*.json"))
	if err != nil || len(files) < 2 {
		t.Fatalf("%s: want at least two snapshots, got %v (%v)", path, files, err)
	}
	slices.Sort(files)
	return files
}

func asValidationError(t *testing.T, err error) *ValidationError {
	t.Helper()
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("error %T %v, want a *ValidationError", err, err)
	}
	return ve
}

// wantMessage is how a problem's line of the message starts, up to what was
// expected.
func wantMessage(file string, line, col int, record, id, field string) string {
	s := fmt.Sprintf("%s:%d:%d: ", file, line, col)
	if record != "" {
		s += record
		if id != "" {
			s += fmt.Sprintf(" (id %q)", id)
		}
		s += ": "
	}
	if field != "" {
		s += field + ": "
	}
	return s
}
