package layout

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/catalogd/catalogd/catalog"
)

// StoredSet is a set as the sets bucket holds it. Its slices are valid as
// long as the transaction it was read in.
type StoredSet struct {
	Total  int64  // cards actually in the file, which is what listing returns
	Prefix []byte // of the keys of its cards in the cards bucket; prefix[0] is the zone byte
	Code   []byte
	JSON   []byte
}

// ErrBadSet is the error of a set's record that does not decode.
var ErrBadSet = errors.New("malformed set record")

// ReadStoredSet decodes a value of the sets bucket.
func ReadStoredSet(v []byte) (StoredSet, error) {
	if len(v) < 10 {
		return StoredSet{}, ErrBadSet
	}
	s := StoredSet{Total: int64(binary.BigEndian.Uint64(v))}
	code, rest, ok := LengthPrefixed(v[9:])
	if !ok {
		return StoredSet{}, ErrBadSet
	}
	s.Prefix, s.Code, s.JSON = v[8:len(v)-len(rest)], code, rest
	return s, nil
}

// Zone is the catalog.ZoneIndex of the set's zone, as a byte.
func (s *StoredSet) Zone() byte { return s.Prefix[0] }

// Set decodes the set's record.
func (s *StoredSet) Set() (catalog.Set, error) {
	var out catalog.Set
	if err := json.Unmarshal(s.JSON, &out); err != nil {
		return catalog.Set{}, fmt.Errorf("%w: %w", ErrBadSet, err)
	}
	return out, nil
}

// AppendSetCodeKey appends the key of the set (zone, code) in setCodes.
func AppendSetCodeKey(dst []byte, zone byte, code string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(code)))
	return append(append(dst, code...), zone)
}

// AppendSetValue appends the value of a set in the sets bucket.
func AppendSetValue(dst []byte, s *catalog.Set, total int64) []byte {
	dst = binary.BigEndian.AppendUint64(dst, uint64(total))
	dst = AppendSetPrefix(dst, ZoneByte(s.Zone), s.Code)
	return s.AppendJSON(dst)
}

// AppendSetListKey appends the place of s in the list of sets
// (docs/CONTRACT.md, Endpoints) as bytes: sets with a release date first,
// the newest first (dates are all YYYY-MM-DD: their inverted bytes order
// them backwards), then by id.
func AppendSetListKey(dst []byte, s *catalog.Set) []byte {
	if !s.ReleasedOn.HasValue() {
		dst = append(dst, 1)
	} else {
		dst = append(dst, 0)
		for _, b := range []byte(s.ReleasedOn.Value) {
			dst = append(dst, ^b)
		}
	}
	return append(dst, s.ID...)
}
