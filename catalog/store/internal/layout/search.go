package layout

import (
	"encoding/binary"
)

// IndexEntry is a decoded entry of the numbers bucket. Edits is not
// stored: a fuzzy search keeps there what it found of the entry.
type IndexEntry struct {
	Zone    byte
	ID      []byte
	SetCode []byte
	Number  []byte // the key of the normalized printed number
	Groups  []byte // the card's name groups, uvarint group indexes
	Name    []byte // the search text: SearchText of the name
	Folded  int    // bytes of name that are the folded name
	Edits   int    // of a result of a fuzzy search: the sum of its terms' edits
}

// ErrBadEntry is the error of an index entry, or a value of the index,
// that does not decode: a damaged file, and so it is ErrDamaged too.
var ErrBadEntry error = badEntry{}

type badEntry struct{}

func (badEntry) Error() string        { return "malformed search index entry" }
func (badEntry) Is(target error) bool { return target == ErrDamaged }

// DecodeIndexEntry decodes an entry of a block of the numbers bucket.
func DecodeIndexEntry(v []byte) (IndexEntry, error) {
	var e IndexEntry
	if len(v) < 1 {
		return e, ErrBadEntry
	}
	e.Zone = v[0]
	var ok1, ok2, ok3, ok4 bool
	e.ID, v, ok1 = LengthPrefixed(v[1:])
	e.SetCode, v, ok2 = LengthPrefixed(v)
	e.Number, v, ok3 = LengthPrefixed(v)
	e.Groups, v, ok4 = LengthPrefixed(v)
	if !ok1 || !ok2 || !ok3 || !ok4 {
		return e, ErrBadEntry
	}
	folded, w := binary.Uvarint(v)
	if w <= 0 || folded > uint64(len(v)-w) {
		return e, ErrBadEntry
	}
	e.Name, e.Folded = v[w:], int(folded)
	return e, nil
}

// LengthPrefixed splits a uvarint-prefixed field from the rest of v.
func LengthPrefixed(v []byte) (field, rest []byte, ok bool) {
	n, w := binary.Uvarint(v)
	if w <= 0 || uint64(len(v)-w) < n {
		return nil, nil, false
	}
	return v[w : w+int(n)], v[w+int(n):], true
}

// IndexBlock is a value of the numbers bucket: the count of its entries,
// the end of each entry as a 4-byte big-endian offset into the entries,
// then the entries.
type IndexBlock struct {
	ends    []byte
	entries []byte
}

func ReadIndexBlock(v []byte) (IndexBlock, error) {
	if len(v) < 1 || len(v) < 1+4*int(v[0]) {
		return IndexBlock{}, ErrBadEntry
	}
	n := int(v[0])
	return IndexBlock{ends: v[1 : 1+4*n], entries: v[1+4*n:]}, nil
}

func (b IndexBlock) Len() int { return len(b.ends) / 4 }

// Entry returns entry i, which must be below Len(), or nil when the
// offsets are out of order or out of bounds.
func (b IndexBlock) Entry(i int) []byte {
	start := uint32(0)
	if i > 0 {
		start = binary.BigEndian.Uint32(b.ends[4*(i-1):])
	}
	end := binary.BigEndian.Uint32(b.ends[4*i:])
	if start > end || end > uint32(len(b.entries)) {
		return nil
	}
	return b.entries[start:end]
}

// AppendIndexBlock appends the value of a block of the given entries, which
// ends holds the end offsets of, in data.
func AppendIndexBlock(dst []byte, ends []uint32, data []byte) []byte {
	dst = append(dst, byte(len(ends)))
	for _, end := range ends {
		dst = binary.BigEndian.AppendUint32(dst, end)
	}
	return append(dst, data...)
}
