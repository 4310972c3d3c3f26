package build

import (
	"bytes"
	"fmt"

	"github.com/catalogd/catalogd/catalog/store/internal/layout"
)

// writePageMarks marks every PageMarkEvery-th card of each set, from the
// keys of every card in the order of the cards bucket. The keys come from a
// sort of their own, not from a walk of the bucket: a walk would read every
// card back through the mapped file, and at ten million cards map
// gigabytes of it into the import.
func (w *Writer) writePageMarks() error {
	var prefix, key []byte
	var n uint64
	return w.cardKeys.each(func(card, _ []byte) error {
		setLen, ok := layout.SetPrefixLen(card)
		if !ok {
			return fmt.Errorf("write catalogue %s: page marks: malformed card key %q", w.path, card)
		}
		if !bytes.Equal(card[:setLen], prefix) {
			prefix, n = append(prefix[:0], card[:setLen]...), 0
		}
		if n > 0 && n%layout.PageMarkEvery == 0 {
			key = layout.AppendPageMarkKey(key[:0], prefix, n)
			if err := w.putOrdered(layout.BucketPageMarks, key, card); err != nil {
				return err
			}
		}
		n++
		return nil
	})
}
