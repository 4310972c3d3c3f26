package build

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math/bits"
	"os"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/catalogd/catalogd/catalog/store/internal/layout"
)

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
	names map[string][]*postingChunk
	// groups names the lists of a group's cards; byGroup holds, for the
	// groups met since the last spill, the chunks of those lists.
	groups     *groupLists
	byGroup    map[uint32][]*postingChunk
	lastNumber []byte // the number key last added, whose list is numberList:
	numberList *postingChunk
	key        []byte
	runs       sortedRuns
	// part is the lists of a card the builder keeps: all of them, or one
	// part of them (see postingParts).
	part int
}

// The parts of a card's lists: every list, or those of kinds before
// PostingSet, or those of PostingSet and after it (the sets' and the
// trigrams'). The keys of two parts never meet, and those of the early
// part all come first.
const (
	partAll = iota
	partEarly
	partLate
)

// keeps reports whether the builder keeps the lists of kind.
func (b *postingBuilder) keeps(kind byte) bool {
	return b.part == partAll || (kind < layout.PostingSet) == (b.part == partEarly)
}

// postingListCost is the memory of a list in the builder beyond its key and
// deltas: the map entry, the chunk, slice headers.
const postingListCost = 96

// nameCacheSize bounds the names whose lists the builder remembers.
const nameCacheSize = 1 << 14

func newPostingBuilder(dir string, limit int) *postingBuilder {
	return &postingBuilder{dir: dir, limit: limit, runs: sortedRuns{fanIn: mergeFanIn}, lists: make(map[string]*postingChunk), chars: make(map[uint64]*postingChunk), names: make(map[string][]*postingChunk), byGroup: make(map[uint32][]*postingChunk)}
}

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
	return layout.AppendListKey(dst, layout.GramKinds[n], t)
}

// charList returns the list of the gram text, of kind PostingRune,
// PostingGram or PostingTrigram, making it when there is none.
func (b *postingBuilder) charList(kind byte, text []byte) *postingChunk {
	packed, ok := packChars(text)
	if !ok {
		b.key = layout.AppendListKey(b.key[:0], kind, text)
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
func (b *postingBuilder) addCard(ord uint32, e *layout.IndexEntry) error {
	if b.mem >= b.limit {
		if err := b.spill(); err != nil {
			return err
		}
	}
	if b.keeps(layout.PostingSet) {
		b.key = layout.AppendSetPostingKey(b.key[:0], e.Zone, e.SetCode)
		b.mem += b.list(b.key).add(ord)
	}
	if b.keeps(layout.PostingNumber) && (b.numberList == nil || string(e.Number) != string(b.lastNumber)) {
		b.key = layout.AppendListKey(b.key[:0], layout.PostingNumber, e.Number)
		b.numberList = b.list(b.key)
		b.lastNumber = append(b.lastNumber[:0], e.Number...)
	}
	if b.numberList != nil {
		b.mem += b.numberList.add(ord)
	}
	lists, ok := b.names[string(e.Name)]
	if !ok {
		layout.EachShortGram(e.Name, func(n int, gram []byte) {
			if kind := layout.GramKinds[n]; b.keeps(kind) {
				lists = append(lists, b.charList(kind, gram))
			}
		})
		if b.keeps(layout.PostingRun) {
			layout.EachRunKey(e.Name, func(key []byte) { lists = append(lists, b.list(key)) })
		}
		if len(b.names) >= nameCacheSize {
			clear(b.names)
		}
		b.names[string(e.Name)] = lists
		b.mem += len(e.Name) + 8*len(lists) + postingListCost
	}
	for _, l := range lists {
		b.mem += l.add(ord)
	}
	if !b.keeps(layout.PostingGroup) {
		return nil
	}
	bad := false
	ok = layout.EachGroupID(e.Groups, func(id uint32) bool {
		if bad = b.groups == nil || int(id) >= len(b.groups.texts); bad {
			return false
		}
		lists, held := b.byGroup[id]
		if !held {
			b.groups.eachKey(id, func(key []byte) { lists = append(lists, b.list(key)) })
			b.byGroup[id] = lists
			b.mem += 8*len(lists) + postingListCost
		}
		for _, l := range lists {
			b.mem += l.add(ord)
		}
		return true
	})
	if !ok || bad {
		return layout.ErrBadEntry
	}
	return nil
}

// addGrams adds id to the lists of the grams of text, ids coming in
// increasing order: the groups' texts over group indexes.
func (b *postingBuilder) addGrams(id uint32, text []byte) error {
	if b.mem >= b.limit {
		if err := b.spill(); err != nil {
			return err
		}
	}
	layout.EachShortGram(text, func(n int, gram []byte) {
		b.mem += b.charList(layout.GramKinds[n], gram).add(id)
	})
	return nil
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
	clear(b.byGroup)
	b.numberList = nil
	b.mem = 0
}

// spill writes the lists held as a run: each key with its chunk, in key
// order, merged with others as sortedRuns says.
func (b *postingBuilder) spill() error {
	f, w, err := createRun(b.dir, ".catalogd-postings-*")
	if err != nil {
		return fmt.Errorf("search index: %w", err)
	}
	for _, kc := range b.sorted() {
		writeChunk(w, []byte(kc.key), kc.chunk)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("search index: write a temporary file: %w", err)
	}
	b.reset()
	// A merged run holds each list's chunks in the order of the runs it
	// merged, which is ordinal order, one after the other.
	err = b.runs.add(f, func(runs []*os.File) (*os.File, error) {
		return compactRuns(b.dir, ".catalogd-postings-*", runs, newChunkReader, lessChunk,
			func(w *bufio.Writer, r *chunkReader) { writeChunk(w, r.key, &r.chunk) })
	})
	if err != nil {
		return fmt.Errorf("search index: %w", err)
	}
	return nil
}

// writeChunk writes one chunk of a run: its list's key, then the chunk. A
// write error stays in w for its Flush.
func writeChunk(w *bufio.Writer, key []byte, c *postingChunk) {
	var hdr [5 * binary.MaxVarintLen64]byte
	n := binary.PutUvarint(hdr[:], uint64(len(key)))
	w.Write(hdr[:n])
	w.Write(key)
	n = binary.PutUvarint(hdr[:], uint64(c.n))
	n += binary.PutUvarint(hdr[n:], uint64(c.first))
	n += binary.PutUvarint(hdr[n:], uint64(c.last))
	n += binary.PutUvarint(hdr[n:], uint64(len(c.deltas)))
	w.Write(hdr[:n])
	w.Write(c.deltas)
}

// close releases the runs.
func (b *postingBuilder) close() {
	b.runs.close()
	b.lists, b.chars, b.names, b.byGroup = nil, nil, nil, nil
}

// write writes every list, in key order, through put.
func (b *postingBuilder) write(put func(key, value []byte) error) error {
	lw := listWriter{put: put}
	if err := b.each(lw.chunk); err != nil {
		return err
	}
	return lw.end()
}

// each calls fn with the chunks of every list, in key order, and each
// list's in ordinal order.
func (b *postingBuilder) each(fn func(key []byte, c *postingChunk) error) error {
	if len(b.runs.files) == 0 {
		for _, kc := range b.sorted() {
			if err := fn([]byte(kc.key), kc.chunk); err != nil {
				return err
			}
		}
		return nil
	}
	if len(b.lists)+len(b.chars) > 0 {
		if err := b.spill(); err != nil {
			return err
		}
	}
	return mergeSortedRuns(b.runs.files, 64<<10, newChunkReader, lessChunk,
		func(r *chunkReader) error { return fn(r.key, &r.chunk) })
}

// listWriter cuts lists into blocks as their chunks come, in key order and
// each list's chunks in ordinal order, and puts the blocks and each list's
// length. A list of at most PostingBlockSize ordinals, which in a catalogue
// of names that do not repeat is most of them, is stored whole under the
// list's key, after its length: one key, one seek.
type listWriter struct {
	put    func(key, value []byte) error
	key    []byte   // of the list being written
	count  uint64   // its ordinals so far
	span   []uint32 // its ordinals in the current span, in no block yet
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
	if len(lw.span) > 0 && ord/layout.BitmapSpan != lw.span[0]/layout.BitmapSpan {
		if err := lw.endSpan(); err != nil {
			return err
		}
	}
	lw.span = append(lw.span, ord)
	lw.count++
	return nil
}

// endSpan puts the ordinals of the span as a bitmap when they are many,
// and adds them to the blocks of deltas when not.
func (lw *listWriter) endSpan() error {
	if len(lw.span) >= layout.BitmapMin {
		if lw.n > 0 {
			if err := lw.flush(); err != nil {
				return err
			}
		}
		base := lw.span[0] / layout.BitmapSpan * layout.BitmapSpan
		lw.block = append(lw.block[:0], layout.BlockBitmap)
		lw.block = binary.BigEndian.AppendUint32(lw.block, base)
		lw.block = append(lw.block, make([]byte, layout.BitmapSpan/8)...)
		words := lw.block[5:]
		for _, ord := range lw.span {
			i := ord - base
			words[i/8] |= 1 << (i % 8) // bit i%64 of little-endian word i/64
		}
		lw.last = lw.span[len(lw.span)-1]
		if err := lw.flush(); err != nil {
			return err
		}
	} else {
		for _, ord := range lw.span {
			if err := lw.addDelta(ord); err != nil {
				return err
			}
		}
	}
	lw.span = lw.span[:0]
	return nil
}

// addDelta adds ord to the block of deltas being filled.
func (lw *listWriter) addDelta(ord uint32) error {
	if lw.n == layout.PostingBlockSize {
		if err := lw.flush(); err != nil {
			return err
		}
	}
	if lw.n == 0 {
		lw.block = append(lw.block[:0], layout.BlockDeltas)
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
	if err := lw.endSpan(); err != nil {
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
func newChunkReader(run int, r *bufio.Reader) *chunkReader { return &chunkReader{r: r, run: run} }

// lessChunk orders chunks by key, and a list's chunks in run order, which
// is ordinal order.
func lessChunk(a, b *chunkReader) bool {
	if c := bytes.Compare(a.key, b.key); c != 0 {
		return c < 0
	}
	return a.run < b.run
}

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
