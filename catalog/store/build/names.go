package build

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/catalogd/catalogd/catalog"
	"github.com/catalogd/catalogd/catalog/store/internal/layout"
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
	if errors.Is(err, catalog.ErrNameGroupsLimit) {
		return err // of the snapshot, not of the file
	} else if err != nil {
		return fmt.Errorf("write catalogue %s: %w", w.path, err)
	}
	var key [4]byte
	w.buf = appendGroupJSON(w.buf[:0], names)
	return w.putOrdered(layout.BucketNames, appendGroupKey(key[:0], id), w.buf)
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
	cur := w.tx.Bucket(layout.BucketNames).Cursor()
	return w.prev.View(func(tx layout.ReadTx) error {
		before, after := layout.ZoneNone, layout.ZoneNone
		same := true
		var k1, v1 []byte
		if b := tx.Bucket(layout.BucketNames); b != nil {
			c := b.Cursor()
			k1, v1 = c.First()
			if k1 != nil {
				before = layout.ZoneAll
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
			after = layout.ZoneAll
		}
		if before == after && (same || before == layout.ZoneNone) {
			return nil
		}
		return add(layout.ChangeNames, nil, before, after)
	})
}

// next2 moves two cursors on.
func next2(a, b *bolt.Cursor) (ka, va, kb, vb []byte) {
	ka, va = a.Next()
	kb, vb = b.Next()
	return ka, va, kb, vb
}
