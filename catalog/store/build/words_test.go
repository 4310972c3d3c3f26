package build

import (
	"maps"
	"math/rand/v2"
	"testing"
	"unicode/utf8"

	"github.com/blevesearch/vellum"
	"github.com/catalogd/catalogd/catalog/store/internal/layout"
)

// TestWordPiecesHoldEveryWord builds the dictionary's pieces from words
// sorted in a kilobyte, so that the sort spills and merges, and reads
// every piece back: the forward pieces hold each word once, under its
// script, and the backward pieces each long word written from its end.
func TestWordPiecesHoldEveryWord(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	alphabets := [][]rune{[]rune("abcø"), []rune("アイウ"), []rune("皮卡丘")}
	dir := t.TempDir()
	forward, backward := newSorter(dir, 1<<10), newSorter(dir, 1<<10)
	defer forward.close()
	defer backward.close()
	wantForward, wantBackward := map[string]bool{}, map[string]bool{}
	for range 3000 {
		letters := alphabets[rng.IntN(len(alphabets))]
		w := make([]rune, 4+rng.IntN(6))
		for i := range w {
			w[i] = letters[rng.IntN(len(letters))]
		}
		word := []byte(string(w))
		if err := addWords(forward, backward, word); err != nil {
			t.Fatal(err)
		}
		script := string(rune(wordScript(word)))
		wantForward[script+string(word)] = true
		if utf8.RuneCount(word) >= minBackwardWord {
			wantBackward[script+string(layout.AppendReversed(nil, word))] = true
		}
	}
	for _, side := range []struct {
		name string
		s    *sorter
		want map[string]bool
	}{{"forward", forward, wantForward}, {"backward", backward, wantBackward}} {
		got := map[string]bool{}
		err := buildWordPieces(side.s, func(script byte, piece []byte) bool {
			fst, err := vellum.Load(piece)
			if err != nil {
				t.Fatal(err)
			}
			it, err := fst.Iterator(nil, nil)
			for err == nil {
				word, _ := it.Current()
				if got[string(rune(script))+string(word)] {
					t.Errorf("%s: %q in two pieces", side.name, word)
				}
				got[string(rune(script))+string(word)] = true
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
		if !maps.Equal(got, side.want) {
			t.Errorf("%s pieces hold %d words, want %d", side.name, len(got), len(side.want))
		}
	}
	if len(wantBackward) == 0 {
		t.Fatal("no word is long enough for a backward piece")
	}
}
