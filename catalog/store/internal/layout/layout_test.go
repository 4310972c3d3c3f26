package layout

import (
	"bytes"
	"testing"

	"github.com/catalogd/catalogd/catalog"
)

// An id of the usual shape names the key its card has: the zone, then the
// code, hyphens and all, then the number after the last hyphen.
func TestAppendGuessedCardKey(t *testing.T) {
	for _, c := range []struct {
		id, zone, code, number string
	}{
		{"intl-base1-4", catalog.ZoneIntl, "base1", "4"},
		{"jp-SV-P-001", catalog.ZoneJP, "SV-P", "001"},
		{"chn-tk-hs-g-TG02", catalog.ZoneCHN, "tk-hs-g", "TG02"},
		{"intl-sv03.5-025/165", catalog.ZoneIntl, "sv03.5", "025/165"},
	} {
		got, ok := AppendGuessedCardKey(nil, c.id)
		want := AppendCardKey(nil, ZoneByte(c.zone), c.code, catalog.NumberKey(c.number), c.id)
		if !ok || !bytes.Equal(got, want) {
			t.Errorf("%q: %q, %v; want %q", c.id, got, ok, want)
		}
	}
	for _, id := range []string{"", "intl", "intl-base1", "intl--4", "intl-base1-", "eu-base1-4", "nope", "x-y-z"} {
		if got, ok := AppendGuessedCardKey([]byte("kept"), id); ok || string(got) != "kept" {
			t.Errorf("%q: %q, %v; want no guess", id, got, ok)
		}
	}
}
