package catalog

import (
	"encoding/binary"
	"slices"
	"unicode/utf8"
)

// The search index has two parts (see layout.go). The numbers bucket holds
// one entry per card, found by its ordinal: its position in result order
// (printed-number key, then id). The postings bucket maps a bigram of folded
// names, a normalized printed number, or a set to the ordered list of the
// ordinals of its cards. A query walks the shortest list that every result
// must be on, in ordinal order, so it reads about as many entries as it needs
// and stops at the limit; a query no list can narrow scans the entries in
// order, which for a common term also stops early.
const (
	postingGram   byte = 'g' // + two runes of a folded name
	postingNumber byte = 'n' // + the key of a normalized printed number
	postingSet    byte = 's' // + zone byte + set code (appendSetPostingKey)
)

// appendSetPostingKey appends the key of the posting list of the cards of
// the set (zone, code), zone being the ZoneIndex as a byte.
func appendSetPostingKey[S ~string | ~[]byte](dst []byte, zone byte, code S) []byte {
	return append(append(append(dst, postingSet), zone), code...)
}

// postingList is one list being built: a count, then the ordinals as
// uvarint deltas.
type postingList struct {
	n    uint32
	last uint32
	buf  []byte
}

type postingBuilder struct {
	lists map[string]*postingList
	// names holds, for recent folded names, the lists of their bigrams:
	// names repeat, and finding a name's lists once saves a lookup per
	// bigram for every other card of that name.
	names map[string][]*postingList
	// numberList is the list of lastNumber, the number key last added:
	// cards come in number order.
	lastNumber []byte
	numberList *postingList
	key        []byte
}

// nameCacheSize bounds the names whose lists the builder remembers.
const nameCacheSize = 1 << 16

func newPostingBuilder() *postingBuilder {
	return &postingBuilder{lists: make(map[string]*postingList), names: make(map[string][]*postingList)}
}

// list returns the list of key, making it when there is none.
func (b *postingBuilder) list(key []byte) *postingList {
	l, ok := b.lists[string(key)]
	if !ok {
		l = &postingList{}
		b.lists[string(key)] = l
	}
	return l
}

// add appends ord, which never decreases, to the list.
func (l *postingList) add(ord uint32) {
	if l.n > 0 && l.last == ord {
		return // a bigram twice in one name
	}
	delta := ord - l.last
	if l.n == 0 {
		delta = ord
	}
	l.buf = binary.AppendUvarint(l.buf, uint64(delta))
	l.last = ord
	l.n++
}

// addCard adds the lists a card belongs to.
func (b *postingBuilder) addCard(ord uint32, e *indexEntry) {
	b.key = appendSetPostingKey(b.key[:0], e.zone, e.setCode)
	b.list(b.key).add(ord)
	if b.numberList == nil || string(e.number) != string(b.lastNumber) {
		b.key = append(append(b.key[:0], postingNumber), e.number...)
		b.numberList = b.list(b.key)
		b.lastNumber = append(b.lastNumber[:0], e.number...)
	}
	b.numberList.add(ord)
	grams, ok := b.names[string(e.name)]
	if !ok {
		eachBigram(e.name, func(gram []byte) {
			b.key = append(append(b.key[:0], postingGram), gram...)
			grams = append(grams, b.list(b.key))
		})
		if len(b.names) >= nameCacheSize {
			clear(b.names)
		}
		b.names[string(e.name)] = grams
	}
	for _, l := range grams {
		l.add(ord)
	}
}

// eachBigram calls fn with every pair of neighbouring characters of a folded
// name or term that holds no space: terms never do, so such pairs are never
// looked up.
func eachBigram(text []byte, fn func(gram []byte)) {
	for len(text) > 0 {
		r1, n1 := utf8.DecodeRune(text)
		if n1 == len(text) {
			return
		}
		_, n2 := utf8.DecodeRune(text[n1:])
		if r1 != ' ' && text[n1] != ' ' {
			fn(text[:n1+n2])
		}
		text = text[n1:]
	}
}

// each calls fn with every list, in key order, encoded as stored.
func (b *postingBuilder) each(fn func(key, value []byte) error) error {
	b.names = nil
	keys := make([]string, 0, len(b.lists))
	for k := range b.lists {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var value []byte
	for _, k := range keys {
		l := b.lists[k]
		value = binary.AppendUvarint(value[:0], uint64(l.n))
		value = append(value, l.buf...)
		if err := fn([]byte(k), value); err != nil {
			return err
		}
	}
	return nil
}

// ordinals walks a list of ordinals in increasing order.
type ordinals interface {
	// seek returns the first ordinal of the list that is at least min. It
	// never moves backwards: asking again with the same min gives the same
	// answer.
	seek(min uint32) (uint32, bool)
}

// storedList reads a list as stored.
type storedList struct {
	data    []byte
	count   uint32
	cur     uint32
	started bool
	done    bool
}

func newStoredList(v []byte) *storedList {
	n, w := binary.Uvarint(v)
	if w <= 0 {
		return &storedList{}
	}
	return &storedList{data: v[w:], count: uint32(n)}
}

func (l *storedList) seek(min uint32) (uint32, bool) {
	if l.done {
		return 0, false
	}
	if l.started && l.cur >= min {
		return l.cur, true
	}
	for len(l.data) > 0 {
		d, w := binary.Uvarint(l.data)
		if w <= 0 {
			break
		}
		l.data = l.data[w:]
		if l.started {
			l.cur += uint32(d)
		} else {
			l.cur, l.started = uint32(d), true
		}
		if l.cur >= min {
			return l.cur, true
		}
	}
	l.data, l.done = nil, true
	return 0, false
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
