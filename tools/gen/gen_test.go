package gen

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"
)

// opt records whether a member was present and whether it was null, which a
// plain pointer field cannot tell apart.
type opt[T any] struct {
	set, null bool
	raw       []byte
	v         T
}

func (o *opt[T]) UnmarshalJSON(b []byte) error {
	o.set = true
	o.raw = append([]byte(nil), b...)
	if string(b) == "null" {
		o.null = true
		return nil
	}
	return json.Unmarshal(b, &o.v)
}

type tSet struct {
	ID         opt[string]          `json:"id"`
	Code       opt[string]          `json:"code"`
	Name       opt[string]          `json:"name"`
	Zone       opt[string]          `json:"zone"`
	ReleasedOn opt[string]          `json:"releasedOn"`
	CardCount  opt[json.RawMessage] `json:"cardCount"`
}

type tCard struct {
	ID              opt[string]          `json:"id"`
	Name            opt[string]          `json:"name"`
	SetName         opt[string]          `json:"setName"`
	SetCode         opt[string]          `json:"setCode"`
	Number          opt[string]          `json:"number"`
	Language        opt[string]          `json:"language"`
	Year            opt[json.RawMessage] `json:"year"`
	Variant         opt[string]          `json:"variant"`
	Rarity          opt[string]          `json:"rarity"`
	ImageURL        opt[string]          `json:"imageUrl"`
	Zone            opt[string]          `json:"zone"`
	TotalCards      opt[json.RawMessage] `json:"totalCards"`
	Illustrator     opt[string]          `json:"illustrator"`
	MarketAID       opt[string]          `json:"marketAId"`
	MarketAPath     opt[string]          `json:"marketAPath"`
	MarketBID       opt[string]          `json:"marketBId"`
	ScanFallbackURL opt[string]          `json:"scanFallbackUrl"`
}

type tSnapshot struct {
	Sets  *[]tSet  `json:"sets"`
	Cards *[]tCard `json:"cards"`
}

var (
	setKeys  = keySet("id code name zone releasedOn cardCount")
	cardKeys = keySet("id name setName setCode number language year variant rarity imageUrl zone totalCards illustrator marketAId marketAPath marketBId scanFallbackUrl")
	wholeNum = regexp.MustCompile(`^(0|[1-9][0-9]*)$`)
)

func keySet(s string) map[string]bool {
	m := map[string]bool{}
	for _, k := range strings.Fields(s) {
		m[k] = true
	}
	return m
}

func generate(t testing.TB, o Options) ([]byte, Stats) {
	t.Helper()
	var buf bytes.Buffer
	st, err := Write(&buf, o)
	if err != nil {
		t.Fatalf("Write(%+v): %v", o, err)
	}
	return buf.Bytes(), st
}

func digest(t *testing.T, o Options) string {
	t.Helper()
	h := sha256.New()
	if _, err := Write(h, o); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func TestDeterministic(t *testing.T) {
	t.Parallel()
	base := Options{Cards: 20000, Seed: 42}
	a, b := digest(t, base), digest(t, base)
	if a != b {
		t.Fatalf("same options, different output: %s vs %s", a, b)
	}
	for _, o := range []Options{
		{Cards: 20000, Seed: 43},
		{Cards: 20000, Seed: 42, CardsPerSet: 80},
		{Cards: 20001, Seed: 42},
	} {
		if d := digest(t, o); d == a {
			t.Errorf("%+v gives the same bytes as %+v", o, base)
		}
	}
	// The explicit default is the default.
	if d := digest(t, Options{Cards: 20000, Seed: 42, CardsPerSet: DefaultCardsPerSet}); d != a {
		t.Errorf("CardsPerSet %d differs from the zero value", DefaultCardsPerSet)
	}
}

// TestGolden pins the bytes: the names, weights and tables behind the
// generator may move between files, but a benchmark's snapshot for a given
// seed must stay the one its published figures were measured on.
func TestGolden(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{Cards: 1000, Seed: 1}, "e253402a69486fc7a479b9307146e26d058ed0c4bbe10ec603b8bde65984b1f4"},
		{Options{Cards: 30000, Seed: 7}, "6945162d45a4e60f70856b584a09ef536a1fd469202531ce2664e99b58a36fe6"},
		{Options{Cards: 20000, Seed: 42, CardsPerSet: 80}, "01be48f78acaf8af4ab0dfa30a30d69b6942b3ddc43c1b34c5bda5ad7a592370"},
	} {
		if got := digest(t, c.o); got != c.want {
			t.Errorf("%+v: sha256 %s, want %s", c.o, got, c.want)
		}
	}
}

// checked is what validate learned about a snapshot.
type checked struct {
	sets  []tSet
	cards []tCard
	zones map[string]zoneCount
}

// zoneCount counts the records of one zone.
type zoneCount struct {
	Sets, Cards int
}

func validate(t *testing.T, data []byte) checked {
	t.Helper()
	c, problems := check(data)
	for i, p := range problems {
		if i == 20 {
			t.Errorf("... %d problems in all", len(problems))
			break
		}
		t.Error(p)
	}
	if len(problems) > 0 {
		t.FailNow()
	}
	return c
}

// check applies every rule of docs/CONTRACT.md (Records; Snapshots and
// validation) that a snapshot must meet, independently of the generator's code.
func check(data []byte) (checked, []string) {
	var problems []string
	fail := func(format string, args ...any) {
		problems = append(problems, fmt.Sprintf(format, args...))
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var snap tSnapshot
	if err := dec.Decode(&snap); err != nil {
		fail("decode: %v", err)
		return checked{}, problems
	}
	if _, err := dec.Token(); err != io.EOF {
		fail("data after the snapshot object: %v", err)
	}
	if snap.Sets == nil || snap.Cards == nil {
		fail(`"sets" and "cards" are both required`)
		return checked{}, problems
	}
	c := checked{sets: *snap.Sets, cards: *snap.Cards, zones: map[string]zoneCount{}}
	nonEmpty := func(rec, field string, o opt[string], required bool) {
		switch {
		case !o.set:
			if required {
				fail("%s: %s missing", rec, field)
			}
		case o.null:
			fail("%s: %s is null", rec, field)
		case utf8.RuneCountInString(o.v) < 1:
			fail("%s: %s empty", rec, field)
		}
	}
	nullableStr := func(rec, field string, o opt[string], uri bool) {
		if !o.set || o.null {
			return
		}
		if o.v == "" {
			fail("%s: %s is an empty string", rec, field)
		}
		if uri {
			if u, err := url.Parse(o.v); err != nil || u.Scheme == "" || u.Host == "" {
				fail("%s: %s %q is not an absolute URI", rec, field, o.v)
			}
		}
	}
	zoneOK := map[string]bool{"intl": true, "jp": true, "chn": true}

	type zc struct{ zone, code string }
	setByID := map[string]*tSet{}
	setByZC := map[zc]*tSet{}
	foldedCodes := map[zc]bool{}
	for i := range c.sets {
		s := &c.sets[i]
		rec := fmt.Sprintf("sets[%d] %s", i, s.ID.v)
		nonEmpty(rec, "id", s.ID, true)
		nonEmpty(rec, "code", s.Code, true)
		nonEmpty(rec, "name", s.Name, true)
		if !s.Zone.set || s.Zone.null || !zoneOK[s.Zone.v] {
			fail("%s: zone %q", rec, s.Zone.v)
		}
		if s.ReleasedOn.set {
			d, err := time.Parse("2006-01-02", s.ReleasedOn.v)
			if s.ReleasedOn.null || err != nil || d.Format("2006-01-02") != s.ReleasedOn.v || d.Year() < 1996 {
				fail("%s: releasedOn %q", rec, s.ReleasedOn.v)
			}
		}
		if !s.CardCount.set || !wholeNum.Match(s.CardCount.raw) {
			fail("%s: cardCount %s", rec, s.CardCount.raw)
		}
		if s.ID.v != s.Zone.v+"-"+s.Code.v {
			fail("%s: id is not {zone}-{code}", rec)
		}
		if setByID[s.ID.v] != nil {
			fail("%s: duplicate set id", rec)
		}
		setByID[s.ID.v] = s
		k := zc{s.Zone.v, s.Code.v}
		if setByZC[k] != nil {
			fail("%s: duplicate (zone, code)", rec)
		}
		setByZC[k] = s
		fk := zc{s.Zone.v, strings.ToLower(s.Code.v)}
		if foldedCodes[fk] {
			fail("%s: code repeats in its zone ignoring case", rec)
		}
		foldedCodes[fk] = true
		zs := c.zones[s.Zone.v]
		zs.Sets++
		c.zones[s.Zone.v] = zs
	}

	cardIDs := make(map[string]bool, len(c.cards))
	perSet := map[*tSet]int{}
	for i := range c.cards {
		cd := &c.cards[i]
		rec := fmt.Sprintf("cards[%d] %s", i, cd.ID.v)
		nonEmpty(rec, "id", cd.ID, true)
		nonEmpty(rec, "name", cd.Name, true)
		nonEmpty(rec, "setName", cd.SetName, true)
		nonEmpty(rec, "setCode", cd.SetCode, true)
		nonEmpty(rec, "number", cd.Number, true)
		nonEmpty(rec, "variant", cd.Variant, false)
		if !cd.Language.set || cd.Language.null || utf8.RuneCountInString(cd.Language.v) < 2 {
			fail("%s: language %q", rec, cd.Language.v)
		}
		if !cd.Zone.set || cd.Zone.null || !zoneOK[cd.Zone.v] {
			fail("%s: zone %q", rec, cd.Zone.v)
		}
		if cd.Year.set && !(wholeNum.Match(cd.Year.raw) && string(cd.Year.raw) >= "1996" && len(cd.Year.raw) == 4) {
			fail("%s: year %s", rec, cd.Year.raw)
		}
		if cd.Rarity.set {
			if n := utf8.RuneCountInString(cd.Rarity.v); cd.Rarity.null || n < 1 || n > 100 {
				fail("%s: rarity %q", rec, cd.Rarity.v)
			}
		}
		if cd.ImageURL.set && cd.ImageURL.null {
			fail("%s: imageUrl is null", rec)
		}
		nullableStr(rec, "imageUrl", cd.ImageURL, true)
		if cd.TotalCards.set && !cd.TotalCards.null && (!wholeNum.Match(cd.TotalCards.raw) || string(cd.TotalCards.raw) == "0") {
			fail("%s: totalCards %s", rec, cd.TotalCards.raw)
		}
		nullableStr(rec, "illustrator", cd.Illustrator, false)
		nullableStr(rec, "marketAId", cd.MarketAID, false)
		nullableStr(rec, "marketAPath", cd.MarketAPath, false)
		nullableStr(rec, "marketBId", cd.MarketBID, false)
		nullableStr(rec, "scanFallbackUrl", cd.ScanFallbackURL, true)

		if cardIDs[cd.ID.v] {
			fail("%s: duplicate card id", rec)
		}
		cardIDs[cd.ID.v] = true
		s := setByZC[zc{cd.Zone.v, cd.SetCode.v}]
		if s == nil {
			fail("%s: (zone, setCode) = (%s, %s) names no set", rec, cd.Zone.v, cd.SetCode.v)
			continue
		}
		if cd.SetName.v != s.Name.v {
			fail("%s: setName %q, set's name %q", rec, cd.SetName.v, s.Name.v)
		}
		// Not a snapshot rule, but what the generator promises: year is the
		// set's release year, absent for an undated set.
		if s.ReleasedOn.set != cd.Year.set || (cd.Year.set && string(cd.Year.raw) != s.ReleasedOn.v[:4]) {
			fail("%s: year %s for a set released on %q", rec, cd.Year.raw, s.ReleasedOn.v)
		}
		perSet[s]++
		zs := c.zones[cd.Zone.v]
		zs.Cards++
		c.zones[cd.Zone.v] = zs
	}
	for i := range c.sets {
		s := &c.sets[i]
		if got := fmt.Sprint(perSet[s]); got != string(s.CardCount.raw) {
			fail("set %s: cardCount %s, %s cards", s.ID.v, s.CardCount.raw, got)
		}
	}
	if err := checkLines(data, len(c.sets), len(c.cards)); err != nil {
		fail("%v", err)
	}
	return c, problems
}

// checkLines checks the layout: one record per line, like the real snapshot,
// and member names exactly as docs/CONTRACT.md, Records, spells them (encoding/json matches
// names without regard to case, so the decode above would not notice).
func checkLines(data []byte, nSets, nCards int) error {
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if want := nSets + nCards + 3; len(lines) != want {
		return fmt.Errorf("%d lines, want %d", len(lines), want)
	}
	if lines[0] != `{"sets":[` || lines[nSets+1] != `],"cards":[` || lines[len(lines)-1] != `]}` {
		return fmt.Errorf("frame lines: %q %q %q", lines[0], lines[nSets+1], lines[len(lines)-1])
	}
	for i, l := range lines {
		var keys map[string]bool
		switch {
		case i >= 1 && i <= nSets:
			keys = setKeys
		case i >= nSets+2 && i < len(lines)-1:
			keys = cardKeys
		default:
			continue
		}
		last := i == nSets || i == len(lines)-2
		if strings.HasSuffix(l, ",") == last {
			return fmt.Errorf("line %d: separator: %q", i+1, l)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(strings.TrimSuffix(l, ",")), &m); err != nil {
			return fmt.Errorf("line %d is not one record: %v", i+1, err)
		}
		for k := range m {
			if !keys[k] {
				return fmt.Errorf("line %d: member %q", i+1, k)
			}
		}
	}
	return nil
}

// snapshot20k is the 20,000-card snapshot that several tests look at,
// generated and checked once: decoding it is most of the package's test time.
var snapshot20k = sync.OnceValue(func() (s struct {
	data     []byte
	stats    Stats
	err      error
	c        checked
	problems []string
}) {
	var buf bytes.Buffer
	s.stats, s.err = Write(&buf, Options{Cards: 20000, Seed: 7})
	s.data = buf.Bytes()
	if s.err == nil {
		s.c, s.problems = check(s.data)
	}
	return s
})

func shared20k(t *testing.T) checked {
	t.Helper()
	s := snapshot20k()
	if s.err != nil || len(s.problems) > 0 {
		t.Fatalf("20k snapshot: %v %v", s.err, s.problems)
	}
	return s.c
}

func TestSnapshotValid(t *testing.T) {
	t.Parallel()
	s := snapshot20k()
	if s.err != nil {
		t.Fatal(s.err)
	}
	for i, p := range s.problems {
		if i == 20 {
			t.Errorf("... %d problems in all", len(s.problems))
			break
		}
		t.Error(p)
	}
	if len(s.problems) > 0 {
		t.FailNow()
	}
	c, st := s.c, s.stats

	if st.Sets != len(c.sets) || st.Cards != len(c.cards) || st.Cards != 20000 {
		t.Errorf("stats %d sets / %d cards; snapshot has %d / %d", st.Sets, st.Cards, len(c.sets), len(c.cards))
	}
	// The zone split of the real data: intl 54%, jp 29%, chn 17%.
	for z, want := range map[string]int{"intl": 54, "jp": 29, "chn": 17} {
		if got := c.zones[z].Cards * 100 / len(c.cards); got < want-2 || got > want+2 {
			t.Errorf("zone %s: %d%% of the cards, want about %d%%", z, got, want)
		}
	}

	langs := map[string]map[string]bool{"intl": {"en": true}, "jp": {"ja": true}, "chn": {"zh-tw": true, "zh-cn": true}}
	count := map[string]int{}
	for _, cd := range c.cards {
		if !langs[cd.Zone.v][cd.Language.v] {
			t.Fatalf("%s: language %q in zone %s", cd.ID.v, cd.Language.v, cd.Zone.v)
		}
		count["lang "+cd.Language.v]++
		for f, o := range map[string]opt[string]{"illustrator": cd.Illustrator, "marketAId": cd.MarketAID, "marketAPath": cd.MarketAPath, "marketBId": cd.MarketBID, "scanFallbackUrl": cd.ScanFallbackURL} {
			switch {
			case !o.set:
				count[f+" absent"]++
			case o.null:
				count[f+" null"]++
			default:
				count[f+" value"]++
			}
		}
		switch {
		case !cd.TotalCards.set:
			count["totalCards absent"]++
		case cd.TotalCards.null:
			count["totalCards null"]++
		}
		switch {
		case !cd.Variant.set:
			count["variant absent"]++
		case cd.Variant.v != "standard":
			count["variant other"]++
		}
		if !cd.Rarity.set {
			count["rarity absent"]++
		}
		if !cd.ImageURL.set {
			count["imageUrl absent"]++
		}
		if !cd.Year.set {
			count["year absent"]++
		}
	}
	for _, s := range c.sets {
		if !s.ReleasedOn.set {
			count["set undated"]++
		}
		if string(s.CardCount.raw) == "0" {
			count["set empty"]++
		}
	}
	// Each of these must occur: an importer has to meet all of them.
	for _, k := range []string{
		"lang zh-tw", "lang zh-cn",
		"illustrator null", "illustrator value", "illustrator absent",
		"marketAId null", "marketAId value", "marketAPath null", "marketAPath value",
		"marketBId null", "marketBId value", "scanFallbackUrl null", "scanFallbackUrl value",
		"totalCards null", "totalCards absent", "variant absent", "variant other",
		"rarity absent", "imageUrl absent", "year absent", "set undated", "set empty",
	} {
		if count[k] == 0 {
			t.Errorf("no card or set with %s", k)
		}
	}
	if n := count["variant other"]; n*10 > len(c.cards) {
		t.Errorf("%d of %d cards are not standard printings; most should be", n, len(c.cards))
	}
	t.Logf("%d sets, %d cards, %v", len(c.sets), len(c.cards), count)
}

// TestCheckCatches makes sure the oracle above is not blind: each mutation
// of a valid snapshot breaks one rule, and check must say so.
func TestCheckCatches(t *testing.T) {
	t.Parallel()
	data, _ := generate(t, Options{Cards: 150, Seed: 5})
	if _, problems := check(data); len(problems) > 0 {
		t.Fatalf("valid snapshot rejected: %v", problems)
	}
	var c struct {
		Sets  []map[string]any `json:"sets"`
		Cards []map[string]any `json:"cards"`
	}
	if err := json.Unmarshal(data, &c); err != nil {
		t.Fatal(err)
	}
	firstDated := 0
	for i, s := range c.Sets {
		if s["releasedOn"] != nil && s["cardCount"].(float64) > 0 {
			firstDated = i
			break
		}
	}
	mutations := map[string]func(sets, cards []map[string]any){
		"duplicate card id": func(_, cards []map[string]any) { cards[1]["id"] = cards[0]["id"] },
		"setName mismatch":  func(_, cards []map[string]any) { cards[0]["setName"] = "Elsewhere" },
		"unknown setCode":   func(_, cards []map[string]any) { cards[0]["setCode"] = "nope" },
		"cardCount off": func(sets, _ []map[string]any) {
			sets[firstDated]["cardCount"] = sets[firstDated]["cardCount"].(float64) + 1
		},
		"not a calendar date": func(sets, _ []map[string]any) { sets[firstDated]["releasedOn"] = "2023-02-29" },
		"duplicate set id":    func(sets, _ []map[string]any) { sets[1]["id"], sets[1]["code"] = sets[0]["id"], sets[0]["code"] },
		"null name":           func(_, cards []map[string]any) { cards[0]["name"] = nil },
		"empty number":        func(_, cards []map[string]any) { cards[0]["number"] = "" },
		"unknown member":      func(_, cards []map[string]any) { cards[0]["price"] = 1 },
		"wrong-case member": func(_, cards []map[string]any) {
			cards[0]["ImageURL"] = cards[0]["imageUrl"]
			delete(cards[0], "imageUrl")
		},
		"zero totalCards":   func(_, cards []map[string]any) { cards[0]["totalCards"] = 0 },
		"relative imageUrl": func(_, cards []map[string]any) { cards[0]["imageUrl"] = "/img.png" },
		"null variant":      func(_, cards []map[string]any) { cards[0]["variant"] = nil },
		"bad zone":          func(_, cards []map[string]any) { cards[0]["zone"] = "eu" },
	}
	for name, mutate := range mutations {
		var cp struct {
			Sets  []map[string]any `json:"sets"`
			Cards []map[string]any `json:"cards"`
		}
		_ = json.Unmarshal(data, &cp)
		mutate(cp.Sets, cp.Cards)
		// Re-frame one record per line so that only the mutation differs.
		var b bytes.Buffer
		b.WriteString(`{"sets":[`)
		for i, s := range cp.Sets {
			if i > 0 {
				b.WriteByte(',')
			}
			j, _ := json.Marshal(s)
			b.WriteByte('\n')
			b.Write(j)
		}
		b.WriteString("\n],\"cards\":[")
		for i, s := range cp.Cards {
			if i > 0 {
				b.WriteByte(',')
			}
			j, _ := json.Marshal(s)
			b.WriteByte('\n')
			b.Write(j)
		}
		b.WriteString("\n]}\n")
		if _, problems := check(b.Bytes()); len(problems) == 0 {
			t.Errorf("%s: not detected", name)
		}
	}
}

func TestNumberShapes(t *testing.T) {
	t.Parallel()
	c := shared20k(t)
	shapes := []struct {
		name string
		re   *regexp.Regexp
	}{
		{"plain digits", regexp.MustCompile(`^[1-9][0-9]*$`)},
		{"leading zeros", regexp.MustCompile(`^0[0-9]+$`)},
		{"with /total", regexp.MustCompile(`^[0-9]+[a-z]?/[0-9]+$`)},
		{"letters and digits", regexp.MustCompile(`^[A-Z]+[0-9]+$`)},
		{"digits and a letter", regexp.MustCompile(`^[0-9]+[a-z]$`)},
		{"set code form", regexp.MustCompile(`^[0-9]{3}/[A-Za-z]|^[A-Za-z][A-Za-z0-9.+-]* [0-9]+$`)},
	}
	seen := make([]int, len(shapes))
	for _, cd := range c.cards {
		for i, s := range shapes {
			if s.re.MatchString(cd.Number.v) {
				seen[i]++
			}
		}
	}
	for i, s := range shapes {
		if seen[i] == 0 {
			t.Errorf("no printed number of shape %s", s.name)
		}
	}
	t.Logf("shapes: %v", seen)
}

// TestSearchRealism checks that the names give searches the hit rates of
// the real catalogue within a broad factor: a benchmark that searches
// "pikachu" should do about the work it would do in production.
func TestSearchRealism(t *testing.T) {
	t.Parallel()
	c := shared20k(t)
	// Per mille of all cards in testdata/catalogue-real.json.gz.
	for _, q := range []struct {
		term string
		real float64
	}{
		{"pikachu", 4.7}, {"charizard", 2.85}, {"ピカ", 1.69}, {"皮卡丘", 0.94}, {"ar", 85.6}, {"energy", 15.6},
	} {
		n := 0
		for _, cd := range c.cards {
			if strings.Contains(strings.ToLower(cd.Name.v), q.term) {
				n++
			}
		}
		got := float64(n) * 1000 / float64(len(c.cards))
		if got < q.real/2.5 || got > q.real*2.5 {
			t.Errorf("%q: %.2f‰ of the cards, the real catalogue has %.2f‰", q.term, got, q.real)
		}
	}
}

func TestSmallAndEdgeSizes(t *testing.T) {
	t.Parallel()
	for _, o := range []Options{
		{Cards: 0},
		{Cards: 1},
		{Cards: 2, CardsPerSet: 1},
		{Cards: 7, Seed: 9},
		{Cards: 500, CardsPerSet: 1},
		{Cards: 3000, CardsPerSet: 2000},
	} {
		t.Run(fmt.Sprintf("%d/%d", o.Cards, o.CardsPerSet), func(t *testing.T) {
			data, st := generate(t, o)
			c := validate(t, data)
			if len(c.cards) != o.Cards || st.Cards != o.Cards || st.Sets != len(c.sets) {
				t.Errorf("%d cards in %d sets, stats %+v", len(c.cards), len(c.sets), st)
			}
		})
	}
}

func TestBadOptions(t *testing.T) {
	for _, o := range []Options{{Cards: -1}, {Cards: 10, CardsPerSet: -5}} {
		if _, err := Write(io.Discard, o); err == nil {
			t.Errorf("%+v: no error", o)
		}
	}
}

type failingWriter struct{ left int }

var errFull = errors.New("disk full")

func (f *failingWriter) Write(p []byte) (int, error) {
	if len(p) > f.left {
		n := f.left
		f.left = 0
		return n, errFull
	}
	f.left -= len(p)
	return len(p), nil
}

func TestWriteError(t *testing.T) {
	for _, at := range []int{0, 100, 1 << 20} {
		if _, err := Write(&failingWriter{left: at}, Options{Cards: 20000}); !errors.Is(err, errFull) {
			t.Errorf("failing after %d bytes: err = %v", at, err)
		}
	}
}

func BenchmarkWrite(b *testing.B) {
	o := Options{Cards: 100000, Seed: 1}
	var n int64
	for b.Loop() {
		cw := &countingWriter{}
		if _, err := Write(cw, o); err != nil {
			b.Fatal(err)
		}
		n = cw.n
	}
	b.SetBytes(n)
	b.ReportMetric(float64(o.Cards)*float64(b.N)/b.Elapsed().Seconds(), "cards/s")
}

type countingWriter struct{ n int64 }

func (c *countingWriter) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	return len(p), nil
}
