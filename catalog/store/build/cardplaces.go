package build

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/catalogd/catalogd/catalog/store/internal/layout"
)

// The places of the cards' names (layout.CompletePlace): rankNames meets
// the cards name by name, before the names have places, and writeNames
// gives them places in rank order. Each name gets a sequence number in
// name order (pendingName.seq): rankNames writes each card with its name's
// to a file (cardSeqs), in that order; writeNames sorts each place by it
// (placeSeqs); writeCardPlaces reads the two side by side, and sorts the
// cards' places by card.

// placeSortMemory bounds the sorts of places by name and by card.
const placeSortMemory = 8 << 20

// cardSeqs is the file of each card with its name's sequence number, in
// name order, and the starts of its words.
type cardSeqs struct {
	f *os.File
	w *bufio.Writer
	r *bufio.Reader
}

// cardSeqSize is a card of the file: its name's sequence number and its
// ordinal, both 4-byte big-endian, its zone, then the 8-byte big-endian
// starts of its words.
const cardSeqSize = 17

func newCardSeqs(dir string) (*cardSeqs, error) {
	f, w, err := createRun(dir, ".catalogd-places-*")
	if err != nil {
		return nil, err
	}
	return &cardSeqs{f: f, w: w}, nil
}

func (c *cardSeqs) add(seq, ord uint32, zone byte, starts uint64) error {
	var rec [cardSeqSize]byte
	binary.BigEndian.PutUint32(rec[:], seq)
	binary.BigEndian.PutUint32(rec[4:], ord)
	rec[8] = zone
	binary.BigEndian.PutUint64(rec[9:], starts)
	_, err := c.w.Write(rec[:])
	return err
}

// rewind ends the writing and reads the file from its start.
func (c *cardSeqs) rewind() error {
	if err := c.w.Flush(); err != nil {
		return fmt.Errorf("write %s: %w", c.f.Name(), err)
	}
	if _, err := c.f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("rewind %s: %w", c.f.Name(), err)
	}
	c.r = bufio.NewReaderSize(c.f, 256<<10)
	return nil
}

// next reads the next card, ok false at the end of the file.
func (c *cardSeqs) next(rec *[cardSeqSize]byte) (ok bool, err error) {
	if _, err := io.ReadFull(c.r, rec[:]); err != nil {
		if err == io.EOF {
			return false, nil
		}
		return false, fmt.Errorf("read %s: %w", c.f.Name(), err)
	}
	return true, nil
}

func (c *cardSeqs) close() { c.f.Close() }

// writeCardPlaces writes the places of every card's name, in blocks of
// layout.PlaceBlockSize cards: the card's name's place in every zone's
// ranking, and in its zone's, and the starts of its words.
func (w *Writer) writeCardPlaces(cards *cardSeqs, placeSeqs *sorter) error {
	byCard := w.newPlaceSorter()
	defer byCard.close()
	if err := cards.rewind(); err != nil {
		return err
	}
	var rec [cardSeqSize]byte
	more, err := cards.next(&rec)
	if err != nil {
		return err
	}
	// The places of the name whose sequence number is seq, by place byte.
	var seq uint32
	var places [2 * namespaces]uint32
	var has [2 * namespaces]bool
	var key [4]byte
	var value []byte
	flush := func() error {
		for ; more && binary.BigEndian.Uint32(rec[:]) == seq; more, err = cards.next(&rec) {
			zone := 1 + rec[8]
			shared, own := zone, zone
			if has[0] {
				shared, own = 0, zone|zoneOnly
			}
			if int(own) >= len(has) || !has[shared] || !has[own] {
				return fmt.Errorf("card %d: no place for zone %d of name %d", binary.BigEndian.Uint32(rec[4:]), rec[8], seq)
			}
			copy(key[:], rec[4:8])
			value = layout.AppendCardPlaces(value[:0], places[shared], places[own], binary.BigEndian.Uint64(rec[9:]))
			if err := byCard.add(key[:], value); err != nil {
				return err
			}
		}
		has = [2 * namespaces]bool{}
		return err
	}
	err = placeSeqs.each(func(k, v []byte) error {
		if len(k) != 5 || len(v) != 4 || int(k[4]) >= len(has) {
			return layout.ErrBadEntry
		}
		if s := binary.BigEndian.Uint32(k); s != seq {
			if err := flush(); err != nil {
				return err
			}
			seq = s
		}
		places[k[4]], has[k[4]] = binary.BigEndian.Uint32(v), true
		return nil
	})
	if err == nil {
		err = flush()
	}
	if err == nil && more {
		err = fmt.Errorf("card %d: its name %d has no place", binary.BigEndian.Uint32(rec[4:]), binary.BigEndian.Uint32(rec[:]))
	}
	if err != nil {
		return err
	}
	return w.writePlaceBlocks(byCard)
}

// writePlaceBlocks writes the places sorted by card, which are every
// card's from the first ordinal on.
func (w *Writer) writePlaceBlocks(byCard *sorter) error {
	var next uint32
	var block []byte
	var key [5]byte
	key[0] = layout.CompletePlace
	put := func() error {
		binary.BigEndian.PutUint32(key[1:], (next-1)/layout.PlaceBlockSize)
		err := w.putOrdered(layout.BucketCompletions, key[:], block)
		block = block[:0]
		return err
	}
	err := byCard.each(func(k, v []byte) error {
		if len(k) != 4 || len(v) != layout.PlaceSize || binary.BigEndian.Uint32(k) != next {
			return errors.New("the cards' places are not one of each card")
		}
		block = append(block, v...)
		if next++; next%layout.PlaceBlockSize == 0 {
			return put()
		}
		return nil
	})
	if err == nil && len(block) > 0 {
		err = put()
	}
	return err
}
