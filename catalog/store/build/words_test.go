package build

import (
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
	"unicode/utf8"

	"github.com/blevesearch/vellum"
	"github.com/catalogd/catalogd/catalog/store/internal/layout"
)

// TestWordPiecesHoldEveryWord builds the dictionary's pieces from words
// sorted in a kilobyte, so that the sort spills and merges, and reads
// every piece back: the forward pieces hold each word once, under its
// script, and the backward pieces each long word written from its end;
// each with the value of its cards: those that hold it when they are at
// most layout.MaxWordCards and no name group's text does, else 0.
func TestWordPiecesHoldEveryWord(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	alphabets := [][]rune{[]rune("abcø"), []rune("アイウ"), []rune("皮卡丘")}
	dir := t.TempDir()
	forward, backward := newSorter(dir, 1<<10), newSorter(dir, 1<<10)
	defer forward.close()
	defer backward.close()
	cardsOf := map[string]map[uint32]bool{} // by word
	var words [][]byte
	for card := range uint32(3000) {
		var word []byte
		if len(words) > 0 && rng.IntN(3) == 0 {
			word = words[rng.IntN(len(words))] // on another card too
		} else {
			letters := alphabets[rng.IntN(len(alphabets))]
			w := make([]rune, 4+rng.IntN(6))
			for i := range w {
				w[i] = letters[rng.IntN(len(letters))]
			}
			word = []byte(string(w))
			words = append(words, word)
		}
		if rng.IntN(20) == 0 {
			card = layout.GroupWord
		}
		text := word
		if rng.IntN(10) == 0 {
			text = append(append(slices.Clone(word), ' '), word...) // twice on one card
		}
		if err := addWords(forward, backward, text, card); err != nil {
			t.Fatal(err)
		}
		if cardsOf[string(word)] == nil {
			cardsOf[string(word)] = map[uint32]bool{}
		}
		cardsOf[string(word)][card] = true
	}
	wantForward, wantBackward := map[string]uint64{}, map[string]uint64{}
	for word, cards := range cardsOf {
		var value uint64
		if ords := slices.Sorted(maps.Keys(cards)); len(ords) <= layout.MaxWordCards && !cards[layout.GroupWord] {
			value = layout.WordValue(ords)
		}
		script := string(rune(wordScript([]byte(word))))
		wantForward[script+word] = value
		if utf8.RuneCountInString(word) >= minBackwardWord {
			wantBackward[script+string(layout.AppendReversed(nil, []byte(word)))] = value
		}
	}
	for _, side := range []struct {
		name string
		s    *sorter
		want map[string]uint64
	}{{"forward", forward, wantForward}, {"backward", backward, wantBackward}} {
		got := map[string]uint64{}
		err := buildWordPieces(side.s, func(script byte, piece []byte) bool {
			fst, err := vellum.Load(piece)
			if err != nil {
				t.Fatal(err)
			}
			it, err := fst.Iterator(nil, nil)
			for err == nil {
				word, value := it.Current()
				if _, ok := got[string(rune(script))+string(word)]; ok {
					t.Errorf("%s: %q in two pieces", side.name, word)
				}
				got[string(rune(script))+string(word)] = value
				err = it.Next()
			}
			if err != vellum.ErrIteratorDone {
				t.Fatal(err)
			}
			return true
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(side.want) {
			t.Errorf("%s pieces hold %d words, want %d", side.name, len(got), len(side.want))
		}
		for word, want := range side.want {
			if got[word] != want {
				t.Errorf("%s: %q has value %#x, want %#x", side.name, word, got[word], want)
			}
		}
	}
	if len(wantBackward) == 0 {
		t.Fatal("no word is long enough for a backward piece")
	}
	named := 0
	for _, v := range wantForward {
		if _, n, _ := layout.WordCards(v); n > 0 {
			named++
		}
	}
	if named == 0 || named == len(wantForward) {
		t.Fatalf("%d words of %d name their cards: the test needs both kinds", named, len(wantForward))
	}
}
