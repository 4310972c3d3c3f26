package catalog

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestAppendJSONStringProperties: on names and random bytes, the output is
// valid JSON that decodes to what encoding/json makes of the same string,
// and nothing is escaped that need not be.
func TestAppendJSONStringProperties(t *testing.T) {
	cases := []string{
		"", "Pikachu", "Flabébé", "ピカチュウ", "皮卡丘", "洗翠　萬針魚", "Nidoran♀ δ",
		`quote " and backslash \`, "tab\tnewline\nreturn\r", "\x00\x01\x1f\x7f",
		"<script>&amp;</script>", "line\u2028para\u2029end", "emoji 🃏",
		"bad \xff utf8", "truncated \xe3\x81", "surrogate \xed\xa0\x80", "overlong \xc0\xaf", "\xf4\x90\x80\x80",
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		b := make([]byte, r.IntN(12))
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		cases = append(cases, string(b))
	}
	for _, s := range cases {
		got := AppendJSONString(nil, s)
		if !json.Valid(got) {
			t.Fatalf("%q → %s: not valid JSON", s, got)
		}
		var back string
		if err := json.Unmarshal(got, &back); err != nil {
			t.Fatal(err)
		}
		// encoding/json is the reference for what a string means in JSON.
		ref, _ := json.Marshal(s)
		var want string
		if err := json.Unmarshal(ref, &want); err != nil {
			t.Fatal(err)
		}
		if back != want {
			t.Fatalf("%q: decodes to %q, encoding/json gives %q", s, back, want)
		}
		if utf8.ValidString(s) && !strings.ContainsAny(s, "\"\\\u2028\u2029") && !hasControl(s) && string(got) != `"`+s+`"` {
			t.Fatalf("%q: escaped needlessly: %s", s, got)
		}
	}
}

func hasControl(s string) bool {
	for _, c := range []byte(s) {
		if c < 0x20 {
			return true
		}
	}
	return false
}
