package gen

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestMarks checks that the suffixes change the set names, codes and ids
// of the records, and nothing else: printed numbers and image URLs keep the
// code alone.
func TestMarks(t *testing.T) {
	o := Options{Cards: 600, Seed: 3}
	decode := func(o Options) (s struct {
		Sets  []map[string]any `json:"sets"`
		Cards []map[string]any `json:"cards"`
	}) {
		data, _ := generate(t, o)
		if err := json.Unmarshal(data, &s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	plain := decode(o)
	o.SetNameSuffix, o.SetCodeSuffix = " #3", "~3"
	marked := decode(o)
	if len(plain.Sets) != len(marked.Sets) || len(plain.Cards) != len(marked.Cards) {
		t.Fatalf("%d sets and %d cards marked, %d and %d plain", len(marked.Sets), len(marked.Cards), len(plain.Sets), len(plain.Cards))
	}
	setIDs := map[string]string{} // plain id -> marked id
	for i, p := range plain.Sets {
		want := map[string]any{}
		for k, v := range p {
			want[k] = v
		}
		want["name"] = p["name"].(string) + " #3"
		want["code"] = p["code"].(string) + "~3"
		want["id"] = p["id"].(string) + "~3"
		setIDs[p["id"].(string)] = want["id"].(string)
		if got, _ := json.Marshal(marked.Sets[i]); string(got) != mustJSON(t, want) {
			t.Fatalf("set %d: %s, want %s", i, got, mustJSON(t, want))
		}
	}
	for i, p := range plain.Cards {
		want := map[string]any{}
		for k, v := range p {
			want[k] = v
		}
		setID := p["zone"].(string) + "-" + p["setCode"].(string)
		if !strings.HasPrefix(p["id"].(string), setID+"-") || setIDs[setID] == "" {
			t.Fatalf("card %v: id does not start with its set's", p["id"])
		}
		want["id"] = setIDs[setID] + strings.TrimPrefix(p["id"].(string), setID)
		want["setName"] = p["setName"].(string) + " #3"
		want["setCode"] = p["setCode"].(string) + "~3"
		if got, _ := json.Marshal(marked.Cards[i]); string(got) != mustJSON(t, want) {
			t.Fatalf("card %d: %s, want %s", i, got, mustJSON(t, want))
		}
	}
}

func mustJSON(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
