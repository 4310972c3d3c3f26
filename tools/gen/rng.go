package gen

import "math/bits"

// rng is SplitMix64. The generator has its own rather than math/rand so that
// a seed gives the same bytes with every Go release: the standard library
// does not promise its streams (nor its float-based helpers) stay put.
type rng struct{ s uint64 }

func newRNG(seed uint64) *rng { return &rng{s: seed} }

func (r *rng) next() uint64 {
	r.s += 0x9e3779b97f4a7c15
	z := r.s
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// uint64n returns a value in [0, n) by Lemire's multiply-shift; the bias is
// below 2^-40 for every n used here, far under anything a benchmark notices.
func (r *rng) uint64n(n uint64) uint64 {
	hi, _ := bits.Mul64(r.next(), n)
	return hi
}

func (r *rng) intn(n int) int {
	if n <= 0 {
		return 0
	}
	return int(r.uint64n(uint64(n)))
}

// mil reports true with probability p/1000.
func (r *rng) mil(p int) bool { return r.intn(1000) < p }

// mix derives independent streams (one per set) from the user's seed, so a
// set's cards do not depend on how many draws the sets before it made.
func mix(a, b uint64) uint64 {
	r := rng{s: a ^ bits.RotateLeft64(b, 32) ^ 0x6a09e667f3bcc909}
	r.next()
	return r.next()
}
