package build

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/catalogd/catalogd/catalog"
)

// The references of cards read before their sets are counted per
// reference, returned once every set is known when no set matches them, and
// never left in the finished file.
func TestDeferredSetReferences(t *testing.T) {
	// Transactions of every size: a commit may come between the cards of
	// one reference, or while a reference is put.
	for _, commitAt := range []int{1, 100, 250, 400, 700, 1000, 1 << 20} {
		t.Run(fmt.Sprint(commitAt), func(t *testing.T) { testDeferredSetReferences(t, commitAt) })
	}
}

func testDeferredSetReferences(t *testing.T, commitAt int) {
	path := filepath.Join(t.TempDir(), "catalog.db")
	w := createCommitting(t, path, commitAt)
	defer w.Abort()
	long := strings.Repeat("Sea ", 10_000)
	note := func(s string) func([]byte) []byte {
		return func(dst []byte) []byte { return append(dst, s...) }
	}
	refs := []struct{ zone, code, name, note string }{
		{catalog.ZoneJP, "A", "Other", "first A"},
		{catalog.ZoneJP, "A", "Other", "second A"},
		{catalog.ZoneJP, "A", "Other", "third A"},
		{catalog.ZoneIntl, "B", "Bee", "first B"},
		{catalog.ZoneJP, "A", "Other", "fourth A"},
		{catalog.ZoneJP, "C", "Sea", "first C"},
		{catalog.ZoneIntl, "B", "Bee", "second B"},
		{catalog.ZoneJP, "C", long, "long C"}, // longer than a key may be
		{catalog.ZoneJP, "C", long, "long C again"},
	}
	for i, r := range refs {
		if err := w.DeferSetCheck(r.zone, r.code, r.name, note(r.note)); err != nil {
			t.Fatal(err)
		}
		if err := w.AddCard(card(fmt.Sprint(i), r.zone, r.code, r.name, fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range []catalog.Set{{ID: "jp-A", Code: "A", Name: "Ay", Zone: catalog.ZoneJP}, {ID: "jp-C", Code: "C", Name: "Sea", Zone: catalog.ZoneJP}} {
		if err := w.AddSet(s); err != nil {
			t.Fatal(err)
		}
	}
	// Then many cards of references that come back, in runs of one to
	// four cards: each is counted whatever the commits between them.
	rng := rand.New(rand.NewPCG(uint64(commitAt), 1))
	codes := []string{"D", "E", "F", "G", "H"}
	firstOf, count, firstNote := map[string]int{}, map[string]int{}, map[string]string{}
	for i := len(refs); i < 400; {
		code := codes[rng.IntN(len(codes))]
		for range 1 + rng.IntN(4) {
			if _, ok := firstOf[code]; !ok {
				firstOf[code] = len(firstOf) + 4 // after A, B, C and the long C
				firstNote[code] = fmt.Sprint("card ", i)
			}
			count[code]++
			if err := w.DeferSetCheck(catalog.ZoneCHN, code, "Set "+code, note(fmt.Sprint("card ", i))); err != nil {
				t.Fatal(err)
			}
			if err := w.AddCard(card(fmt.Sprint(i), catalog.ZoneCHN, code, "Set "+code, fmt.Sprint(i))); err != nil {
				t.Fatal(err)
			}
			i++
		}
	}
	var got []string
	err := w.CheckSetRefs(func(p *SetRefProblem) error {
		got = append(got, fmt.Sprintf("%s %s %q known %v %q first %d more %d note %q", p.Zone, p.Code, p.SetName, p.Known, p.KnownName, p.First, p.More, p.Note))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`intl B "Bee" known false "" first 1 more 1 note "first B"`,
		`jp A "Other" known true "Ay" first 0 more 3 note "first A"`,
		fmt.Sprintf(`jp C %q known true "Sea" first 3 more 1 note "long C"`, long),
	}
	for _, code := range codes {
		if count[code] > 0 {
			want = append(want, fmt.Sprintf(`chn %s "Set %s" known false "" first %d more %d note %q`, code, code, firstOf[code], count[code]-1, firstNote[code]))
		}
	}
	slices.Sort(got) // in no particular order
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if err := w.CheckSetRefs(func(p *SetRefProblem) error { return fmt.Errorf("%s again", p.Code) }); err != nil {
		t.Errorf("the references are not forgotten: %v", err)
	}

	// References deferred after the check, and never checked, are not
	// left in the file either.
	if err := w.DeferSetCheck(catalog.ZoneCHN, "D", "Dee", note("D")); err != nil {
		t.Fatal(err)
	}
	db := finishAndOpen(t, w, path)
	sizes, err := db.Sizes()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := sizes[string(bucketSetRefs)]; ok {
		t.Errorf("the finished file keeps the bucket %s", bucketSetRefs)
	}
}
