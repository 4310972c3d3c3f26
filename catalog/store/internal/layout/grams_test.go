package layout

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// EachShortGram gives, in one pass, the grams eachGram gives for one, two
// and three characters.
func TestEachShortGramAgreesWithEachGram(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	alphabet := []rune("ab ピカ丘 é\u0301")
	for range 2000 {
		text := randomText(rng, alphabet, 12)
		var want, got []string
		for n := 1; n <= 3; n++ {
			EachGram([]byte(string(text)), n, func(gram []byte) { want = append(want, string(gram)) })
		}
		EachShortGram([]byte(string(text)), func(n int, gram []byte) {
			if c := len([]rune(string(gram))); c != n {
				t.Errorf("%q: gram %q given as %d characters", string(text), gram, n)
			}
			got = append(got, string(gram))
		})
		slices.Sort(want)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Fatalf("%q: got %q, want %q", string(text), got, want)
		}
	}
}

func randomText(rng *rand.Rand, alphabet []rune, max int) []rune {
	text := make([]rune, rng.IntN(max))
	for i := range text {
		text[i] = alphabet[rng.IntN(len(alphabet))]
	}
	return text
}
