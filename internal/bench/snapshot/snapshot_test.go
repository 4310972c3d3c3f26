package snapshot

import "testing"

func TestTypicalQuery(t *testing.T) {
	for name, want := range map[string]string{
		"Charizard ex":         "charizard",
		"Professor's Research": "professor's",
		"ピカチュウ":                "ピカチュウ",
		"N":                    "",
		"N A":                  "n a",
		"Mr. Mime":             "mime",
	} {
		if got := TypicalQuery(name); got != want {
			t.Fatalf("TypicalQuery(%q) = %q, want %q", name, got, want)
		}
	}
}
