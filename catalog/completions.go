package catalog

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"path/filepath"
	"slices"
)

// The index of autocomplete (docs/SEARCH.md, Autocomplete), in the
// completions bucket. The import counts the cards of every distinct name
// as printed and ranks the names in each of four namespaces (every zone,
// then each zone alone): more cards first, then the folded name, then the
// name as printed. A name's
// ordinal is its place in that order, each namespace one range of them,
// so a list of names in ordinal order is in rank order and its first
// names in a namespace are the best there.
//
// Every form (a folded name, a romanized form, a name of a group) and every
// word of one has a run: the names that have it, in ordinal order, and
// the groups that have it, whose names are in their own run. The forms or
// words that start with what was typed are one range of keys: a query
// reads the first names of each run in the range. A prefix that starts
// more than topPrefixRuns of them has its first names in each namespace
// stored once, so that no query reads more than that many runs.
const (
	completeNames byte = 'n' // + 4-byte block number -> a block of name records
	completeGroup byte = 'a' // + 4-byte group index -> the run of the group's names
	completeForm  byte = 'f' // + a form + 0 -> the run of that form
	completeTop   byte = 'h' // + 'f' or 'w' + a prefix + 0 -> the first names that start so
	completeSpans byte = 's' // -> where each namespace's ordinals start, and where the last ends
	completeWord  byte = 'w' // + a word + 0 -> the run of that word
)

// namespaces is how many rankings of the names there are: every zone
// (namespace 0), then each zone alone (1 + its ZoneIndex).
const namespaces = 1 + 3

// runSegments is the segments of a run: the names of each namespace, then
// the groups.
const runSegments = namespaces + 1

// MaxAutocompleteLimit is the most names one autocomplete answers.
const MaxAutocompleteLimit = 20

// topPrefixRuns is the most runs a prefix may start, its runs' groups'
// counted, before its first names are stored: a query reads at most this
// many runs of a prefix.
const topPrefixRuns = 32

// runSortMemory bounds the sort of the entries of the runs, one per word
// of every name: the import's largest sort, and its last, when the
// posting lists' memory is free again.
const runSortMemory = 64 << 20

// nameBlockSize is the name records to a value of the completions bucket.
const nameBlockSize = 64

// cardNameSort sorts each card's name, zone and romanization, with its
// ordinal and search text, by name: one pass over it counts each name's
// cards (rankNames).
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

// nameRecord is a distinct name as the completions bucket holds it: its
// cards in each zone, and the ordinal of a card that bears it for each
// romanization its cards take (almost always one), whose index entry
// holds its search text and groups, and whose record its name as printed.
type nameRecord struct {
	cards [3]uint64
	ords  []uint32
}

// Name records of the completions bucket: a name's own, or, in the range
// of a zone, its ordinal in every zone's range, where its record is.
const (
	recordOfName byte = 1
	recordInZone byte = 0
)

func (n *nameRecord) count(ns int) uint64 {
	if ns == 0 {
		return n.cards[0] + n.cards[1] + n.cards[2]
	}
	return n.cards[ns-1]
}

func (n *nameRecord) append(dst []byte) []byte {
	dst = append(dst, recordOfName)
	for _, c := range n.cards {
		dst = binary.AppendUvarint(dst, c)
	}
	for _, o := range n.ords {
		dst = binary.AppendUvarint(dst, uint64(o))
	}
	return dst
}

// decodeNameRecord decodes the record of a name into n; for a name in a
// zone's range, it returns the name's ordinal in every zone's range.
func decodeNameRecord(n *nameRecord, v []byte) (in uint32, inZone bool, err error) {
	if len(v) == 0 {
		return 0, false, errBadEntry
	}
	kind, v := v[0], v[1:]
	if kind == recordInZone {
		o, w := binary.Uvarint(v)
		if w <= 0 || w != len(v) || o > math.MaxUint32 {
			return 0, false, errBadEntry
		}
		return uint32(o), true, nil
	}
	for i := range n.cards {
		c, w := binary.Uvarint(v)
		if w <= 0 {
			return 0, false, errBadEntry
		}
		n.cards[i], v = c, v[w:]
	}
	n.ords = n.ords[:0]
	for len(v) > 0 {
		o, w := binary.Uvarint(v)
		if w <= 0 || o > math.MaxUint32 {
			return 0, false, errBadEntry
		}
		n.ords, v = append(n.ords, uint32(o)), v[w:]
	}
	if kind != recordOfName || len(n.ords) == 0 {
		return 0, false, errBadEntry
	}
	return 0, false, nil
}

// pendingName is a name while the import ranks it: its record, and what
// its runs are made of, its forms and groups.
type pendingName struct {
	nameRecord
	forms  [][]byte
	groups []byte // uvarint group indexes
}

// appendPending appends what the sorts of ranked names hold of a name: its
// record (or its ordinal in every zone's range), its groups, its forms.
func appendPending(dst, record []byte, n *pendingName) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(record)))
	dst = append(dst, record...)
	dst = binary.AppendUvarint(dst, uint64(len(n.groups)))
	dst = append(dst, n.groups...)
	for _, f := range n.forms {
		dst = binary.AppendUvarint(dst, uint64(len(f)))
		dst = append(dst, f...)
	}
	return dst
}

func decodePending(n *pendingName, v []byte) (record []byte, err error) {
	var ok bool
	if record, v, ok = lengthPrefixed(v); !ok {
		return nil, errBadEntry
	}
	if n.groups, v, ok = lengthPrefixed(v); !ok {
		return nil, errBadEntry
	}
	n.forms = n.forms[:0]
	for len(v) > 0 {
		var f []byte
		if f, v, ok = lengthPrefixed(v); !ok || len(f) == 0 {
			return nil, errBadEntry
		}
		n.forms = append(n.forms, f)
	}
	if len(n.forms) == 0 {
		return nil, errBadEntry
	}
	return record, nil
}

// rankKey appends the key that ranks a name in namespace ns: more cards
// first, then the folded name, then the name as printed.
func rankKey(dst []byte, ns int, cards uint64, folded, printed []byte) []byte {
	dst = append(dst, byte(ns))
	dst = binary.BigEndian.AppendUint32(dst, uint32(math.MaxUint32-min(cards, math.MaxUint32)))
	dst = append(append(dst, folded...), 0)
	return append(dst, printed...)
}

// writeCompletions writes the completions bucket from the sort of the
// cards' names: first the names, ranked, then the runs, then the first
// names of the prefixes that start many runs.
func (w *Writer) writeCompletions() error {
	dir := filepath.Dir(w.path)
	ranked := newSorter(dir, sortMemory)
	defer ranked.close()
	if err := w.rankNames(ranked); err != nil {
		return fmt.Errorf("write catalogue %s: names: %w", w.path, err)
	}
	keys := newSorter(dir, w.runSortMemory)
	keys.runs.fanIn = w.mergeFanIn
	defer keys.close()
	spans, err := w.writeNames(ranked, keys)
	if err != nil {
		return fmt.Errorf("write catalogue %s: names: %w", w.path, err)
	}
	if err := w.addGroupForms(keys, spans.end()); err != nil {
		return fmt.Errorf("write catalogue %s: names: %w", w.path, err)
	}
	tops := newSorter(dir, wordSortMemory)
	defer tops.close()
	if err := w.writeRuns(keys, spans, tops); err != nil {
		return fmt.Errorf("write catalogue %s: names: %w", w.path, err)
	}
	return tops.each(func(key, value []byte) error { return w.putOrdered(bucketCompletions, key, value) })
}

// rankNames counts the cards of each distinct name and adds it to ranked
// under the key that ranks it among every zone's names.
func (w *Writer) rankNames(ranked *sorter) error {
	var cur pendingName
	var printed, folded []byte
	var classes []byte
	var key, value, record []byte
	flush := func() error {
		if printed == nil {
			return nil
		}
		cur.forms = append(cur.forms[:0], folded)
		for _, class := range classes {
			r := Romanize(string(folded), classLanguage(class))
			if r != "" && r != string(folded) && !slices.ContainsFunc(cur.forms, func(f []byte) bool { return string(f) == r }) {
				cur.forms = append(cur.forms, []byte(r))
			}
		}
		ids := w.groups.appendGroupIDs(cur.groups[:0], folded)
		cur.groups, _, _ = lengthPrefixed(ids)
		record = cur.append(record[:0])
		value = appendPending(value[:0], record, &cur)
		return ranked.add(rankKey(key[:0], 0, cur.count(0), folded, printed), value)
	}
	err := w.cardNames.each(func(k, v []byte) error {
		name, rest, ok := lengthPrefixed(k)
		if !ok || len(rest) != 2 || int(rest[0]) >= len(cur.cards) || len(v) < 5 {
			return errBadEntry
		}
		if printed == nil || !bytes.Equal(name, printed) {
			if err := flush(); err != nil {
				return err
			}
			n, w := binary.Uvarint(v[4:])
			if w <= 0 || n > uint64(len(v)-4-w) {
				return errBadEntry
			}
			printed = append(printed[:0], name...)
			folded = append(folded[:0], v[4+w:4+w+int(n)]...)
			cur.cards, cur.ords, classes = [3]uint64{}, cur.ords[:0], classes[:0]
		}
		cur.cards[rest[0]]++
		ord := binary.BigEndian.Uint32(v)
		if i := bytes.IndexByte(classes, rest[1]); i < 0 {
			classes = append(classes, rest[1])
			cur.ords = append(cur.ords, ord)
		} else {
			cur.ords[i] = min(cur.ords[i], ord)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return flush()
}

// classLanguage is a language of the romanization class.
func classLanguage(class byte) string {
	if class == romanizeClass("zh") {
		return "zh"
	}
	return ""
}

// nameSpans are where each namespace's ordinals start, then where the last
// ends.
type nameSpans [namespaces + 1]uint32

// end is where the last namespace's ordinals end: groups are numbered
// from there in the runs being built.
func (s *nameSpans) end() uint32 { return s[namespaces] }

func (s *nameSpans) namespaceOf(ord uint32) int {
	ns := 0
	for ns+1 < namespaces && ord >= s[ns+1] {
		ns++
	}
	return ns
}

// writeNames numbers the names in rank order, first among every zone's,
// then among each zone's, writes their records in blocks and adds to keys
// an entry for each of their groups, forms and words, under which
// writeRuns finds their runs.
func (w *Writer) writeNames(ranked, keys *sorter) (nameSpans, error) {
	inZones := newSorter(filepath.Dir(w.path), sortMemory)
	defer inZones.close()
	nw := nameWriter{w: w, keys: keys}
	var n pendingName
	var key, value, record []byte
	err := ranked.each(func(k, v []byte) error {
		rec, err := decodePending(&n, v)
		if err != nil {
			return err
		}
		if _, _, err := decodeNameRecord(&n.nameRecord, rec); err != nil {
			return err
		}
		ord := nw.ord
		if err := nw.add(0, rec, &n); err != nil {
			return err
		}
		record = binary.AppendUvarint(append(record[:0], recordInZone), uint64(ord))
		value = appendPending(value[:0], record, &n)
		printed := k[bytes.IndexByte(k[5:], 0)+6:]
		for z, c := range n.cards {
			if c > 0 {
				if err := inZones.add(rankKey(key[:0], 1+z, c, n.forms[0], printed), value); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return nw.spans, err
	}
	err = inZones.each(func(k, v []byte) error {
		rec, err := decodePending(&n, v)
		if err != nil {
			return err
		}
		return nw.add(int(k[0]), rec, &n)
	})
	if err != nil {
		return nw.spans, err
	}
	return nw.spans, nw.end()
}

// nameWriter numbers names and writes their records in blocks.
type nameWriter struct {
	w           *Writer
	keys        *sorter
	ord         uint32
	ns          int
	spans       nameSpans
	ends        []uint32
	data, value []byte
	key         []byte
}

// add writes the record of the next name, of namespace ns, and adds the
// entries of its runs to keys.
func (nw *nameWriter) add(ns int, record []byte, n *pendingName) error {
	for ; nw.ns < ns; nw.ns++ {
		nw.spans[nw.ns+1] = nw.ord
	}
	if nw.ord == math.MaxUint32 {
		return fmt.Errorf("more than %d names", uint32(math.MaxUint32))
	}
	ord := nw.ord
	ok := eachGroupID(n.groups, func(id uint32) bool {
		nw.key = binary.BigEndian.AppendUint32(append(nw.key[:0], completeGroup), id)
		return addRunKey(nw.keys, nw.key, ord) == nil
	})
	if !ok {
		return errBadEntry
	}
	if err := addFormKeys(nw.keys, n.forms, ord); err != nil {
		return err
	}
	nw.data = append(nw.data, record...)
	nw.ends = append(nw.ends, uint32(len(nw.data)))
	nw.ord++
	if nw.ord%nameBlockSize == 0 {
		return nw.flush()
	}
	return nil
}

func (nw *nameWriter) flush() error {
	var block [5]byte
	block[0] = completeNames
	binary.BigEndian.PutUint32(block[1:], (nw.ord-1)/nameBlockSize)
	nw.value = appendIndexBlock(nw.value[:0], nw.ends, nw.data)
	nw.ends, nw.data = nw.ends[:0], nw.data[:0]
	return nw.w.putOrdered(bucketCompletions, block[:], nw.value)
}

// end writes the last block and the spans of the namespaces.
func (nw *nameWriter) end() error {
	if len(nw.ends) > 0 {
		if err := nw.flush(); err != nil {
			return err
		}
	}
	for ; nw.ns < namespaces; nw.ns++ {
		nw.spans[nw.ns+1] = nw.ord
	}
	var value []byte
	for _, s := range nw.spans {
		value = binary.BigEndian.AppendUint32(value, s)
	}
	return nw.w.putOrdered(bucketCompletions, []byte{completeSpans}, value)
}

// addRunKey adds ord to the run of key: the sort of the runs holds the
// run's key, then the ordinal.
func addRunKey(keys *sorter, key []byte, ord uint32) error {
	return keys.add(binary.BigEndian.AppendUint32(key, ord), nil)
}

// addFormKeys adds ord, a name's ordinal or a group's, to the runs of its
// forms and of each distinct word of them.
func addFormKeys(keys *sorter, forms [][]byte, ord uint32) error {
	var key []byte
	add := func(k byte, term []byte) error {
		if len(term) == 0 || bytes.IndexByte(term, 0) >= 0 {
			return nil // no query holds a zero byte
		}
		key = append(append(append(key[:0], k), term...), 0)
		return addRunKey(keys, key, ord)
	}
	var err error
	var seen [16][]byte
	words := seen[:0]
	for i, f := range forms {
		if slices.ContainsFunc(forms[:i], func(g []byte) bool { return bytes.Equal(f, g) }) {
			continue
		}
		if err == nil {
			err = add(completeForm, f)
		}
		eachWord(f, func(word []byte) {
			if err == nil && !slices.ContainsFunc(words, func(w []byte) bool { return bytes.Equal(w, word) }) {
				words = append(words, word)
				err = add(completeWord, word)
			}
		})
	}
	return err
}

// addGroupForms adds every group, as the ordinal groups+id, to the runs
// of its forms: its names, folded, and their romanized forms.
func (w *Writer) addGroupForms(keys *sorter, groups uint32) error {
	var forms [][]byte
	for id, names := range w.groups.folded {
		forms = forms[:0]
		for _, f := range names {
			forms = append(forms, []byte(f))
			if r := Romanize(f, "zh"); r != "" && r != f {
				forms = append(forms, []byte(r))
			}
		}
		if uint64(groups)+uint64(id) > math.MaxUint32 {
			return fmt.Errorf("more than %d names and groups", uint32(math.MaxUint32))
		}
		if err := addFormKeys(keys, forms, groups+uint32(id)); err != nil {
			return err
		}
	}
	return nil
}
