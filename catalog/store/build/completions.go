package build

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"math"
	"path/filepath"
	"slices"

	"github.com/catalogd/catalogd/catalog"
	"github.com/catalogd/catalogd/catalog/store/internal/layout"
)

// namespaces is how many rankings of the names there are: every zone
// (namespace 0), then each zone alone (1 + its catalog.ZoneIndex).
const namespaces = 1 + 3

// A place of a name is told by a byte: its zone, 1 + catalog.ZoneIndex, or 0 for
// a place in every zone's ranking alone; with zoneOnly for a place in its
// zone's ranking alone. A name printed in one zone has one place, its
// zone's without zoneOnly, which is in every zone's ranking too; a name
// printed in several has a place 0 and one in each of its zones, with
// zoneOnly.
const zoneOnly byte = 4

// nameGramsAt is the cards a distinct name has on average, in the whole
// catalogue, from which the runs of the names' grams are written. A run
// holds a place for each name with the gram where the cards' list holds
// each of its cards: with eight cards a name, the runs hold about an
// eighth of what the lists do (up to four places a name, for a name
// printed in every zone). Where names do not repeat (one card each) they
// would hold as many, so they are not written and a query finds the
// names through the cards'.
const nameGramsAt = 8

// runSortMemory bounds the sort of the entries of the runs, one per word
// of every name: the import's largest sort, and its last, when the
// posting lists' memory is free again.
const runSortMemory = 64 << 20

// cardNameSort sorts each card's name, zone and romanization, with its
// ordinal, groups and folded name, by name: one pass over it counts each
// name's cards (rankNames).
type cardNameSort struct {
	*sorter
	key, value []byte
}

// appendCardNameKey appends what the sort of card names holds of a card:
// its name, the zone and the romanization its language takes.
func appendCardNameKey(dst, name []byte, zone, class byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(name)))
	dst = append(dst, name...)
	return append(dst, zone, class)
}

// appendCardNameValue appends what the sort of card names holds of the
// card at ord besides its key: the ordinal, the starts of its words
// (layout.WordStarts), the groups of its name, its folded name.
func appendCardNameValue(dst []byte, ord uint32, starts uint64, e *layout.IndexEntry) []byte {
	dst = binary.BigEndian.AppendUint32(dst, ord)
	dst = binary.BigEndian.AppendUint64(dst, starts)
	dst = binary.AppendUvarint(dst, uint64(len(e.Groups)))
	dst = append(dst, e.Groups...)
	return append(dst, e.Name[:e.Folded]...)
}

// pendingName is a place of a name while the import ranks it: the place,
// the name's record there, and what its runs are made of, its forms, its
// inner words and groups.
type pendingName struct {
	layout.NameRecord
	place  byte
	seq    uint32 // the name's, in name order (cardPlaces)
	forms  [][]byte
	inner  [][]byte // catalog.InnerWords, folded and romanized: words, not forms
	groups []byte   // uvarint group indexes
}

// appendPending appends what the sort of ranked names holds of a place of
// a name: the place, the name's record, its groups, its forms, and after
// an empty one its inner words.
func appendPending(dst, record []byte, n *pendingName) []byte {
	dst = append(dst, n.place)
	dst = binary.BigEndian.AppendUint32(dst, n.seq)
	dst = binary.AppendUvarint(dst, uint64(len(record)))
	dst = append(dst, record...)
	dst = binary.AppendUvarint(dst, uint64(len(n.groups)))
	dst = append(dst, n.groups...)
	for _, f := range n.forms {
		dst = binary.AppendUvarint(dst, uint64(len(f)))
		dst = append(dst, f...)
	}
	if len(n.inner) > 0 {
		dst = binary.AppendUvarint(dst, 0)
		for _, w := range n.inner {
			dst = binary.AppendUvarint(dst, uint64(len(w)))
			dst = append(dst, w...)
		}
	}
	return dst
}

func decodePending(n *pendingName, v []byte) (record []byte, err error) {
	var ok bool
	if len(v) < 5 || v[0]&^zoneOnly > namespaces-1 {
		return nil, layout.ErrBadEntry
	}
	n.place, n.seq = v[0], binary.BigEndian.Uint32(v[1:5])
	if record, v, ok = layout.LengthPrefixed(v[5:]); !ok {
		return nil, layout.ErrBadEntry
	}
	if n.groups, v, ok = layout.LengthPrefixed(v); !ok {
		return nil, layout.ErrBadEntry
	}
	n.forms, n.inner = n.forms[:0], n.inner[:0]
	into := &n.forms
	for len(v) > 0 {
		var f []byte
		if f, v, ok = layout.LengthPrefixed(v); !ok || len(f) == 0 && into == &n.inner {
			return nil, layout.ErrBadEntry
		}
		if len(f) == 0 { // the inner words follow
			into = &n.inner
			continue
		}
		*into = append(*into, f)
	}
	if len(n.forms) == 0 {
		return nil, layout.ErrBadEntry
	}
	return record, nil
}

// rankKey appends the key that ranks a place of a name with cards cards:
// more cards first, then the folded name, then the name as printed, each
// written so that it ends before any longer one it starts, then the
// place, which sets apart the places of a name that rank alike.
func rankKey(dst []byte, cards uint64, folded, printed []byte, place byte) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(math.MaxUint32-min(cards, math.MaxUint32)))
	dst = appendOrdered(dst, folded)
	dst = appendOrdered(dst, printed)
	return append(dst, place)
}

// appendOrdered appends b so that the bytes appended compare as b does
// and end before those of any longer b it starts: each zero byte as 0,
// 0xff, then 0, 0.
func appendOrdered(dst, b []byte) []byte {
	for {
		i := bytes.IndexByte(b, 0)
		if i < 0 {
			break
		}
		dst = append(append(dst, b[:i]...), 0, 0xff)
		b = b[i+1:]
	}
	return append(append(dst, b...), 0, 0)
}

// writeCompletions writes the completions bucket from the sort of the
// cards' names: first the names, ranked, then the runs, then the first
// names of the prefixes that start many runs.
func (w *Writer) writeCompletions() error {
	dir := filepath.Dir(w.path)
	ranked := newSorter(dir, sortMemory)
	defer ranked.close()
	cards, err := newCardSeqs(dir)
	if err != nil {
		return fmt.Errorf("write catalogue %s: names: %w", w.path, err)
	}
	defer cards.close()
	names, err := w.rankNames(ranked, cards)
	if err != nil {
		return fmt.Errorf("write catalogue %s: names: %w", w.path, err)
	}
	var cardCount uint64
	for _, n := range w.zoneCards {
		cardCount += uint64(n)
	}
	at := cmp.Or(w.limits.NameGramsAt, nameGramsAt)
	if w.nameGrams = names > 0 && cardCount/names >= uint64(max(1, at)); w.nameGrams {
		if err := w.put(w.tx.Bucket(layout.BucketMeta), layout.KeyNameGrams, []byte{}); err != nil {
			return err
		}
	}
	placeSeqs := w.newPlaceSorter()
	defer placeSeqs.close()
	keys := w.newRunSorter()
	defer keys.close()
	places, err := w.writeNames(ranked, keys, placeSeqs)
	if err != nil {
		return fmt.Errorf("write catalogue %s: names: %w", w.path, err)
	}
	ranked.close() // spent: its memory is free for the steps after it
	if err := w.addGroupForms(keys, places); err != nil {
		return fmt.Errorf("write catalogue %s: names: %w", w.path, err)
	}
	tops := newSorter(dir, wordSortMemory)
	defer tops.close()
	if err := w.writeRuns(keys, places, tops); err != nil {
		return fmt.Errorf("write catalogue %s: names: %w", w.path, err)
	}
	err = tops.each(func(key, value []byte) error { return w.putOrdered(layout.BucketCompletions, key, value) })
	if err != nil {
		return err
	}
	keys.close()
	tops.close()
	if err := w.writeCardPlaces(cards, placeSeqs); err != nil {
		return fmt.Errorf("write catalogue %s: places of the cards' names: %w", w.path, err)
	}
	return nil
}

// rankNames counts the cards of each distinct name and adds its places
// to ranked (nameRanker), and each card to cards with its name's place in
// name order. It returns how many distinct names there are.
func (w *Writer) rankNames(ranked *sorter, cards *cardSeqs) (names uint64, err error) {
	var cur nameCards
	var printed, folded []byte
	r := nameRanker{ranked: ranked}
	err = w.cardNames.each(func(k, v []byte) error {
		name, rest, ok := layout.LengthPrefixed(k)
		if !ok || len(rest) != 2 || int(rest[0]) >= len(cur.cards) || len(v) < 13 {
			return layout.ErrBadEntry
		}
		if printed == nil || !bytes.Equal(name, printed) {
			if err := r.rank(&cur, folded, printed); err != nil {
				return err
			}
			groups, f, ok := layout.LengthPrefixed(v[12:])
			if !ok {
				return layout.ErrBadEntry
			}
			if printed != nil {
				r.n.seq++
			}
			names++
			printed = append(printed[:0], name...)
			folded = append(folded[:0], f...)
			r.n.groups = append(r.n.groups[:0], groups...) // a name's, whichever its card
			cur.reset()
		}
		cur.add(int(rest[0]), rest[1], binary.BigEndian.Uint32(v))
		return cards.add(r.n.seq, binary.BigEndian.Uint32(v), rest[0], binary.BigEndian.Uint64(v[4:]))
	})
	if err != nil {
		return names, err
	}
	return names, r.rank(&cur, folded, printed)
}

// nameCards is what the import gathers of a name's cards: how many in
// each zone, and in each zone the first card of each romanization class
// its cards there take (almost always one).
type nameCards struct {
	cards [3]uint64
	first [3][]classCard
}

// classCard is the first card of a romanization class.
type classCard struct {
	class byte
	ord   uint32
}

func (n *nameCards) reset() {
	n.cards = [3]uint64{}
	for z := range n.first {
		n.first[z] = n.first[z][:0]
	}
}

func (n *nameCards) add(zone int, class byte, ord uint32) {
	n.cards[zone]++
	n.first[zone] = addClassCard(n.first[zone], classCard{class, ord})
}

// addClassCard adds c to classes, ordered by class, unless a card of its
// class that comes first is there.
func addClassCard(classes []classCard, c classCard) []classCard {
	i, found := slices.BinarySearchFunc(classes, c.class, func(e classCard, class byte) int { return cmp.Compare(e.class, class) })
	if found {
		classes[i].ord = min(classes[i].ord, c.ord)
		return classes
	}
	return slices.Insert(classes, i, c)
}

// nameRanker adds the places of names to the sort that ranks them.
type nameRanker struct {
	ranked     *sorter
	n          pendingName
	classes    []classCard
	key, value []byte
	record     []byte
}

// rank adds to ranked the places of a name, each under the key that ranks
// it: one, when it is printed in one zone; else one among every zone's
// names and one in each of its zones. Each place has the forms of the
// cards of its namespace: a term matches a name in a zone as a search
// there would match its cards.
func (r *nameRanker) rank(c *nameCards, folded, printed []byte) error {
	if printed == nil {
		return nil
	}
	r.n.Cards = c.cards
	zones := 0
	for _, n := range c.cards {
		if n > 0 {
			zones++
		}
	}
	if zones > 1 {
		r.classes = r.classes[:0]
		for z := range c.first {
			for _, cc := range c.first[z] {
				r.classes = addClassCard(r.classes, cc)
			}
		}
		if err := r.add(0, r.n.Count(0), r.classes, folded, printed); err != nil {
			return err
		}
	}
	for z, n := range c.cards {
		if n == 0 {
			continue
		}
		place := byte(1 + z)
		if zones > 1 {
			place |= zoneOnly
		}
		if err := r.add(place, n, c.first[z], folded, printed); err != nil {
			return err
		}
	}
	return nil
}

// add adds a place of a name, which has cards cards of the classes there.
func (r *nameRanker) add(place byte, cards uint64, classes []classCard, folded, printed []byte) error {
	n := &r.n
	n.place = place
	n.Ords = n.Ords[:0]
	n.forms = append(n.forms[:0], folded)
	inner := catalog.InnerWords(string(printed), string(folded))
	n.inner = n.inner[:0]
	for _, w := range inner {
		n.inner = appendNew(n.inner, w)
	}
	for _, c := range classes {
		n.Ords = append(n.Ords, c.ord)
		n.forms = appendNew(n.forms, catalog.Romanize(string(folded), classLanguage(c.class)))
		for _, w := range inner {
			n.inner = appendNew(n.inner, catalog.Romanize(w, classLanguage(c.class)))
		}
	}
	r.record = n.Append(r.record[:0])
	r.value = appendPending(r.value[:0], r.record, n)
	r.key = rankKey(r.key[:0], cards, folded, printed, place)
	return r.ranked.add(r.key, r.value)
}

// romanizeClass is the byte that tells a card's romanizations apart in
// the index: 'z' where catalog.Romanize turns Han characters into pinyin,
// 'o' where it does not (catalog.RomanizesHan).
func romanizeClass(language string) byte {
	if catalog.RomanizesHan(language) {
		return 'z'
	}
	return 'o'
}

// classLanguage is a language of the romanization class.
func classLanguage(class byte) string {
	if class == romanizeClass("zh") {
		return "zh"
	}
	return ""
}

// writeNames numbers the places of the names in rank order, writes their
// records in blocks and adds to keys an entry for each of their groups,
// forms and words, under which writeRuns finds their runs. It returns how
// many places there are.
func (w *Writer) writeNames(ranked, keys, placeSeqs *sorter) (uint32, error) {
	nw := nameWriter{w: w, keys: keys, placeSeqs: placeSeqs}
	var n pendingName
	err := ranked.each(func(_, v []byte) error {
		rec, err := decodePending(&n, v)
		if err != nil {
			return err
		}
		return nw.add(n.place, rec, &n)
	})
	if err != nil {
		return nw.ord, err
	}
	return nw.ord, nw.end()
}

// nameWriter numbers the places of names and writes their records in
// blocks.
type nameWriter struct {
	w           *Writer
	keys        *sorter
	placeSeqs   *sorter // each place under its name's seq and place byte
	ord         uint32
	ends        []uint32
	data, value []byte
	key         []byte
	grams       [][]byte // of the name being added, into its forms
}

// add writes the record of the next place, a name's place place, and adds
// the entries of its runs to keys.
func (nw *nameWriter) add(place byte, record []byte, n *pendingName) error {
	if nw.ord == math.MaxUint32 {
		return fmt.Errorf("more than %d places of names", uint32(math.MaxUint32))
	}
	ord := nw.ord
	ok := layout.EachGroupID(n.groups, func(id uint32) bool {
		nw.key = binary.BigEndian.AppendUint32(append(nw.key[:0], layout.CompleteGroup), id)
		return addRunKey(nw.keys, nw.key, ord, place) == nil
	})
	if !ok {
		return layout.ErrBadEntry
	}
	if err := addFormKeys(nw.keys, n.forms, n.inner, ord, place); err != nil {
		return err
	}
	if nw.w.nameGrams {
		if err := nw.addGramKeys(slices.Concat(n.forms, n.inner), ord, place); err != nil {
			return err
		}
	}
	nw.key = append(binary.BigEndian.AppendUint32(nw.key[:0], n.seq), place)
	var at [4]byte
	binary.BigEndian.PutUint32(at[:], ord)
	if err := nw.placeSeqs.add(nw.key, at[:]); err != nil {
		return err
	}
	nw.data = append(nw.data, record...)
	nw.ends = append(nw.ends, uint32(len(nw.data)))
	nw.ord++
	if nw.ord%layout.NameBlockSize == 0 {
		return nw.flush()
	}
	return nil
}

func (nw *nameWriter) flush() error {
	var block [5]byte
	block[0] = layout.CompleteNames
	binary.BigEndian.PutUint32(block[1:], (nw.ord-1)/layout.NameBlockSize)
	nw.value = layout.AppendIndexBlock(nw.value[:0], nw.ends, nw.data)
	nw.ends, nw.data = nw.ends[:0], nw.data[:0]
	return nw.w.putOrdered(layout.BucketCompletions, block[:], nw.value)
}

// end writes the last block.
func (nw *nameWriter) end() error {
	if len(nw.ends) > 0 {
		return nw.flush()
	}
	return nil
}

// addRunKey adds ord, of a name's place place or of a group, to the run
// of key: the sort of the runs holds the run's key, the ordinal, the
// place.
func addRunKey(keys *sorter, key []byte, ord uint32, place byte) error {
	return keys.add(append(binary.BigEndian.AppendUint32(key, ord), place), nil)
}

// addFormKeys adds ord, of a name's place place or of a group, to the
// runs of its forms and of each distinct word of them and of its inner
// words, which are words of it but no form.
func addFormKeys(keys *sorter, forms, inner [][]byte, ord uint32, place byte) error {
	var key []byte
	add := func(k byte, term []byte) error {
		if len(term) == 0 || bytes.IndexByte(term, 0) >= 0 {
			return nil // no query holds a zero byte
		}
		key = append(append(append(key[:0], k), term...), 0)
		return addRunKey(keys, key, ord, place)
	}
	var err error
	var seen [16][]byte
	words := seen[:0]
	for i, f := range forms {
		if slices.ContainsFunc(forms[:i], func(g []byte) bool { return bytes.Equal(f, g) }) {
			continue
		}
		if err == nil {
			err = add(layout.CompleteForm, f)
		}
		catalog.EachWord(f, func(word []byte) {
			if err == nil && !slices.ContainsFunc(words, func(w []byte) bool { return bytes.Equal(w, word) }) {
				words = append(words, word)
				err = add(layout.CompleteWord, word)
			}
		})
	}
	for _, word := range inner {
		if err == nil && !slices.ContainsFunc(words, func(w []byte) bool { return bytes.Equal(w, word) }) {
			words = append(words, word)
			err = add(layout.CompleteWord, word)
		}
	}
	return err
}

// appendNew appends s to list unless it is empty or there already.
func appendNew(list [][]byte, s string) [][]byte {
	if s == "" || slices.ContainsFunc(list, func(g []byte) bool { return string(g) == s }) {
		return list
	}
	return append(list, []byte(s))
}

// addGramKeys adds ord, of a name's place place, to the run of each
// distinct gram of its forms, of one, two and three characters: a search
// text's grams are among them (catalog.SearchText holds the folded name
// and words of its romanized forms).
func (nw *nameWriter) addGramKeys(forms [][]byte, ord uint32, place byte) error {
	nw.grams = nw.grams[:0]
	for _, f := range forms {
		layout.EachShortGram(f, func(_ int, gram []byte) {
			if bytes.IndexByte(gram, 0) < 0 { // no query holds a zero byte
				nw.grams = append(nw.grams, gram)
			}
		})
	}
	slices.SortFunc(nw.grams, bytes.Compare)
	nw.grams = slices.CompactFunc(nw.grams, bytes.Equal)
	for _, g := range nw.grams {
		nw.key = append(append(append(nw.key[:0], layout.CompleteGram), g...), 0)
		if err := addRunKey(nw.keys, nw.key, ord, place); err != nil {
			return err
		}
	}
	return nil
}

// addGroupForms adds every group, as the ordinal groups+id, to the runs
// of its forms: its names, folded, and their romanized forms.
func (w *Writer) addGroupForms(keys *sorter, groups uint32) error {
	var forms [][]byte
	for id, names := range w.groups.folded {
		forms = forms[:0]
		for _, f := range names {
			forms = append(forms, []byte(f))
			if r := catalog.Romanize(f, "zh"); r != "" && r != f {
				forms = append(forms, []byte(r))
			}
		}
		if uint64(groups)+uint64(id) > math.MaxUint32 {
			return fmt.Errorf("more than %d names and groups", uint32(math.MaxUint32))
		}
		if err := addFormKeys(keys, forms, nil, groups+uint32(id), 0); err != nil {
			return err
		}
	}
	return nil
}
