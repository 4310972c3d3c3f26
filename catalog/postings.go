package catalog

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/bits"
	"os"
	"slices"
	"strings"
	"unicode/utf8"

	bolt "go.etcd.io/bbolt"
)

// The search index has two parts (see layout.go). The numbers bucket holds
// one entry per card, found by its ordinal: its position in the order zone,
// printed-number key, id. A zone is a range of ordinals, and within it
// ordinals are in result order. The postings bucket maps a trigram of
// folded names, a bigram, a single character, a normalized printed number,
// or a set to the ordered list of the ordinals of its cards. A term is
// looked up by its trigrams when it has three characters or more: they are
// far rarer than bigrams, so a term made of common bigrams (arararar) still
// walks a short list.
//
// A list longer than postingBlockSize ordinals is stored in blocks of that
// many, each under the key of the list followed by its last ordinal, so
// that a cursor Seek finds the block holding the first ordinal at or above
// any bound: a walk skips whole stretches of a long list, and a zone's
// range is one seek away. The key of the list itself holds its length,
// which planning reads, and a shorter list whole.
const (
	postingTrigram byte = 't' // + three characters of a folded name
	postingGram    byte = 'g' // + two characters of a folded name
	postingRune    byte = 'r' // + one character of a folded name
	postingNumber  byte = 'n' // + the key of a normalized printed number
	postingSet     byte = 's' // + zone byte + set code
)

// postingBlockSize is the most ordinals in one block of a list: a seek
// decodes at most this many, and a block's key costs about as much as a
// tenth of it.
const postingBlockSize = 128

// appendListKey appends the key of the list kind+term: the kind, then the
// term, uvarint-length-prefixed, so that no list's key is the start of
// another's and its blocks' keys follow it directly.
func appendListKey[S ~string | ~[]byte](dst []byte, kind byte, term S) []byte {
	dst = append(dst, kind)
	dst = binary.AppendUvarint(dst, uint64(len(term)))
	return append(dst, term...)
}

// appendSetPostingKey appends the key of the list of the cards of the set
// (zone, code), zone being the ZoneIndex as a byte.
func appendSetPostingKey[S ~string | ~[]byte](dst []byte, zone byte, code S) []byte {
	dst = append(dst, postingSet)
	dst = binary.AppendUvarint(dst, uint64(1+len(code)))
	return append(append(dst, zone), code...)
}

// postingChunk is the part of one list built in memory: its ordinals, the
// first in full and the rest as uvarint deltas.
type postingChunk struct {
	n           uint32
	first, last uint32
	deltas      []byte
}

func (c *postingChunk) add(ord uint32) int {
	switch {
	case c.n == 0:
		c.first = ord
	case c.last == ord:
		return 0 // a bigram twice in one name
	default:
		n := len(c.deltas)
		c.deltas = binary.AppendUvarint(c.deltas, uint64(ord-c.last))
		c.last, c.n = ord, c.n+1
		return len(c.deltas) - n
	}
	c.last, c.n = ord, 1
	return 0
}

// postingBuilder builds the lists from the cards in ordinal order, in
// bounded memory: when the lists held reach the limit they are written to a
// temporary file as a sorted run and started afresh. Every ordinal of a
// run is below every ordinal of the next, so a list is the concatenation
// of its chunks in run order, and a merge of the runs by key writes every
// list in key order.
type postingBuilder struct {
	dir   string
	limit int
	mem   int // bytes held by lists, estimated
	lists map[string]*postingChunk
	// chars holds the lists of grams (characters, bigrams, trigrams), most of the
	// lists and of the lookups, by packChars: a map of integers finds
	// them faster than one of strings.
	chars map[uint64]*postingChunk
	// names holds, for recent folded names, the chunks of their bigrams
	// and characters: names repeat, and finding a name's lists once saves
	// a lookup per bigram for every other card of that name.
	names      map[string][]*postingChunk
	lastNumber []byte // the number key last added, whose list is numberList:
	numberList *postingChunk
	key        []byte
	runs       []*os.File
}

// postingListCost is the memory of a list in the builder beyond its key and
// deltas: the map entry, the chunk, slice headers.
const postingListCost = 96

// nameCacheSize bounds the names whose lists the builder remembers.
const nameCacheSize = 1 << 14

func newPostingBuilder(dir string, limit int) *postingBuilder {
	return &postingBuilder{dir: dir, limit: limit, lists: make(map[string]*postingChunk), chars: make(map[uint64]*postingChunk), names: make(map[string][]*postingChunk)}
}

// gramKinds is the kind of the list of a gram of one, two and three
// characters.
var gramKinds = [...]byte{1: postingRune, 2: postingGram, 3: postingTrigram}

// packChars packs one to three characters, each of at most 21 bits, into
// the key of their list in postingBuilder.chars, with a bit above them
// that tells how many there are; ok is false for a character that is not
// valid UTF-8, which keeps its bytes.
func packChars(text []byte) (packed uint64, ok bool) {
	n := 0
	for len(text) > 0 {
		r, w := utf8.DecodeRune(text)
		if r == utf8.RuneError && w < 2 {
			return 0, false
		}
		packed = packed<<21 | uint64(r)
		text, n = text[w:], n+1
	}
	return packed | 1<<(21*n), true
}

// appendPackedKey appends the list key of packed, from packChars.
func appendPackedKey(dst []byte, packed uint64) []byte {
	n := (bits.Len64(packed) - 1) / 21
	var text [3 * utf8.UTFMax]byte
	t := text[:0]
	for i := n - 1; i >= 0; i-- {
		t = utf8.AppendRune(t, rune(packed>>(21*i)&(1<<21-1)))
	}
	return appendListKey(dst, gramKinds[n], t)
}

// charList returns the list of the gram text, of kind postingRune,
// postingGram or postingTrigram, making it when there is none.
func (b *postingBuilder) charList(kind byte, text []byte) *postingChunk {
	packed, ok := packChars(text)
	if !ok {
		b.key = appendListKey(b.key[:0], kind, text)
		return b.list(b.key)
	}
	l, ok := b.chars[packed]
	if !ok {
		l = &postingChunk{}
		b.chars[packed] = l
		b.mem += postingListCost
	}
	return l
}

// list returns the chunk of key, making it when there is none.
func (b *postingBuilder) list(key []byte) *postingChunk {
	l, ok := b.lists[string(key)]
	if !ok {
		l = &postingChunk{}
		b.lists[string(key)] = l
		b.mem += postingListCost + len(key)
	}
	return l
}

// addCard adds ord, the card's ordinal, to the lists the card belongs to.
// Ordinals must come in increasing order.
func (b *postingBuilder) addCard(ord uint32, e *indexEntry) error {
	if b.mem >= b.limit {
		if err := b.spill(); err != nil {
			return err
		}
	}
	b.key = appendSetPostingKey(b.key[:0], e.zone, e.setCode)
	b.mem += b.list(b.key).add(ord)
	if b.numberList == nil || string(e.number) != string(b.lastNumber) {
		b.key = appendListKey(b.key[:0], postingNumber, e.number)
		b.numberList = b.list(b.key)
		b.lastNumber = append(b.lastNumber[:0], e.number...)
	}
	b.mem += b.numberList.add(ord)
	lists, ok := b.names[string(e.name)]
	if !ok {
		for n := 1; n <= 3; n++ {
			eachGram(e.name, n, func(gram []byte) {
				lists = append(lists, b.charList(gramKinds[n], gram))
			})
		}
		if len(b.names) >= nameCacheSize {
			clear(b.names)
		}
		b.names[string(e.name)] = lists
		b.mem += len(e.name) + 8*len(lists) + postingListCost
	}
	for _, l := range lists {
		b.mem += l.add(ord)
	}
	return nil
}

// eachGram calls fn with every run of n neighbouring characters of a
// folded name or term that holds no space: terms never do, so such runs
// are never looked up.
func eachGram(text []byte, n int, fn func(gram []byte)) {
	for len(text) > 0 {
		end, spaced := 0, false
		for i := 0; i < n; i++ {
			if end == len(text) {
				return
			}
			_, w := utf8.DecodeRune(text[end:])
			spaced = spaced || text[end] == ' '
			end += w
		}
		if !spaced {
			fn(text[:end])
		}
		_, w := utf8.DecodeRune(text)
		text = text[w:]
	}
}

// keyedChunk is a list held, with its key.
type keyedChunk struct {
	key   string
	chunk *postingChunk
}

// sorted returns the lists held, in key order.
func (b *postingBuilder) sorted() []keyedChunk {
	all := make([]keyedChunk, 0, len(b.lists)+len(b.chars))
	for k, c := range b.lists {
		all = append(all, keyedChunk{k, c})
	}
	var key []byte
	for packed, c := range b.chars {
		key = appendPackedKey(key[:0], packed)
		all = append(all, keyedChunk{string(key), c})
	}
	slices.SortFunc(all, func(a, b keyedChunk) int { return strings.Compare(a.key, b.key) })
	return all
}

// reset forgets the lists held, which a run now has.
func (b *postingBuilder) reset() {
	b.lists = make(map[string]*postingChunk)
	b.chars = make(map[uint64]*postingChunk)
	clear(b.names)
	b.numberList = nil
	b.mem = 0
}

// spill writes the lists held as a run: each key with its chunk, in key
// order.
func (b *postingBuilder) spill() error {
	f, err := os.CreateTemp(b.dir, ".catalogd-postings-*")
	if err != nil {
		return fmt.Errorf("search index: create a temporary file: %w", err)
	}
	// Unlinked at once: the run lives as long as the open file, so an
	// interrupted import leaves nothing behind.
	_ = os.Remove(f.Name())
	b.runs = append(b.runs, f)
	w := bufio.NewWriterSize(f, 256<<10)
	var hdr []byte
	for _, kc := range b.sorted() {
		k, c := kc.key, kc.chunk
		hdr = binary.AppendUvarint(hdr[:0], uint64(len(k)))
		hdr = append(hdr, k...)
		hdr = binary.AppendUvarint(hdr, uint64(c.n))
		hdr = binary.AppendUvarint(hdr, uint64(c.first))
		hdr = binary.AppendUvarint(hdr, uint64(c.last))
		hdr = binary.AppendUvarint(hdr, uint64(len(c.deltas)))
		w.Write(hdr)
		w.Write(c.deltas)
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("search index: write a temporary file: %w", err)
	}
	b.reset()
	return nil
}

// close releases the runs.
func (b *postingBuilder) close() {
	for _, f := range b.runs {
		f.Close()
	}
	b.runs = nil
	b.lists, b.chars, b.names = nil, nil, nil
}

// write writes every list, in key order, through put.
func (b *postingBuilder) write(put func(key, value []byte) error) error {
	lw := listWriter{put: put}
	if len(b.runs) == 0 {
		for _, kc := range b.sorted() {
			if err := lw.chunk([]byte(kc.key), kc.chunk); err != nil {
				return err
			}
		}
		return lw.end()
	}
	if len(b.lists)+len(b.chars) > 0 {
		if err := b.spill(); err != nil {
			return err
		}
	}
	// A list's chunks come out in run order, which is ordinal order.
	err := mergeSortedRuns(b.runs, 64<<10,
		func(run int, r *bufio.Reader) *chunkReader { return &chunkReader{r: r, run: run} },
		func(a, b *chunkReader) bool {
			if c := bytes.Compare(a.key, b.key); c != 0 {
				return c < 0
			}
			return a.run < b.run
		},
		func(r *chunkReader) error { return lw.chunk(r.key, &r.chunk) })
	if err != nil {
		return err
	}
	return lw.end()
}

// The blocks of a long list come in two forms, told by their first byte.
// Where a list holds at least bitmapMin ordinals of an aligned window of
// windowSize, the window is one bitmap: a walk ANDs it a word at a time and
// a seek into it is a scan of bits, where deltas would be decoded one by
// one. Elsewhere, blocks hold up to postingBlockSize ordinals as deltas.
const (
	// blockDeltas + the first ordinal, then the others as deltas, all
	// uvarints.
	blockDeltas byte = 0
	// blockBitmap + the window's first ordinal, 4 bytes big-endian, then
	// a bit for each ordinal of the window, 64 to a little-endian word.
	blockBitmap byte = 1
)

// bitmapMin is the fewest ordinals of a window stored as a bitmap: at this
// density the bitmap is at most four times the deltas it replaces, and
// lists this dense are the ones a conjunction of common terms walks.
const bitmapMin = windowSize / 32

// bitmapBlockLen is the length of a bitmap block's value.
const bitmapBlockLen = 1 + 4 + windowSize/8

// listWriter cuts lists into blocks as their chunks come, in key order and
// each list's chunks in ordinal order, and puts the blocks and each list's
// length. A list of at most postingBlockSize ordinals, which in a catalogue
// of names that do not repeat is most of them, is stored whole under the
// list's key, after its length: one key, one seek.
type listWriter struct {
	put    func(key, value []byte) error
	key    []byte   // of the list being written
	count  uint64   // its ordinals so far
	window []uint32 // its ordinals in the current window, in no block yet
	n      int      // ordinals in the block of deltas being filled
	last   uint32   // of that block
	block  []byte
	blocks bool // whether a block of the list has been put
	bkey   []byte
	value  []byte
}

func (lw *listWriter) chunk(key []byte, c *postingChunk) error {
	if !bytes.Equal(key, lw.key) {
		if err := lw.end(); err != nil {
			return err
		}
		lw.key = append(lw.key[:0], key...)
	}
	if err := lw.add(c.first); err != nil {
		return err
	}
	ord, d := c.first, c.deltas
	for len(d) > 0 {
		delta, w := binary.Uvarint(d)
		if w <= 0 {
			return fmt.Errorf("search index: list %q: bad delta in a temporary file", key)
		}
		d = d[w:]
		ord += uint32(delta)
		if err := lw.add(ord); err != nil {
			return err
		}
	}
	return nil
}

func (lw *listWriter) add(ord uint32) error {
	if len(lw.window) > 0 && ord/windowSize != lw.window[0]/windowSize {
		if err := lw.endWindow(); err != nil {
			return err
		}
	}
	lw.window = append(lw.window, ord)
	lw.count++
	return nil
}

// endWindow puts the ordinals of the window as a bitmap when they are
// many, and adds them to the blocks of deltas when not.
func (lw *listWriter) endWindow() error {
	if len(lw.window) >= bitmapMin {
		if lw.n > 0 {
			if err := lw.flush(); err != nil {
				return err
			}
		}
		base := lw.window[0] / windowSize * windowSize
		lw.block = append(lw.block[:0], blockBitmap)
		lw.block = binary.BigEndian.AppendUint32(lw.block, base)
		lw.block = append(lw.block, make([]byte, windowSize/8)...)
		words := lw.block[5:]
		for _, ord := range lw.window {
			i := ord - base
			words[i/8] |= 1 << (i % 8) // bit i%64 of little-endian word i/64
		}
		lw.last = lw.window[len(lw.window)-1]
		if err := lw.flush(); err != nil {
			return err
		}
	} else {
		for _, ord := range lw.window {
			if err := lw.addDelta(ord); err != nil {
				return err
			}
		}
	}
	lw.window = lw.window[:0]
	return nil
}

// addDelta adds ord to the block of deltas being filled.
func (lw *listWriter) addDelta(ord uint32) error {
	if lw.n == postingBlockSize {
		if err := lw.flush(); err != nil {
			return err
		}
	}
	if lw.n == 0 {
		lw.block = append(lw.block[:0], blockDeltas)
		lw.block = binary.AppendUvarint(lw.block, uint64(ord))
	} else {
		lw.block = binary.AppendUvarint(lw.block, uint64(ord-lw.last))
	}
	lw.last = ord
	lw.n++
	return nil
}

// flush puts the block being filled under the list's key and its last
// ordinal.
func (lw *listWriter) flush() error {
	lw.bkey = binary.BigEndian.AppendUint32(append(lw.bkey[:0], lw.key...), lw.last)
	lw.n, lw.blocks = 0, true
	return lw.put(lw.bkey, lw.block)
}

// end finishes the list being written: its last blocks, then its length,
// under its own key, which sorts before its blocks'; or the whole list
// there, its deltas without their block's kind, when it never filled a
// block.
func (lw *listWriter) end() error {
	if lw.count == 0 {
		return nil
	}
	if err := lw.endWindow(); err != nil {
		return err
	}
	lw.value = binary.AppendUvarint(lw.value[:0], lw.count)
	if !lw.blocks {
		lw.value = append(lw.value, lw.block[1:]...)
	} else if lw.n > 0 {
		if err := lw.flush(); err != nil {
			return err
		}
	}
	lw.count, lw.n, lw.blocks = 0, 0, false
	return lw.put(lw.key, lw.value)
}

// chunkReader reads the chunks of one run in key order.
type chunkReader struct {
	r     *bufio.Reader
	run   int
	key   []byte
	chunk postingChunk
}

func (r *chunkReader) next() (bool, error) {
	klen, err := binary.ReadUvarint(r.r)
	if err == io.EOF {
		return false, nil
	}
	var fields [4]uint64
	for i := range fields {
		if err != nil {
			return false, fmt.Errorf("search index: read a temporary file: %w", err)
		}
		if i == 0 {
			r.key = slices.Grow(r.key[:0], int(klen))[:klen]
			if _, err = io.ReadFull(r.r, r.key); err != nil {
				return false, fmt.Errorf("search index: read a temporary file: %w", err)
			}
		}
		fields[i], err = binary.ReadUvarint(r.r)
	}
	if err != nil {
		return false, fmt.Errorf("search index: read a temporary file: %w", err)
	}
	r.chunk.n, r.chunk.first, r.chunk.last = uint32(fields[0]), uint32(fields[1]), uint32(fields[2])
	r.chunk.deltas = slices.Grow(r.chunk.deltas[:0], int(fields[3]))[:fields[3]]
	if _, err := io.ReadFull(r.r, r.chunk.deltas); err != nil {
		return false, fmt.Errorf("search index: read a temporary file: %w", err)
	}
	return true, nil
}

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
	// the list has no ordinal at or above min.
	bound(min uint32) (uint32, bool)
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
}

// listRef names a stored list, gives its length and, for a short list,
// holds it (valid for the transaction it was read in).
type listRef struct {
	key    []byte
	count  uint64
	inline []byte
}

// readListRef reads the list stored under key; it is empty when there is
// none.
func readListRef(c *bolt.Cursor, key []byte) listRef {
	l := listRef{key: slices.Clone(key)}
	k, v := c.Seek(key)
	if !bytes.Equal(k, key) {
		return l
	}
	n, w := binary.Uvarint(v)
	if w <= 0 {
		return l
	}
	l.count = n
	if n <= postingBlockSize {
		l.inline = v[w:]
	}
	return l
}

// newList returns a reader of the list l, which takes a cursor from pool
// if it needs one.
func newList(pool *cursorPool, l listRef) storedList {
	if l.count <= postingBlockSize {
		return storedList{data: l.inline, last: math.MaxUint32, inline: true, loaded: true, done: l.count == 0}
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
				// The bitmap ends below its own last ordinal: corrupt.
				l.done = true
				break
			}
			l.cur, l.started = ord, true
			continue
		}
		if len(l.data) == 0 {
			// The list is over, or the block ends below its own last
			// ordinal: corrupt.
			l.done = true
			break
		}
		d, w := binary.Uvarint(l.data)
		if w <= 0 {
			l.done = true
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
			start, end := uint64(max(l.base, lo)), min(uint64(l.base)+windowSize, uint64(lo)+uint64(n))
			dst := window[(start-uint64(lo))/64 : (end-uint64(lo))/64]
			src := l.data[(start-uint64(l.base))/8:]
			src = src[:8*len(dst)]
			for i := range dst {
				dst[i] |= binary.LittleEndian.Uint64(src[8*i:])
			}
			if end > math.MaxUint32 {
				break
			}
			ord, ok = l.seek(uint32(end))
			continue
		}
		// The rest of the block, while its deltas take a byte each, as
		// most do in a long list: a tight loop on locals.
		data, cur := l.data, ord
		for {
			i := cur - lo
			window[i/64] |= 1 << (i % 64)
			if len(data) == 0 || data[0] >= 0x80 {
				break
			}
			cur, data = cur+uint32(data[0]), data[1:]
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
		}
	}
	if k == nil {
		l.bkey = binary.BigEndian.AppendUint32(append(l.bkey[:0], l.key...), min)
		k, v = l.c.Seek(l.bkey)
	}
	if !l.ofList(k) {
		l.done = true
		return
	}
	l.last = binary.BigEndian.Uint32(k[len(l.key):])
	l.loaded, l.started = true, false
	switch {
	case len(v) > 0 && v[0] == blockDeltas:
		l.data, l.bitmap = v[1:], false
	case len(v) == bitmapBlockLen && v[0] == blockBitmap:
		l.base, l.data, l.bitmap = binary.BigEndian.Uint32(v[1:]), v[5:], true
	default:
		l.done = true // a block of no known kind: corrupt
	}
}

// nextBit returns the first ordinal at or above from that the bitmap of
// the window starting at base holds.
func nextBit(words []byte, base, from uint32) (uint32, bool) {
	i := uint32(0)
	if from > base {
		i = from - base
	}
	for i < windowSize {
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

func (w *windowed) bound(min uint32) (uint32, bool) { return w.seek(min) }

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
	size   uint32 // of the window held, growing to windowSize
	held   bool
	window bitWindow
	spare  spareWindows
}

// firstWindowSize is the size of a walk's first window: a common query
// finds its first results near the start, so its first window is small,
// and each window after a sparse one is twice as large.
const firstWindowSize = 1 << 10

func (w *windowed) seek(from uint32) (uint32, bool) {
	if w.held && from < w.lo {
		from = w.lo // nothing before the window is on every list
	}
	for {
		if w.held && from >= w.lo && from-w.lo < w.size {
			for i := from - w.lo; i < w.size; {
				if word := w.window[i/64] >> (i % 64); word != 0 {
					return w.lo + i + uint32(bits.TrailingZeros64(word)), true
				}
				i = (i/64 + 1) * 64
			}
			if w.lo+w.size < w.lo {
				return 0, false // the window ended at the last ordinal
			}
			from = w.lo + w.size
			w.size = 2 * w.size
		}
		// The next window starts where every list has an ordinal left:
		// one seek each, where finding the first ordinal they share
		// would be the walk this avoids. It starts at a multiple of 64,
		// as the bitmaps of the lists do, so that their words are ORed
		// whole; the bits below from are not looked at.
		lo, ok := w.in.bound(from)
		if !ok {
			return 0, false
		}
		lo &^= 63
		w.size = max(firstWindowSize, min(w.size, windowSize))
		clear(w.window[:])
		w.in.fill(lo, w.size, &w.window, &w.spare)
		w.lo, w.held, from = lo, true, max(from, lo)
	}
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
