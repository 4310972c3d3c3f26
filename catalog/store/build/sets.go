package build

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/catalogd/catalogd/catalog/store/internal/layout"
)

// setListPiece is the size a piece of a list of sets grows to before the
// next begins. listSets writes the pieces one by one: each write of a
// piece is a send on the connection, and a megabyte in one send cost the
// server about half what it did in 32 sends of 32 KiB (docs/BENCHMARKS.md,
// "The list of sets"). The import holds one piece of each of the four lists at once.
const setListPiece = 1 << 20

// setListWriter writes the pieces of one list of sets.
type setListWriter struct {
	list  byte
	n     uint32 // pieces written
	piece []byte
	key   [5]byte
}

func (l *setListWriter) add(w *Writer, set []byte) error {
	if len(l.piece) == 0 && l.n == 0 {
		l.piece = append(l.piece, '[')
	} else {
		l.piece = append(l.piece, ',')
	}
	l.piece = append(l.piece, set...)
	if len(l.piece) < w.limits.SetListPiece {
		return nil
	}
	return l.flush(w)
}

func (l *setListWriter) flush(w *Writer) error {
	l.key[0] = l.list
	binary.BigEndian.PutUint32(l.key[1:], l.n)
	l.n++
	err := w.putOrdered(layout.BucketSetLists, l.key[:], l.piece)
	l.piece = l.piece[:0]
	return err
}

// end writes the last piece, which closes the array.
func (l *setListWriter) end(w *Writer) error {
	if len(l.piece) == 0 && l.n == 0 {
		l.piece = append(l.piece, '[')
	}
	l.piece = append(l.piece, ']')
	return l.flush(w)
}

// writeSetTotals puts in each set's record the number of its cards, and in
// setBytes the bytes of their JSON (see internal/layout/export.go), from the runs of its
// cards.
func (w *Writer) writeSetTotals() error {
	var set []byte
	var total, size int64
	flush := func() error {
		if set == nil {
			return nil
		}
		// The set prefix, then the set code key: the zone byte moves to
		// the end.
		code, _, ok := layout.LengthPrefixed(set[1:])
		if !ok {
			return fmt.Errorf("write catalogue %s: malformed set prefix %q", w.path, set)
		}
		w.key = layout.AppendSetCodeKey(w.key[:0], set[0], string(code))
		id := w.tx.Bucket(layout.BucketSetCodes).Get(w.key)
		if id == nil {
			return nil // cards of no set: the importer reports them
		}
		sets := w.tx.Bucket(layout.BucketSets)
		v := sets.Get(id)
		if len(v) < 8 {
			return fmt.Errorf("write catalogue %s: set %q: %w", w.path, id, layout.ErrBadSet)
		}
		w.buf = binary.BigEndian.AppendUint64(w.buf[:0], uint64(total))
		w.buf = append(w.buf, v[8:]...)
		if err := w.putOrdered(layout.BucketSets, bytes.Clone(id), w.buf); err != nil {
			return err
		}
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(size))
		return w.putOrdered(layout.BucketSetBytes, set, n[:])
	}
	err := w.runCounts.each(func(prefix, run []byte) error {
		if !bytes.Equal(prefix, set) {
			if err := flush(); err != nil {
				return err
			}
			set, total, size = append(set[:0], prefix...), 0, 0
		}
		total += int64(binary.BigEndian.Uint64(run[:8]))
		size += int64(binary.BigEndian.Uint64(run[8:]))
		return nil
	})
	if err != nil {
		return err
	}
	return flush()
}

// writeSetLists writes the list of every set and that of each zone, in
// list order.
func (w *Writer) writeSetLists() error {
	lists := [4]setListWriter{{list: 0}, {list: 1}, {list: 2}, {list: 3}}
	err := w.setOrder.each(func(key, v []byte) error {
		// The zone byte, the id, uvarint-length-prefixed, then the set's
		// JSON.
		id, set, ok := layout.LengthPrefixed(v[1:])
		if !ok {
			return fmt.Errorf("write catalogue %s: sets: malformed sort entry", w.path)
		}
		if err := w.putOrdered(layout.BucketSetOrder, key, id); err != nil {
			return err
		}
		if err := lists[0].add(w, set); err != nil {
			return err
		}
		return lists[1+v[0]].add(w, set)
	})
	if err != nil {
		return err
	}
	for i := range lists {
		if err := lists[i].end(w); err != nil {
			return err
		}
	}
	return nil
}
