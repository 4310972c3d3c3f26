package catalog

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestSorter(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	for _, limit := range []int{4 << 10, 64 << 10, 16 << 20} {
		t.Run(fmt.Sprint(limit), func(t *testing.T) {
			s := newSorter(t.TempDir(), limit)
			defer s.close()
			var want []string
			for i := range 5000 {
				// Keys that share their first eight bytes, and keys shorter
				// than eight bytes.
				key := fmt.Sprintf("%0*d", 1+rng.IntN(12), rng.IntN(1_000_000))
				key += fmt.Sprintf("#%d", i)
				value := fmt.Sprintf("v%d", rng.IntN(1000))
				if rng.IntN(10) == 0 {
					value = ""
				}
				want = append(want, key+"="+value)
				if err := s.add([]byte(key), []byte(value)); err != nil {
					t.Fatal(err)
				}
			}
			slices.Sort(want)
			var got []string
			err := s.each(func(key, value []byte) error {
				got = append(got, string(key)+"="+string(value))
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("%d entries out of order or lost; %d runs", len(got), len(s.runs))
			}
			if limit < 64<<10 && len(s.runs) < 2 {
				t.Errorf("limit %d: %d runs, want spills", limit, len(s.runs))
			}
		})
	}
}
