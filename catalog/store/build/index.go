package build

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/catalogd/catalogd/catalog"
	"github.com/catalogd/catalogd/catalog/store/internal/layout"
)

// The search index as the Writer builds it: each card's entry, sorted into
// ordinal order by the numbers sorter, then written in blocks with the
// posting lists of every ordinal (docs/SEARCH.md).

// searchText is catalog.SearchText, remembering recent names: most repeat.
// The entry sort's goroutine calls it (entrySort).
func (w *Writer) searchText(name, language string) catalog.IndexText {
	// The key is the name after a byte for the romanization it takes.
	w.textKey = append(append(w.textKey[:0], romanizeClass(language)), name...)
	if t, ok := w.folded[string(w.textKey)]; ok {
		return t
	}
	t := catalog.NewIndexText(name, language)
	if len(t.Text) == t.Folded {
		// A copy: the folded name may be name or a part of it, and name a
		// part of the record's whole text.
		t.Text = strings.Clone(t.Text)
	}
	if len(w.folded) >= foldCacheSize || w.foldedBytes >= foldCacheBytes {
		clear(w.folded)
		w.foldedBytes = 0
	}
	w.folded[string(w.textKey)] = t
	w.foldedBytes += len(w.textKey) + len(t.Text)
	return t
}

// writeIndex writes the search index entries in ordinal order (zone, number
// key, id), numbering them, in blocks of IndexBlockSize, and the posting
// lists of those numbers.
func (w *Writer) writeIndex() error {
	groups, err := w.writeGroups()
	if err != nil {
		return err
	}
	postings := w.startPostings(groups)
	defer postings.close()
	groupStarts := w.groupWordStarts()
	words := w.startWords()
	var ord uint32
	var ends []uint32
	var data, value []byte
	var key [4]byte
	flush := func() error {
		binary.BigEndian.PutUint32(key[:], (ord-1)/layout.IndexBlockSize)
		value = layout.AppendIndexBlock(value[:0], ends, data)
		ends, data = ends[:0], data[:0]
		return w.putOrdered(layout.BucketNumbers, key[:], value)
	}
	var entry []byte
	err = w.numbers.each(func(_, sorted []byte) error {
		var err error
		var name []byte
		var class byte
		if entry, name, class, err = w.appendStoredEntry(entry[:0], sorted); errors.Is(err, ErrTooManyGroups) {
			return err // the snapshot's, not the file's
		} else if err != nil {
			return fmt.Errorf("write catalogue %s: search index: %w", w.path, err)
		}
		e, err := layout.DecodeIndexEntry(entry)
		if err != nil {
			return fmt.Errorf("write catalogue %s: search index: %w", w.path, err)
		}
		w.longestName = max(w.longestName, len(e.Name))
		w.cardNames.key = appendCardNameKey(w.cardNames.key[:0], name, e.Zone, class)
		w.cardNames.value = appendCardNameValue(w.cardNames.value[:0], ord, entryWordStarts(&e, groupStarts), &e)
		if err := w.cardNames.add(w.cardNames.key, w.cardNames.value); err != nil {
			return fmt.Errorf("write catalogue %s: names: %w", w.path, err)
		}
		words.add(ord, e.Name)
		if err := postings.add(ord, entry); err != nil {
			return fmt.Errorf("write catalogue %s: search index: %w", w.path, err)
		}
		data = append(data, entry...)
		ends = append(ends, uint32(len(data)))
		if ord == math.MaxUint32 {
			return fmt.Errorf("write catalogue %s: more than %d cards", w.path, uint32(math.MaxUint32))
		}
		ord++
		if ord%layout.IndexBlockSize == 0 {
			return flush()
		}
		return nil
	})
	if err != nil {
		words.cancel()
		return err
	}
	if len(ends) > 0 {
		if err := flush(); err != nil {
			words.cancel()
			return err
		}
	}
	words.done()
	if err := postings.done(); err != nil {
		words.cancel()
		return fmt.Errorf("write catalogue %s: search index: %w", w.path, err)
	}
	err = postings.write(func(key, value []byte) error {
		return w.putOrdered(layout.BucketPostings, key, value)
	})
	if err != nil {
		words.cancel()
		return err
	}
	return w.writeWords(words)
}

// groupWordStarts returns the layout.WordStarts of each group's text.
func (w *Writer) groupWordStarts() []uint64 {
	starts := make([]uint64, len(w.groups.texts))
	for id, text := range w.groups.texts {
		starts[id] = layout.WordStarts(0, []byte(text))
	}
	return starts
}

// entryWordStarts returns the layout.WordStarts of an entry's search text
// and its groups' texts, whose starts are groupStarts.
func entryWordStarts(e *layout.IndexEntry, groupStarts []uint64) uint64 {
	starts := layout.WordStarts(0, e.Name)
	layout.EachGroupID(e.Groups, func(id uint32) bool {
		if int(id) < len(groupStarts) {
			starts |= groupStarts[id]
		}
		return true
	})
	return starts
}

// appendSortedHead encodes what search needs of a card without reading
// the card, as the sort of the index holds it, but its search text: zone,
// id, set code, the key of its normalized number, its name as printed and
// the romanization its language takes (for autocomplete's names, not
// stored). The entry sort (entrySort) appends the bytes of its folded name
// and the text its name is searched by (catalog.SearchText), which starts
// with the folded name.
func appendSortedHead(dst []byte, c *catalog.Card, numberKey []byte) []byte {
	dst = append(dst, layout.ZoneByte(c.Zone))
	dst = binary.AppendUvarint(dst, uint64(len(c.ID)))
	dst = append(dst, c.ID...)
	dst = binary.AppendUvarint(dst, uint64(len(c.SetCode)))
	dst = append(dst, c.SetCode...)
	dst = binary.AppendUvarint(dst, uint64(len(numberKey)))
	dst = append(dst, numberKey...)
	dst = binary.AppendUvarint(dst, uint64(len(c.Name)))
	return append(append(dst, c.Name...), romanizeClass(c.Language))
}

// appendStoredEntry appends the entry the index stores for an entry of the
// sort: the same fields but the name and its romanization, which it
// returns, then the card's name groups (appendGroupIDs), then the bytes of
// the folded name and the text with no length (DecodeIndexEntry reads it).
func (w *Writer) appendStoredEntry(dst, sorted []byte) (entry, name []byte, class byte, err error) {
	fields := sorted[1:]
	var id []byte
	for i := range 3 {
		var field []byte
		var ok bool
		if field, fields, ok = layout.LengthPrefixed(fields); !ok {
			return dst, nil, 0, layout.ErrBadEntry
		}
		if i == 0 {
			id = field
		}
	}
	head := sorted[:len(sorted)-len(fields)]
	name, fields, ok := layout.LengthPrefixed(fields)
	if !ok || len(fields) == 0 {
		return dst, nil, 0, layout.ErrBadEntry
	}
	class, fields = fields[0], fields[1:]
	folded, w8 := binary.Uvarint(fields)
	if w8 <= 0 || folded > uint64(len(fields)-w8) {
		return dst, nil, 0, layout.ErrBadEntry
	}
	text := fields[w8:]
	if dst, err = w.groups.appendGroupIDs(append(dst, head...), text[:folded], name); err != nil {
		return dst, nil, 0, fmt.Errorf("card %s, %w", catalog.Quote(string(id)), err)
	}
	dst = binary.AppendUvarint(dst, folded)
	return append(dst, text...), name, class, nil
}
