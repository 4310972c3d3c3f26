package build

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"
	"unicode/utf8"

	"github.com/catalogd/catalogd/catalog/store/internal/layout"
)

// TestPackedGramKeys checks that each gram's packed form gives back its
// list key: a gram whose key came out wrong would silently find nothing.
func TestPackedGramKeys(t *testing.T) {
	for _, gram := range []string{"a", "ピ", "pi", "ピカ", "𝔸b", "pik", "皮卡丘", "\U0010FFFFa\U0010FFFF"} {
		n := utf8.RuneCountInString(gram)
		packed, ok := packChars([]byte(gram))
		if !ok {
			t.Fatalf("packChars(%q) refused a valid gram", gram)
		}
		if got, want := appendPackedKey(nil, packed), layout.AppendListKey(nil, layout.GramKinds[n], gram); !bytes.Equal(got, want) {
			t.Errorf("gram %q: packed key %q, want %q", gram, got, want)
		}
	}
	if _, ok := packChars([]byte{'a', 0xff}); ok {
		t.Error("packChars took invalid UTF-8")
	}
}

// TestPostingPartsAgreeWithOneBuilder builds the lists of random cards
// (names of several scripts, with runs, numbers and sets that repeat) in
// the two parts the import uses and in one builder, both in memory small
// enough to spill, and requires every list, in key order, with the same
// ordinals: the parts' keys never meet and the early part's come first.
func TestPostingPartsAgreeWithOneBuilder(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	letters := []rune("ab1ピカ皮 ")
	// Name groups, some of whose grams are common enough for lists of
	// their own: each builder is given its own copy, for eachKey keeps a
	// key of its own.
	texts := []string{"pika pikachu", "ピカチュウ pikachu", "皮卡丘", "ab ab"}
	groups := func() *groupLists {
		g := &groupLists{texts: texts, common: map[string]struct{}{}}
		for _, gram := range []string{"pi", "ik", "a", "ピカ", "ab "} {
			n := utf8.RuneCountInString(gram)
			g.common[string(layout.AppendListKey(nil, layout.GroupGramKinds[n], gram))] = struct{}{}
		}
		return g
	}
	var entries [][]byte
	for i := range 3000 {
		name := make([]rune, 3+rng.IntN(12))
		for j := range name {
			name[j] = letters[rng.IntN(len(letters))]
		}
		if i%50 == 0 {
			name = []rune("8888888 aaaaa")
		}
		var e []byte
		e = append(e, byte(rng.IntN(3)))
		var ids []byte
		for g := range len(texts) {
			if rng.IntN(3) == 0 {
				ids = binary.AppendUvarint(ids, uint64(g))
			}
		}
		for _, field := range []string{fmt.Sprint("id", i), fmt.Sprint("S", rng.IntN(7)), fmt.Sprint(rng.IntN(40)), string(ids)} {
			e = binary.AppendUvarint(e, uint64(len(field)))
			e = append(e, field...)
		}
		e = binary.AppendUvarint(e, uint64(len(string(name))))
		entries = append(entries, append(e, string(name)...))
	}
	small := DefaultLimits()
	small.Postings = 8 << 10
	w, err := CreateWith(filepath.Join(t.TempDir(), "c.db"), small)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	one := w.newPostings()
	one.groups = groups()
	defer one.close()
	parts := w.startPostings(groups())
	defer parts.close()
	for i, entry := range entries {
		e, err := layout.DecodeIndexEntry(entry)
		if err != nil {
			t.Fatal(err)
		}
		if err := one.addCard(uint32(i), &e); err != nil {
			t.Fatal(err)
		}
		if err := parts.add(uint32(i), entry); err != nil {
			t.Fatal(err)
		}
	}
	if err := parts.done(); err != nil {
		t.Fatal(err)
	}
	// Each list, whole: a builder's chunks of a list depend on when it
	// spilled.
	lists := func(each func(fn func(key []byte, c *postingChunk) error) error) []string {
		var out []string
		var last []byte
		err := each(func(key []byte, c *postingChunk) error {
			if !bytes.Equal(key, last) {
				out = append(out, fmt.Sprintf("%q:", key))
				last = append(last[:0], key...)
			}
			ord := c.first
			ords := fmt.Sprint(" ", ord)
			for d := c.deltas; len(d) > 0; {
				delta, n := binary.Uvarint(d)
				ord += uint32(delta)
				ords += fmt.Sprint(" ", ord)
				d = d[n:]
			}
			out[len(out)-1] += ords
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	want := lists(one.each)
	got := append(lists(parts.parts[0].each), lists(parts.parts[1].each)...)
	if len(one.runs.files) < 2 || len(parts.parts[0].runs.files) < 2 || len(parts.parts[1].runs.files) < 2 {
		t.Fatalf("runs %d, %d and %d: the builders did not spill", len(one.runs.files), len(parts.parts[0].runs.files), len(parts.parts[1].runs.files))
	}
	if !slices.Equal(got, want) {
		t.Fatalf("the parts give %d lists, one builder %d, or other ones", len(got), len(want))
	}
}

// TestPostingPartsSplitKinds pins every kind of list a card is added to
// on one side of the split: the early part's keys must all come before
// the late part's, which are written after them.
func TestPostingPartsSplitKinds(t *testing.T) {
	early := []byte{layout.PostingRune, layout.PostingGram, layout.PostingNumber, layout.PostingRun, layout.PostingGroup}
	early = append(early, layout.GroupGramKinds[1:]...)
	late := []byte{layout.PostingSet, layout.PostingTrigram}
	for part, kinds := range map[int][]byte{partEarly: early, partLate: late} {
		b := postingBuilder{part: part}
		for _, kind := range slices.Concat(early, late) {
			if want := slices.Contains(kinds, kind); b.keeps(kind) != want {
				t.Errorf("part %d keeps kind %q: %v, want %v", part, kind, !want, want)
			}
		}
	}
	if slices.Max(early) >= slices.Min(late) {
		t.Errorf("an early kind, up to %q, does not come before every late one, from %q", slices.Max(early), slices.Min(late))
	}
}
