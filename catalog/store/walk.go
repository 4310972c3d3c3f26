package store

// The walk of posting lists, as the import stores them
// (internal/layout/postings.go, build/postings.go): a list read a block
// at a time, intersections and unions of lists, and the windowed
// intersection of long lists (docs/SEARCH.md, How a query is answered).

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/bits"
	"slices"

	"github.com/catalogd/catalogd/catalog/store/internal/layout"
	bolt "go.etcd.io/bbolt"
)

// ordinals walks a list of ordinals in increasing order.
type ordinals interface {
	// seek returns the first ordinal of the list that is at least min. It
	// never moves backwards: asking again with the same or a smaller min
	// gives the same answer.
	seek(min uint32) (uint32, bool)
	// fill sets, in window, the bit of each ordinal of the list from lo
	// to lo+n-1, bit i for ordinal lo+i, and leaves the list at the first
	// ordinal past them. lo and n are multiples of 64, n at most
	// windowSize. Ordinals below the last min the list was sought with
	// may be set too, if lo is below it: the walk never looks at them. It
	// reports whether it set any.
	fill(lo, n uint32, window *bitWindow, spare *spareWindows) bool
	// bound returns an ordinal from min up to the first the list has at
	// or above min, without walking the list to find that one: for an
	// intersection, the largest of its lists' bounds. It is false when
	// the list has no ordinal at or above min. A bound that is min itself
	// is on the list: a list read as stored has exact bounds, an
	// intersection's is min only when each of its lists' is, a union's
	// when one of its lists' is.
	bound(min uint32) (uint32, bool)
}

// seekBelow returns the first ordinal of o from min up to hi, hi not
// included, in rounds of bounds: a zone's walk stops where its zone
// does, rather than walk its lists through the zones after it to find
// that they share no card there, and an intersection within a union
// within o (a term's gram lists, beside its number's and its groups')
// takes a round a turn rather than walk to the next card its own lists
// share, which the others may pass anyway. It takes at most rounds
// rounds, 0 for as many as it takes: met is false when they ran out
// first, and ord is then where the walk stands, below hi, with no
// ordinal of o from min up to it. ok is false when o has none below hi.
func seekBelow(o ordinals, min, hi uint32, rounds int) (ord uint32, met, ok bool) {
	for round := 1; min < hi; round++ {
		b, ok := o.bound(min)
		if !ok || b >= hi {
			break
		}
		if b == min {
			return b, true, true
		}
		if min = b; round == rounds {
			return min, false, true
		}
	}
	return 0, false, false
}

// windowSize is the most ordinals a windowed intersection takes at once.
const windowSize = 1 << 14

// bitWindow holds a bit for each ordinal of a window.
type bitWindow [windowSize / 64]uint64

// spareWindows lends the windows an intersection fills its lists into, so
// that a walk allocates them once.
type spareWindows []*bitWindow

func (s *spareWindows) get() *bitWindow {
	if len(*s) == 0 {
		return new(bitWindow)
	}
	w := (*s)[len(*s)-1]
	*s = (*s)[:len(*s)-1]
	return w
}

func (s *spareWindows) put(w *bitWindow) { *s = append(*s, w) }

// storedList reads a list as stored, a block at a time, through a cursor
// of its own: a walk mostly wants the next block, a step along the leaf
// where a seek would descend from the root.
type storedList struct {
	pool   *cursorPool
	c      *bolt.Cursor // from pool, at the first load
	key    []byte       // of the list
	inline bool         // the list is its one block, held in data from the start
	bkey   []byte

	data    []byte // of the block loaded: deltas not yet decoded, or its bitmap
	bitmap  bool   // the block loaded is a bitmap
	base    uint32 // of the bitmap: its first ordinal
	last    uint32 // of the block loaded
	cur     uint32
	loaded  bool
	started bool // cur is an ordinal of the block loaded
	done    bool

	inOrder          int     // blocks loaded in a row, each the next (readAhead)
	readFrom, readTo uintptr // the addresses the kernel was last asked to read
}

// listRef names a stored list, gives its length and, for a short list,
// holds it (valid for the transaction it was read in).
type listRef struct {
	key    []byte
	count  uint64
	inline []byte
}

// readListRef reads the list stored under key; it is empty when there is
// none, and an error when its length is not a number (a damaged file).
func readListRef(c *bolt.Cursor, key []byte) (listRef, error) {
	l := listRef{key: slices.Clone(key)}
	k, v := c.Seek(key)
	if !bytes.Equal(k, key) {
		return l, nil
	}
	n, w := binary.Uvarint(v)
	if w <= 0 {
		return l, damagef("search index damaged: list %q: its length is not a number; import the catalogue again", key)
	}
	l.count = n
	if n <= layout.PostingBlockSize {
		l.inline = v[w:]
	}
	return l, nil
}

// newList returns a reader of the list l, which takes a cursor from pool
// if it needs one, and records in pool what it finds damaged.
func newList(pool *cursorPool, l listRef) storedList {
	if l.count <= layout.PostingBlockSize {
		return storedList{pool: pool, key: l.key, data: l.inline, last: math.MaxUint32, inline: true, loaded: true, done: l.count == 0}
	}
	return storedList{pool: pool, key: l.key}
}

func (l *storedList) seek(min uint32) (uint32, bool) {
	for !l.done {
		if l.started && l.cur >= min {
			return l.cur, true
		}
		if !l.loaded || (min > l.last && !l.inline) {
			l.load(min)
			continue
		}
		if l.bitmap {
			from := min
			if l.started {
				from = max(min, l.cur+1) // cur < min here, so cur+1 is no overflow
			}
			ord, ok := nextBit(l.data, l.base, from)
			if !ok {
				l.damage("a bitmap ends below its block's last ordinal")
				break
			}
			l.cur, l.started = ord, true
			continue
		}
		if len(l.data) == 0 {
			// A list held whole is over; a block has ended below its own
			// last ordinal.
			if !l.inline {
				l.damage("a block ends below its last ordinal")
			}
			l.done = true
			break
		}
		d, w := binary.Uvarint(l.data)
		if w <= 0 {
			l.damage("a delta is not a number")
			break
		}
		l.data = l.data[w:]
		if l.started {
			l.cur += uint32(d)
		} else {
			l.cur, l.started = uint32(d), true
		}
	}
	return 0, false
}

func (l *storedList) fill(lo, n uint32, window *bitWindow, _ *spareWindows) bool {
	ord, ok := l.seek(lo)
	if !ok || ord-lo >= n {
		return false
	}
	for ok && ord-lo < n {
		if l.bitmap {
			// Every word of the bitmap within the window, whole: the
			// window and the bitmap both start at a multiple of 64, and
			// bits below ord are of ordinals no walk asks for again.
			start, end := uint64(max(l.base, lo)), min(uint64(l.base)+layout.BitmapSpan, uint64(lo)+uint64(n))
			dst := window[(start-uint64(lo))/64 : (end-uint64(lo))/64]
			src := l.data[(start-uint64(l.base))/8:]
			src = src[:8*len(dst)]
			for i := range dst {
				dst[i] |= binary.LittleEndian.Uint64(src[:8])
				src = src[8:]
			}
			if end > math.MaxUint32 {
				break
			}
			ord, ok = l.seek(uint32(end))
			continue
		}
		// The rest of the block, while its deltas take one or two bytes
		// each, as they do in a list dense enough for windows (at least
		// one ordinal in denseFraction): a tight loop on locals.
		data, cur := l.data, ord
		for {
			i := cur - lo
			window[i/64] |= 1 << (i % 64)
			if len(data) == 0 {
				break
			}
			if d := data[0]; d < 0x80 {
				cur, data = cur+uint32(d), data[1:]
			} else if len(data) > 1 && data[1] < 0x80 {
				cur, data = cur+(uint32(d&0x7f)|uint32(data[1])<<7), data[2:]
			} else {
				break
			}
			if cur-lo >= n {
				break
			}
		}
		l.data, l.cur = data, cur
		if cur-lo >= n || cur == math.MaxUint32 {
			break // the list stands at its first ordinal past the window
		}
		ord, ok = l.seek(cur + 1)
	}
	return true
}

// load loads the block that holds the first ordinal at or above min: the
// first whose last ordinal is at or above it.
func (l *storedList) load(min uint32) {
	var k, v []byte
	if l.c == nil {
		l.c = l.pool.get()
	} else if l.loaded {
		// The next block, if it is the one.
		if k, v = l.c.Next(); l.ofList(k) && binary.BigEndian.Uint32(k[len(l.key):]) < min {
			k = nil
		} else if l.ofList(k) {
			l.readAhead(v)
		}
	}
	if k == nil {
		l.bkey = binary.BigEndian.AppendUint32(append(l.bkey[:0], l.key...), min)
		k, v = l.c.Seek(l.bkey)
		l.inOrder = 0
	}
	if !l.ofList(k) {
		l.done = true
		return
	}
	l.last = binary.BigEndian.Uint32(k[len(l.key):])
	l.loaded, l.started = true, false
	switch {
	case len(v) > 0 && v[0] == layout.BlockDeltas:
		l.data, l.bitmap = v[1:], false
	case len(v) == layout.BitmapBlockLen && v[0] == layout.BlockBitmap:
		l.base, l.data, l.bitmap = binary.BigEndian.Uint32(v[1:]), v[5:], true
	default:
		l.damage("a block of no known kind")
	}
}

// damage ends the list, which is not as the import writes lists, and
// records why in its pool for the call to fail with.
func (l *storedList) damage(what string) {
	l.done = true
	if l.pool != nil && l.pool.damaged == nil {
		l.pool.damaged = damagef("search index damaged: list %q: %s; import the catalogue again", l.key, what)
	}
}

// nextBit returns the first ordinal at or above from that the bitmap
// block starting at base holds.
func nextBit(words []byte, base, from uint32) (uint32, bool) {
	i := uint32(0)
	if from > base {
		i = from - base
	}
	for i < layout.BitmapSpan {
		if w := binary.LittleEndian.Uint64(words[i/64*8:]) >> (i % 64); w != 0 {
			return base + i + uint32(bits.TrailingZeros64(w)), true
		}
		i = (i/64 + 1) * 64
	}
	return 0, false
}

// ofList reports whether k is the key of a block of the list.
func (l *storedList) ofList(k []byte) bool {
	return len(k) == len(l.key)+4 && bytes.HasPrefix(k, l.key)
}

// intersection walks the ordinals on every one of its lists.
type intersection []ordinals

func (in intersection) seek(min uint32) (uint32, bool) {
	for {
		agreed := true
		for _, l := range in {
			v, ok := l.seek(min)
			if !ok {
				return 0, false
			}
			if v > min {
				min, agreed = v, false
			}
		}
		if agreed {
			return min, true
		}
	}
}

func (l *storedList) bound(min uint32) (uint32, bool) { return l.seek(min) }

func (in intersection) bound(min uint32) (uint32, bool) {
	for _, l := range in {
		v, ok := l.bound(min)
		if !ok {
			return 0, false
		}
		min = max(min, v)
	}
	return min, true
}

func (u union) bound(min uint32) (uint32, bool) {
	best, found := uint32(0), false
	for _, l := range u {
		if v, ok := l.bound(min); ok && (!found || v < best) {
			best, found = v, true
		}
	}
	return best, found
}

// bound takes one window at most: the first ordinal of every list in the
// window from min on, or the window's end when it has none, on no list
// before it.
func (w *windowed) bound(min uint32) (uint32, bool) {
	ord, _, ok := w.step(min)
	return ord, ok
}

func (in intersection) fill(lo, n uint32, window *bitWindow, spare *spareWindows) bool {
	acc, other := spare.get(), spare.get()
	defer spare.put(acc)
	defer spare.put(other)
	words := int(n+63) / 64
	clear(acc[:words])
	if !in[0].fill(lo, n, acc, spare) {
		return false
	}
	for _, l := range in[1:] {
		clear(other[:words])
		if !l.fill(lo, n, other, spare) {
			return false
		}
		any := uint64(0)
		for i := range words {
			acc[i] &= other[i]
			any |= acc[i]
		}
		if any == 0 {
			return false
		}
	}
	for i := range words {
		window[i] |= acc[i]
	}
	return true
}

// windowed walks an intersection a window of ordinals at a time: every list
// sets the bits of its ordinals in the window, in a tight loop, and the
// windows are ANDed. When the lists are long and meet rarely, this reads
// each of their ordinals once for a few nanoseconds, where a leapfrog pays
// a seek of every list for each.
type windowed struct {
	in     intersection
	lo     uint32 // of the window held
	size   uint32 // of the window held
	next   uint32 // of the window after, growing to windowSize
	held   bool
	empty  bool // the window held has no bit set
	window bitWindow
	spare  spareWindows
}

// firstWindowSize is the size of a walk's first window: a common query
// finds its first results near the start, so its first window is small,
// and each window after a sparse one is twice as large.
const firstWindowSize = 1 << 10

func (w *windowed) seek(from uint32) (uint32, bool) {
	for {
		ord, found, ok := w.step(from)
		if found || !ok {
			return ord, ok
		}
		from = ord
	}
}

// step returns the first ordinal of every list from from on in the window
// held, once it has filled the next window if from is past it. found is
// false when the window has none, and ord is then its end.
func (w *windowed) step(from uint32) (ord uint32, found, ok bool) {
	if w.held && from < w.lo {
		from = w.lo // nothing before the window is on every list
	}
	if !w.held || from-w.lo >= w.size {
		// The next window starts where every list has an ordinal left:
		// one seek each, where finding the first ordinal they share
		// would be the walk this avoids. It starts at a multiple of 64,
		// as the bitmaps of the lists do, so that their words are ORed
		// whole; the bits below from are not looked at.
		lo, ok := w.in.bound(from)
		if !ok {
			return 0, false, false
		}
		lo &^= 63
		w.size = max(firstWindowSize, min(w.next, windowSize))
		clear(w.window[:])
		w.empty = !w.in.fill(lo, w.size, &w.window, &w.spare)
		w.lo, w.held, from = lo, true, max(from, lo)
	}
	for i := from - w.lo; i < w.size && !w.empty; {
		if word := w.window[i/64] >> (i % 64); word != 0 {
			return w.lo + i + uint32(bits.TrailingZeros64(word)), true, true
		}
		i = (i/64 + 1) * 64
	}
	end := w.lo + w.size
	if end < w.lo {
		return 0, false, false // the window ended at the last ordinal
	}
	w.next = 2 * w.size
	return end, false, true
}

func (w *windowed) fill(lo, n uint32, window *bitWindow, spare *spareWindows) bool {
	return w.in.fill(lo, n, window, spare)
}

// union walks the ordinals on any of its lists.
type union []ordinals

func (u union) seek(min uint32) (uint32, bool) {
	best, found := uint32(0), false
	for _, l := range u {
		if v, ok := l.seek(min); ok && (!found || v < best) {
			best, found = v, true
		}
	}
	return best, found
}

func (u union) fill(lo, n uint32, window *bitWindow, spare *spareWindows) bool {
	set := false
	for _, l := range u {
		set = l.fill(lo, n, window, spare) || set
	}
	return set
}
