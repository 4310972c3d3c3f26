package catalog

import (
	"bytes"
	"encoding/json"
	"testing"
)

// TestAppendJSONMatchesEncodingJSON: the hand-written encoders give exactly
// what encoding/json gives for the same record, minus HTML escaping, and the
// result decodes back to the record.
func TestAppendJSONMatchesEncodingJSON(t *testing.T) {
	cards := []Card{
		{ID: "x", Name: "n", SetName: "s", SetCode: "c", Number: "1", Language: "en", Variant: "standard", Zone: "intl"},
		{
			ID: "intl-odd/1 \"q\"", Name: "Pokémon <&> \u2028\t\x01 ピカ", SetName: "S", SetCode: "C", Number: "025/165",
			Language: "ja", Year: Some[int64](MaxInteger), Variant: "holo", Rarity: Some("Rare"),
			ImageURL: Some("https://example.com/a?b=c&d"), Zone: "jp", TotalCards: Null[int64](),
			Illustrator: Some("Ken Sugimori"), MarketAID: Null[string](), MarketAPath: Some("/p"),
			MarketBID: Some("7"), ScanFallbackURL: Null[string](),
		},
	}
	for _, c := range cards {
		assertSameJSON(t, c.AppendJSON(nil), &c)
		var back Card
		if err := json.Unmarshal(c.AppendJSON(nil), &back); err != nil {
			t.Fatal(err)
		}
		if back != c {
			t.Errorf("round trip:\n got %+v\nwant %+v", back, c)
		}
	}
	sets := []Set{
		{ID: "intl-a", Code: "a", Name: "A", Zone: "intl", CardCount: 0},
		{ID: "jp-SV1a", Code: "SV1a", Name: "トリプレットビート", Zone: "jp", ReleasedOn: Some("2023-02-10"), CardCount: 73},
	}
	for _, s := range sets {
		assertSameJSON(t, s.AppendJSON(nil), &s)
	}
}

func assertSameJSON(t *testing.T, got []byte, v any) {
	t.Helper()
	var want bytes.Buffer
	enc := json.NewEncoder(&want)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	if w := bytes.TrimSuffix(want.Bytes(), []byte("\n")); !bytes.Equal(got, w) {
		t.Errorf("AppendJSON:\n got %s\nwant %s", got, w)
	}
}
