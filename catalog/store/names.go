package store

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/catalogd/catalogd/catalog"
	bolt "go.etcd.io/bbolt"
)

// AddNames adds a name group, valid by catalog.ValidateGroup. Groups may
// come before, between or after the cards they name: a card's groups are
// found when the index is written.
func (w *Writer) AddNames(names []string) error {
	if errs := catalog.ValidateGroup(names); errs != nil {
		return fmt.Errorf("write catalogue %s: name group: %w", w.path, errs[0])
	}
	id, err := w.groups.add(names)
	if err != nil {
		return fmt.Errorf("write catalogue %s: %w", w.path, err)
	}
	var key [4]byte
	w.buf = appendGroupJSON(w.buf[:0], names)
	return w.putOrdered(bucketNames, appendGroupKey(key[:0], id), w.buf)
}

// nameGroups are the groups of a catalogue being written: what finding a
// card's groups needs, and the text each group adds to the search text of
// its cards.
type nameGroups struct {
	byName  map[string][]uint32 // a folded name -> the groups that have it
	texts   []string            // each group's names, folded, and their romanized forms
	folded  [][]string          // each group's distinct names, folded
	longest int                 // bytes of the longest folded name
	lengths []bool              // whether a folded name has that many bytes
	bytes   int                 // of the names as given
}

// add remembers a group, valid by catalog.ValidateGroup, and returns its index.
func (g *nameGroups) add(names []string) (uint32, error) {
	if len(g.texts) >= catalog.MaxNameGroups {
		return 0, fmt.Errorf("%w: more than %d groups", catalog.ErrNameGroupsLimit, catalog.MaxNameGroups)
	}
	size := 0
	for _, n := range names {
		size += len(n)
	}
	if g.bytes+size > catalog.MaxNameGroupBytes {
		return 0, fmt.Errorf("%w: more than %d bytes of names in all", catalog.ErrNameGroupsLimit, catalog.MaxNameGroupBytes)
	}
	if g.byName == nil {
		g.byName = make(map[string][]uint32)
	}
	id := uint32(len(g.texts))
	var forms []string
	for _, n := range names {
		folded := catalog.Fold(n)
		if ids := g.byName[folded]; len(ids) == 0 || ids[len(ids)-1] != id {
			g.byName[folded] = append(ids, id)
		}
		g.longest = max(g.longest, len(folded))
		if len(g.lengths) <= len(folded) {
			g.lengths = append(g.lengths, make([]bool, len(folded)+1-len(g.lengths))...)
		}
		g.lengths[len(folded)] = true
		// A group says nothing of its names' languages: Han characters
		// are read as pinyin, for they are Chinese in every group that
		// also has a kana name.
		if !slices.Contains(forms, folded) {
			forms = append(forms, folded)
		}
		if r := catalog.ChangedWords(folded, catalog.Romanize(folded, "zh")); r != "" && !slices.Contains(forms, r) {
			forms = append(forms, r)
		}
	}
	g.texts = append(g.texts, strings.Join(forms, " "))
	var folded []string
	for _, n := range names {
		if f := catalog.Fold(n); !slices.Contains(folded, f) {
			folded = append(folded, f)
		}
	}
	g.folded = append(g.folded, folded)
	g.bytes += size
	return id, nil
}

// eachWholeWords calls fn with every run of whole words of a folded name,
// at most maxLen bytes long: every substring that starts and ends at a
// word boundary and neither starts nor ends with white space. A boundary
// is an end of the name, a separator (white space, punctuation, a symbol)
// on either side, or a change of script: so "リザードンex" holds
// "リザードン", "dark charizard" holds "charizard", "nidoran♀ ex" holds
// "nidoran♀", and "mewtwo" does not hold "mew".
func eachWholeWords(folded []byte, maxLen int, fn func(words []byte)) {
	// One pass finds where a run may start and where it may end; the
	// runs are the pairs of those.
	var startsBuf, endsBuf [32]int
	starts, ends := startsBuf[:0], endsBuf[:0]
	prev := rune(-1)
	for i, r := range string(folded) {
		bound := prev < 0 || isBoundary(prev, r)
		if bound && prev >= 0 && !unicode.IsSpace(prev) {
			ends = append(ends, i)
		}
		if bound && !unicode.IsSpace(r) {
			starts = append(starts, i)
		}
		prev = r
	}
	if prev >= 0 && !unicode.IsSpace(prev) {
		ends = append(ends, len(folded))
	}
	for _, s := range starts {
		for _, e := range ends {
			if e-s > maxLen {
				break
			}
			if e > s {
				fn(folded[s:e])
			}
		}
	}
}

// isBoundary reports whether a word ends between a and b, neighbours in a
// name.
func isBoundary(a, b rune) bool {
	return isNameSeparator(a) || isNameSeparator(b) || scriptChange(a, b)
}

// isNameSeparator reports whether r separates words: white space,
// punctuation or a symbol.
func isNameSeparator(r rune) bool {
	if letterBlock(r) != 0 {
		return false
	}
	return unicode.IsSpace(r) || unicode.IsPunct(r) || unicode.IsSymbol(r)
}

// scriptChange reports whether a and b, neighbours in a name, are letters
// of two scripts. Digits, marks and the signs every script uses (the long
// mark ー among them) belong to none, so they change nothing.
func scriptChange(a, b rune) bool {
	sa, sb := scriptOf(a), scriptOf(b)
	return sa != 0 && sb != 0 && sa != sb
}

// scripts are the scripts of the names of the catalogue, told apart; a
// letter of any other is its own kind.
var scripts = []*unicode.RangeTable{unicode.Latin, unicode.Katakana, unicode.Hiragana, unicode.Han, unicode.Hangul, unicode.Cyrillic, unicode.Greek, unicode.Thai}

func scriptOf(r rune) int {
	if r < utf8.RuneSelf {
		if 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' {
			return 1
		}
		return 0
	}
	if s := letterBlock(r); s != 0 {
		return s
	}
	if unicode.Is(unicode.Lm, r) {
		return 0 // a modifier, as the long mark ー: of no script
	}
	for i, t := range scripts {
		if unicode.Is(t, r) {
			if t == unicode.Hiragana {
				return 2 // kana are one script: folded names hold katakana
			}
			return i + 1
		}
	}
	if unicode.IsLetter(r) {
		return len(scripts) + 1
	}
	return 0
}

// letterBlock returns the script of r when r is in a range of letters of
// one script that most names of the catalogue are written in (Han
// ideographs, katakana, hiragana), and 0 otherwise: it spares the search of
// Unicode's tables for nearly every character of a Japanese or Chinese
// name.
func letterBlock(r rune) int {
	switch {
	case 0x4E00 <= r && r <= 0x9FFF:
		return 4 // unicode.Han in scripts
	case 0x30A1 <= r && r <= 0x30FA, 0x3041 <= r && r <= 0x3096:
		return 2 // kana
	}
	return 0
}

// appendGroupKey appends the key of group id in the names bucket.
func appendGroupKey(dst []byte, id uint32) []byte { return binary.BigEndian.AppendUint32(dst, id) }

// appendGroupJSON appends the canonical JSON of a group: its names as
// given, escaped as the records are.
func appendGroupJSON(dst []byte, names []string) []byte {
	dst = append(dst, '[')
	for i, n := range names {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = catalog.AppendJSONString(dst, n)
	}
	return append(dst, ']')
}

// diffNames compares the name groups of both files, which change as one
// record: their list, in order.
func (w *Writer) diffNames(add func(kind byte, id []byte, before, after byte) error) error {
	cur := w.tx.Bucket(bucketNames).Cursor()
	return w.prev.read(func(r *reader) error {
		before, after := zoneNone, zoneNone
		same := true
		var k1, v1 []byte
		if b := r.tx.Bucket(bucketNames); b != nil {
			c := b.Cursor()
			k1, v1 = c.First()
			if k1 != nil {
				before = zoneAll
			}
			k2, v2 := cur.First()
			for ; k1 != nil || k2 != nil; k1, v1, k2, v2 = next2(c, cur) {
				if !bytes.Equal(k1, k2) || !bytes.Equal(v1, v2) {
					same = false
					break
				}
			}
		}
		if k, _ := cur.First(); k != nil {
			after = zoneAll
		}
		if before == after && (same || before == zoneNone) {
			return nil
		}
		return add(changeNames, nil, before, after)
	})
}

// next2 moves two cursors on.
func next2(a, b *bolt.Cursor) (ka, va, kb, vb []byte) {
	ka, va = a.Next()
	kb, vb = b.Next()
	return ka, va, kb, vb
}
