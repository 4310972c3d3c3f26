package gen

import (
	"strings"
	"testing"
)

func TestTablesLoad(t *testing.T) {
	tb, err := loadTables()
	if err != nil {
		t.Fatal(err)
	}
	if got := []string{tb.Zones[zoneIntl].Name, tb.Zones[zoneJP].Name, tb.Zones[zoneCHN].Name}; strings.Join(got, " ") != "intl jp chn" {
		t.Errorf("zones %v, want intl jp chn in that order", got)
	}
	if len(tb.SizeMilles) != 64 {
		t.Errorf("%d size quantiles, want 64", len(tb.SizeMilles))
	}
	if e := tb.markEraFor(2021); e.From != 2020 || len(e.Marks) != 3 || e.Marks[0] != (weighted{"V", 6}) {
		t.Errorf("mark era of 2021: %+v", e)
	}
}

func TestParseTablesErrors(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"NotJSON", "zones", "gen: tables.json: invalid character"},
		{"UnknownField", `{"zone": []}`, `unknown field "zone"`},
		{"BadPair", `{"rarities": {"classic": [["Common"]]}}`, `want ["name", weight] with a positive weight, found ["Common"]`},
		{"ZeroWeight", `{"rarities": {"classic": [["Common", 0]]}}`, "with a positive weight"},
		{"MissingTable", `{"sizeMilles": [1000]}`, "a rarity or variant table is missing or empty"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := parseTables([]byte(c.in))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one containing %q", err, c.want)
			}
		})
	}
}
