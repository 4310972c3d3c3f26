package build

import (
	"encoding/binary"

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
