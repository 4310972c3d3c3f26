package layout

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// EachShortGram gives, in one pass, the grams EachGram gives for one, two
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

// TestGrams checks the runs of characters names are indexed by.
func TestGrams(t *testing.T) {
	grams := func(text string, n int) []string {
		var got []string
		EachGram([]byte(text), n, func(g []byte) { got = append(got, string(g)) })
		return got
	}
	for _, c := range []struct {
		text string
		n    int
		want []string
	}{
		{"pika chu", 1, []string{"p", "i", "k", "a", "c", "h", "u"}},
		{"pika chu", 2, []string{"pi", "ik", "ka", "ch", "hu"}},
		{"pika chu", 3, []string{"pik", "ika", "chu"}},
		{"ピカチュウ 皮卡丘", 3, []string{"ピカチ", "カチュ", "チュウ", "皮卡丘"}},
		{"ab", 3, nil},
		{"a b c", 2, nil},
	} {
		if got := grams(c.text, c.n); !slices.Equal(got, c.want) {
			t.Errorf("grams of %q, %d: got %q, want %q", c.text, c.n, got, c.want)
		}
	}
}
