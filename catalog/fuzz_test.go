package catalog

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// The fuzz targets of this file check the properties that search and the
// catalogue file rely on, for any input a snapshot or a query can carry:
// folding (FuzzFold), the printed-number key (FuzzNumberKey) and the rules
// of one record (FuzzValidate). Their seeds are the values of the built-in
// sample; `go test` runs the seeds, `.ci/fuzz` runs the fuzzer.

// sampleSnapshot reads the built-in sample snapshot.
func sampleSnapshot(tb testing.TB) (sets []Set, cards []Card) {
	tb.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "data", "sample.json"))
	if err != nil {
		tb.Fatal(err)
	}
	var snap struct {
		Sets  []Set  `json:"sets"`
		Cards []Card `json:"cards"`
	}
	if err := json.Unmarshal(raw, &snap); err != nil {
		tb.Fatal(err)
	}
	if len(snap.Sets) == 0 || len(snap.Cards) == 0 {
		tb.Fatal("the sample snapshot has no sets or no cards")
	}
	return snap.Sets, snap.Cards
}

// maxFuzzLen bounds the inputs worth the fuzzer's time: folding works rune
// by rune and segment by segment, and a long input only makes each run and
// each minimization slower.
const maxFuzzLen = 4096

func FuzzFold(f *testing.F) {
	sets, cards := sampleSnapshot(f)
	for _, s := range sets {
		f.Add(s.Name)
	}
	for i, c := range cards {
		if i%4 == 0 {
			f.Add(c.Name)
			f.Add(c.Illustrator.Value)
		}
	}
	for _, s := range []string{
		"", " ", "Pokémon  Center\t Lady", "ぴかちゅう", "ﾋﾟｶﾁｭｳ", "がらる", "ゝゞ",
		"ＰＩＫＡＣＨＵ　２５", "Straße", "Ⅳ", "ǅ", "İ", "\u0345", "\u1FED",
		"わ\u3099", "か\u3099", "a\u200db", "寶可夢", "\uF900薴", "\xff\xfe", "a\xc0\xafb", "\u00a0x\u0085y\u2028",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > maxFuzzLen {
			return // names and queries are short; long inputs only slow the search
		}
		got := Fold(s)
		if again := Fold(s); again != got {
			t.Fatalf("Fold(%q) = %q, then %q", s, got, again)
		}
		if twice := Fold(got); twice != got {
			t.Fatalf("Fold is not idempotent on %q: %q, then %q", s, got, twice)
		}
		if !utf8.ValidString(got) {
			t.Fatalf("Fold(%q) = %q, not valid UTF-8", s, got)
		}
		// White space: runs collapsed to one space, ends trimmed.
		if strings.HasPrefix(got, " ") || strings.HasSuffix(got, " ") || strings.Contains(got, "  ") ||
			strings.ContainsFunc(got, func(r rune) bool { return r != ' ' && unicode.IsSpace(r) }) {
			t.Fatalf("Fold(%q) = %q: white space not collapsed", s, got)
		}
		if strings.ContainsFunc(got, isHiragana) {
			t.Fatalf("Fold(%q) = %q: hiragana left", s, got)
		}
		if strings.ContainsFunc(got, func(r rune) bool { _, ok := simplifiedOf()[r]; return ok }) {
			t.Fatalf("Fold(%q) = %q: a traditional Chinese character left", s, got)
		}
		if strings.ContainsFunc(got, isDiacritic) {
			t.Fatalf("Fold(%q) = %q: a diacritic or format character left", s, got)
		}
		if strings.ContainsFunc(got, func(r rune) bool { return 'A' <= r && r <= 'Z' }) {
			t.Fatalf("Fold(%q) = %q: upper-case letters left", s, got)
		}
		// ASCII is lower-cased with its white space collapsed, by the fast
		// path alone and by the whole chain (which a non-ASCII word sends
		// it through) alike.
		if isPlainASCII(s) {
			if want := strings.Join(strings.Fields(strings.ToLower(s)), " "); got != want {
				t.Fatalf("Fold(%q) = %q, want %q", s, got, want)
			}
			want := strings.TrimPrefix(got+" e", " ")
			if slow := Fold(s + " é"); slow != want {
				t.Fatalf("Fold(%q) = %q, want %q", s+" é", slow, want)
			}
		}
	})
}

func FuzzNumberKey(f *testing.F) {
	_, cards := sampleSnapshot(f)
	for i := 0; i+2 < len(cards); i += 7 {
		f.Add(cards[i].Number, cards[i+1].Number, cards[i+2].Number)
	}
	// docs/CONTRACT.md, Printed-number order, and numbers whose keys need the escapes and the
	// long digit-run lengths.
	f.Add("1", "2", "TG02")
	f.Add("3", "10", "025/165")
	f.Add("112/102", "SV-P", "25")
	f.Add("０２５／１６５", "25/102", "025")
	f.Add("a\x00", "a", "a\x01b")
	f.Add("1"+strings.Repeat("0", 300), "9"+strings.Repeat("9", 253), "9"+strings.Repeat("9", 254))
	f.Add("", "/", " 7 ")
	f.Fuzz(func(t *testing.T, a, b, c string) {
		if len(a)+len(b)+len(c) > maxFuzzLen {
			return
		}
		nums := [3]string{a, b, c}
		var keys [3][]byte
		var norms [3]string
		for i, n := range nums {
			keys[i] = NumberKey(n)
			norms[i] = NormalizeNumber(n)
			if again := NumberKey(n); !bytes.Equal(again, keys[i]) {
				t.Fatalf("NumberKey(%q) is not deterministic: %x then %x", n, keys[i], again)
			}
			// The number normalized on the stack, when it is plain, is
			// the number normalized the general way.
			if general := AppendNormalizedNumberKey(nil, NormalizeFoldedNumber(Fold(n))); !bytes.Equal(keys[i], general) {
				t.Fatalf("NumberKey(%q) = %x, but the key of its number normalized the general way is %x", n, keys[i], general)
			}
			prefix := []byte("prefix")
			if got := AppendNumberKey(prefix, n); !bytes.Equal(got, append([]byte("prefix"), keys[i]...)) {
				t.Fatalf("AppendNumberKey(%q, %q) = %x, want the prefix then %x", prefix, n, got, keys[i])
			}
			// A search term's number key: FuzzSearchTermNumberKey, in
			// catalog/store.
			norm := norms[i]
			if !utf8.ValidString(norm) {
				t.Fatalf("NormalizeNumber(%q) = %q, not valid UTF-8", n, norm)
			}
			if again := NormalizeNumber(norm); again != norm {
				t.Fatalf("NormalizeNumber is not idempotent on %q: %q, then %q", n, norm, again)
			}
			if k := NumberKey(norm); !bytes.Equal(k, keys[i]) {
				t.Fatalf("NumberKey(%q) = %x, but the key of its normalized form %q is %x", n, keys[i], norm, k)
			}
			// Search normalizes the folded query term: a number typed as
			// printed must find the card.
			if folded := Fold(n); !strings.Contains(folded, " ") {
				if got := NormalizeNumber(folded); got != norm {
					t.Fatalf("NormalizeNumber(Fold(%q)) = %q, NormalizeNumber(%q) = %q", n, got, n, norm)
				}
			}
		}
		for i := range nums {
			for j := range nums {
				x, y := nums[i], nums[j]
				kx, ky := keys[i], keys[j]
				nx, ny := norms[i], norms[j]
				got := bytes.Compare(kx, ky)
				if (got == 0) != (nx == ny) {
					t.Fatalf("keys of %q and %q compare %d, normalized forms %q and %q", x, y, got, nx, ny)
				}
				if want := compareNumbers(nx, ny); got != want {
					t.Fatalf("keys of %q and %q compare %d, the contract's order says %d (normalized %q and %q)", x, y, got, want, nx, ny)
				}
				// Self-delimiting: an id after the key does not change the
				// order of two different numbers.
				if got != 0 {
					ax := append(append([]byte(nil), kx...), "\xff\xff\xff-id"...)
					ay := append(append([]byte(nil), ky...), "\x00"...)
					if bytes.Compare(ax, ay) != got {
						t.Fatalf("keys of %q and %q compare %d, but %d with ids after them", x, y, got, -got)
					}
				}
				// Antisymmetry and transitivity of the order over the triple.
				if back := bytes.Compare(ky, kx); back != -got {
					t.Fatalf("%q vs %q: %d, reversed %d", x, y, got, back)
				}
				for k := range nums {
					kz := keys[k]
					if got <= 0 && bytes.Compare(ky, kz) <= 0 && bytes.Compare(kx, kz) > 0 {
						t.Fatalf("order not transitive: %q <= %q <= %q but %q > %q", x, y, nums[k], x, nums[k])
					}
				}
			}
		}
	})
}

// compareNumbers is the order of docs/CONTRACT.md, Printed-number order, on two normalized printed
// numbers, written as a comparison rather than a key: the value of the first
// digit run (numbers without digits after all others), then the normalized
// form with each digit run compared by value. Where the design says
// nothing, it fixes what the key does: a shorter form before one it is a
// prefix of, and the bytes 0x00 and 0x01 before a digit run, which comes
// before every other byte.
func compareNumbers(a, b string) int {
	fa, oka := firstDigitRun(a)
	fb, okb := firstDigitRun(b)
	switch {
	case oka && !okb:
		return -1
	case !oka && okb:
		return 1
	case oka && okb:
		if c := compareDigitRuns(fa, fb); c != 0 {
			return c
		}
	}
	for {
		ta, ra := nextToken(a)
		tb, rb := nextToken(b)
		switch {
		case ta == "" && tb == "":
			return 0
		case ta == "":
			return -1
		case tb == "":
			return 1
		}
		if c := cmp.Compare(tokenRank(ta), tokenRank(tb)); c != 0 {
			return c
		}
		if isDigit(ta[0]) {
			if c := compareDigitRuns(ta, tb); c != 0 {
				return c
			}
		} else if c := strings.Compare(ta, tb); c != 0 {
			return c
		}
		a, b = ra, rb
	}
}

// nextToken splits off a digit run or one byte.
func nextToken(s string) (tok, rest string) {
	if s == "" {
		return "", ""
	}
	if !isDigit(s[0]) {
		return s[:1], s[1:]
	}
	i := 0
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	return s[:i], s[i:]
}

// tokenRank orders the kinds of tokens: the bytes 0x00 and 0x01, then digit
// runs, then every other byte.
func tokenRank(tok string) int {
	switch {
	case tok[0] == 0x00:
		return 0
	case tok[0] == 0x01:
		return 1
	case isDigit(tok[0]):
		return 2
	}
	return 3
}

// compareDigitRuns compares two runs of digits by value.
func compareDigitRuns(a, b string) int {
	a = strings.TrimLeft(a, "0")
	b = strings.TrimLeft(b, "0")
	return cmp.Or(cmp.Compare(len(a), len(b)), strings.Compare(a, b))
}

func TestCompareNumbersOracle(t *testing.T) {
	// The oracle of FuzzNumberKey must itself give the documented order.
	ordered := []string{"1", "2", "TG02", "3", "10", "025/165", "112/102", "SV-P", "XY"}
	for i := 0; i+1 < len(ordered); i++ {
		a, b := NormalizeNumber(ordered[i]), NormalizeNumber(ordered[i+1])
		if c := compareNumbers(a, b); c >= 0 {
			t.Errorf("compareNumbers(%q, %q) = %d, want < 0", a, b, c)
		}
	}
}

func FuzzValidate(f *testing.F) {
	sets, cards := sampleSnapshot(f)
	for i, c := range cards {
		if i%50 != 0 {
			continue
		}
		s := sets[i%len(sets)]
		f.Add(c.ID, c.SetCode, c.Name, c.Zone, s.ReleasedOn.Value, s.CardCount, c.Number, c.Language, c.Rarity.Value, c.ImageURL.Value, c.Year.Value, c.TotalCards.Value)
	}
	f.Add("", "", "", "", "", int64(-1), "", "", "", "", int64(0), int64(0))
	f.Add("x", "X", "n", "jp", "2024-02-29", int64(MaxInteger), "1", "ja", strings.Repeat("é", 100), "urn:x", int64(1996), int64(1))
	f.Add("x", "X", "n", "JP", "1900-02-29", int64(MaxInteger+1), "1", "j", strings.Repeat("é", 101), "https:///x", int64(1995), int64(0))
	f.Add(strings.Repeat("x", MaxKeyLength), strings.Repeat("é", MaxKeyLength), "n", "jp", "", int64(0), strings.Repeat("1", MaxNumberLength), "ja", "R", "urn:x", int64(1996), int64(1))
	f.Add(strings.Repeat("x", MaxKeyLength+1), strings.Repeat("é", MaxKeyLength+1), "n", "jp", "", int64(0), strings.Repeat("①", MaxNumberLength+1), "ja", "R", "urn:x", int64(1996), int64(1))
	f.Add("x", "X", strings.Repeat("\ufdfa", MaxNameLength), "jp", "", int64(0), "1", "ja", "R", "urn:x", int64(1996), int64(1))
	f.Add("x", "X", strings.Repeat("n", MaxNameLength+1), "jp", "", int64(0), "1", "ja", "R", "urn:x", int64(1996), int64(1))
	f.Add("\xff", "\xc0\xaf", "日", "chn", "2023-13-01", int64(0), "1/2", "日本", "\x00", "http://h/a b", int64(-1), int64(-1))
	f.Add("x", "X", "\u3000\u200b", "jp", "", int64(0), "/1", "ja", "R", "urn:x", int64(1996), int64(1))
	f.Add("x", "X", "\u0301", "jp", "", int64(0), " ", "ja", "R", "urn:x", int64(1996), int64(1))
	f.Fuzz(func(t *testing.T, id, code, name, zone, releasedOn string, cardCount int64, number, language, rarity, imageURL string, year, totalCards int64) {
		set := Set{ID: id, Code: code, Name: name, Zone: zone, ReleasedOn: Some(releasedOn), CardCount: cardCount}
		card := Card{
			ID: id, Name: name, SetName: name, SetCode: code, Number: number, Language: language,
			Year: Some(year), Variant: DefaultVariant, Rarity: Some(rarity), ImageURL: Some(imageURL), Zone: zone,
			TotalCards: Some(totalCards), Illustrator: Some(name), MarketAID: Some(id), MarketAPath: Null[string](),
			MarketBID: Some(code), ScanFallbackURL: Some(imageURL),
		}

		uri := ValidURI(imageURL)
		checkURIConsistent(t, imageURL, uri)

		zoneOK := zone == "intl" || zone == "jp" || zone == "chn"
		wantSet := map[string]bool{
			"id":         between(utf8.RuneCountInString(id), 1, MaxKeyLength),
			"code":       between(utf8.RuneCountInString(code), 1, MaxKeyLength),
			"name":       utf8.RuneCountInString(name) >= 1,
			"zone":       zoneOK,
			"releasedOn": calendarDate(releasedOn),
			"cardCount":  0 <= cardCount && cardCount <= MaxInteger,
		}
		setErrs := set.Validate()
		checkFieldErrors(t, "set", setErrs, wantSet)
		if !sameErrors(setErrs, set.Validate()) {
			t.Fatalf("set.Validate is not deterministic")
		}

		rarityLen := utf8.RuneCountInString(rarity)
		wantCard := map[string]bool{
			"id":              between(utf8.RuneCountInString(id), 1, MaxKeyLength),
			"name":            between(utf8.RuneCountInString(name), 1, MaxNameLength) && Fold(name) != "",
			"setName":         utf8.RuneCountInString(name) >= 1,
			"setCode":         between(utf8.RuneCountInString(code), 1, MaxKeyLength),
			"number":          between(utf8.RuneCountInString(number), 1, MaxNumberLength) && NormalizeNumber(number) != "",
			"language":        utf8.RuneCountInString(language) >= 2,
			"year":            1996 <= year && year <= MaxInteger,
			"rarity":          1 <= rarityLen && rarityLen <= 100,
			"imageUrl":        uri,
			"zone":            zoneOK,
			"totalCards":      1 <= totalCards && totalCards <= MaxInteger,
			"illustrator":     utf8.RuneCountInString(name) >= 1,
			"marketAId":       utf8.RuneCountInString(id) >= 1,
			"marketBId":       utf8.RuneCountInString(code) >= 1,
			"scanFallbackUrl": uri,
		}
		checkFieldErrors(t, "card", card.Validate(), wantCard)
	})
}

// checkFieldErrors asserts that errs names exactly the fields whose rule
// does not hold (want[field] false), once each, with a message that says
// what was expected and found and stays short whatever the value.
func checkFieldErrors(t *testing.T, what string, errs []FieldError, valid map[string]bool) {
	t.Helper()
	seen := map[string]bool{}
	for _, e := range errs {
		ok, known := valid[e.Field]
		switch {
		case !known:
			t.Fatalf("%s: error for an unknown field: %v", what, e)
		case ok:
			t.Fatalf("%s: error for a valid field: %v", what, e)
		case seen[e.Field]:
			t.Fatalf("%s: field %s reported twice", what, e.Field)
		case e.Expected == "" || e.Found == "":
			t.Fatalf("%s: error without what was expected or found: %#v", what, e)
		case !utf8.ValidString(e.Error()) || len(e.Found) > 1024:
			t.Fatalf("%s: message not valid UTF-8 or not bounded (%d bytes): %q", what, len(e.Found), e.Error())
		}
		seen[e.Field] = true
	}
	for field, ok := range valid {
		if !ok && !seen[field] {
			t.Fatalf("%s: %s breaks its rule but was not reported (errors %v)", what, field, errs)
		}
	}
}

func sameErrors(a, b []FieldError) bool {
	return fmt.Sprint(a) == fmt.Sprint(b)
}

// calendarDate is ValidDate written out: YYYY-MM-DD, a month of 1 to 12
// and a day that month has, leap years of the Gregorian calendar included.
func calendarDate(s string) bool {
	if len(s) != 10 || s[4] != '-' || s[7] != '-' {
		return false
	}
	for i, c := range []byte(s) {
		if i != 4 && i != 7 && !isDigit(c) {
			return false
		}
	}
	y, _ := strconv.Atoi(s[:4])
	m, _ := strconv.Atoi(s[5:7])
	d, _ := strconv.Atoi(s[8:])
	days := []int{31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}
	if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
		days[1] = 29
	}
	return 1 <= m && m <= 12 && 1 <= d && d <= days[m-1]
}

// checkURIConsistent checks what ValidURI promises of a URI it accepts: an
// absolute URI that net/url reads back with its scheme, no white space or
// control characters, and a host for http and https.
func checkURIConsistent(t *testing.T, s string, valid bool) {
	t.Helper()
	if !valid {
		return
	}
	u, err := url.Parse(s)
	if err != nil || !u.IsAbs() {
		t.Fatalf("ValidURI(%q) but net/url reads it as %v (%v)", s, u, err)
	}
	if strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		t.Fatalf("ValidURI(%q) despite white space or a control character", s)
	}
	if sch := strings.ToLower(u.Scheme); (sch == "http" || sch == "https") && u.Host == "" {
		t.Fatalf("ValidURI(%q): an %s URI without a host", s, sch)
	}
}

func between(n, min, max int) bool { return min <= n && n <= max }
