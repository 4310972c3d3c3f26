package build

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"unicode/utf8"

	"github.com/blevesearch/vellum"
	"github.com/catalogd/catalogd/catalog"
	"github.com/catalogd/catalogd/catalog/store/internal/layout"
)

const (
	minBackwardWord = layout.TwoEditsFrom - 2

	// wordPieceBytes bounds a piece of the dictionary: what the import
	// holds of it before it is put, and what one value of the file is.
	wordPieceBytes = 2 << 20

	// wordSortMemory bounds the sort of the words before they spill.
	wordSortMemory = 8 << 20
)

// wordScript returns the script of a word: that of its first letter of a
// script (catalog.ScriptOf), 0 when it has none. A change of script ends a word
// (catalog.EachWord), so its other letters are of that script too, or of none.
// A term within a few edits of a word shares most of its letters, so it
// is looked for among the words of its own scripts only: a Latin term
// never walks the millions of Han and kana words.
func wordScript(word []byte) byte {
	for _, r := range string(word) {
		if s := catalog.ScriptOf(r); s != 0 {
			return byte(s)
		}
	}
	return 0
}

// addWords adds the words of a text to the sorts of the dictionary, each
// after its script and with card, the ordinal of the card whose search
// text it is (layout.GroupWord for a name group's): forward, and backward
// those that a term of two edits may be near. Sorted, each word's cards
// are in a row (buildWordPieces).
func addWords(forward, backward *sorter, text []byte, card uint32) error {
	var err error
	var key []byte
	var value [4]byte
	binary.BigEndian.PutUint32(value[:], card)
	catalog.EachWord(text, func(word []byte) {
		if err != nil || !layout.DictWord(word) {
			return
		}
		key = append(append(key[:0], wordScript(word)), word...)
		if err = forward.add(key, value[:]); err == nil && utf8.RuneCount(word) >= minBackwardWord {
			key = layout.AppendReversed(key[:1], word)
			err = backward.add(key, value[:])
		}
	})
	return err
}

// wordBuild builds the dictionary in a goroutine of its own, beside the
// writing of the index: it takes the search texts as the entries are
// written, in batches, sorts their words, and once the last text is in,
// builds the pieces of the dictionary, which writeWords puts. It needs
// nothing of the file, and on two cores costs the import little time.
type wordBuild struct {
	texts  chan []byte // batches of cards' ordinals and their texts (add)
	batch  []byte
	closed bool
	pieces chan wordPiece
	stop   chan struct{}
	err    error // once pieces is closed
}

// wordPiece is a piece of the dictionary: forward or backward, and the
// script of its words.
type wordPiece struct {
	kind, script byte
	fst          []byte
}

// wordBatchBytes is the size of a batch of texts handed to the build, and
// recentTexts and recentTextBytes bound the texts it remembers so as not
// to add their words again once more cards than a word's value names have
// them: by their count, and by their bytes, for a name may fold to 16 KB
// (catalog.MaxNameLength), where real ones fold to some 30 bytes.
const (
	wordBatchBytes  = 64 << 10
	recentTexts     = 8192
	recentTextBytes = 2 << 20
)

// startWords starts the build of the dictionary from the words added to
// w.words so far and the texts add is given; w.words is the build's from
// now on.
func (w *Writer) startWords() *wordBuild {
	b := &wordBuild{texts: make(chan []byte, 4), pieces: make(chan wordPiece, 1), stop: make(chan struct{})}
	forward, backward := w.words, w.wordsBackward
	go func() {
		defer close(b.pieces)
		var err error
		// Names repeat: a text met lately on more cards than a word's
		// value names adds no word.
		seen, seenBytes := make(map[string]int), 0
		for batch := range b.texts {
			for len(batch) > 0 && err == nil {
				card, n := binary.Uvarint(batch)
				text, rest, ok := layout.LengthPrefixed(batch[max(n, 0):])
				if n <= 0 || card >= layout.GroupWord || !ok {
					err = layout.ErrBadEntry
					break
				}
				batch = rest
				if seen[string(text)] > layout.MaxWordCards {
					continue
				}
				if len(seen) == recentTexts || seenBytes+len(text) > recentTextBytes {
					clear(seen)
					seenBytes = 0
				}
				if seen[string(text)]++; seen[string(text)] == 1 {
					seenBytes += len(text)
				}
				err = cmp.Or(err, addWords(forward, backward, text, uint32(card)))
			}
		}
		for _, kind := range []byte{layout.WordsForward, layout.WordsBackward} {
			words := forward
			if kind == layout.WordsBackward {
				words = backward
			}
			if err == nil {
				err = buildWordPieces(words, func(script byte, fst []byte) bool {
					select {
					case b.pieces <- wordPiece{kind, script, fst}:
						return true
					case <-b.stop:
						return false
					}
				})
			}
		}
		b.err = err
	}()
	return b
}

// add hands the words of a card's search text to the build.
func (b *wordBuild) add(card uint32, text []byte) {
	b.batch = binary.AppendUvarint(b.batch, uint64(card))
	b.batch = binary.AppendUvarint(b.batch, uint64(len(text)))
	b.batch = append(b.batch, text...)
	if len(b.batch) >= wordBatchBytes {
		b.texts <- b.batch
		b.batch = nil
	}
}

// done tells the build that every text is in.
func (b *wordBuild) done() {
	if b.closed {
		return
	}
	if len(b.batch) > 0 {
		b.texts <- b.batch
	}
	close(b.texts)
	b.closed = true
}

// cancel stops the build and waits for it to end.
func (b *wordBuild) cancel() {
	b.done()
	close(b.stop)
	for range b.pieces {
	}
}

// writeWords puts the pieces of the dictionary as they are built.
func (w *Writer) writeWords(b *wordBuild) error {
	b.done()
	numbers := make(map[[2]byte]uint32)
	for piece := range b.pieces {
		at := [2]byte{piece.kind, piece.script}
		key := binary.BigEndian.AppendUint32(at[:], numbers[at])
		if err := w.putOrdered(layout.BucketWords, key, piece.fst); err != nil {
			b.cancel()
			return err
		}
		numbers[at]++
	}
	if b.err != nil {
		return fmt.Errorf("write catalogue %s: dictionary: %w", w.path, b.err)
	}
	return nil
}

// buildWordPieces builds FSTs of the sorted words, each once with the
// value of its cards (layout.WordValue), and gives each to put with the
// script of its words, when it has about wordPieceBytes or the script
// changes, until put returns false. Each sorted word starts with its
// script, and its value is the ordinal of a card that holds it.
func buildWordPieces(words *sorter, put func(script byte, piece []byte) bool) error {
	var piece bytes.Buffer
	var b *vellum.Builder
	var word []byte // the word met last, after its script
	var cards wordCards
	stopped := errors.New("stopped")
	flush := func() error {
		if b == nil {
			return nil
		}
		if err := b.Close(); err != nil {
			return err
		}
		b = nil
		if !put(word[0], bytes.Clone(piece.Bytes())) {
			return stopped
		}
		piece.Reset()
		return nil
	}
	insert := func() error {
		if word == nil {
			return nil
		}
		if b == nil {
			var err error
			if b, err = vellum.New(&piece, nil); err != nil {
				return err
			}
		}
		if err := b.Insert(word[1:], cards.value()); err != nil {
			return fmt.Errorf("word %q: %w", word[1:], err)
		}
		if piece.Len() >= wordPieceBytes {
			return flush()
		}
		return nil
	}
	err := words.each(func(w, value []byte) error {
		if len(w) < 2 || int(w[0]) >= layout.WordScripts || len(value) != 4 {
			return fmt.Errorf("sorted word %q: %w", w, layout.ErrBadEntry)
		}
		card := binary.BigEndian.Uint32(value)
		if word != nil && bytes.Equal(w, word) {
			cards.add(card)
			return nil
		}
		if err := insert(); err != nil {
			return err
		}
		if word != nil && w[0] != word[0] {
			if err := flush(); err != nil {
				return err
			}
		}
		word = append(word[:0], w...)
		cards = wordCards{}
		cards.add(card)
		return nil
	})
	if err == nil {
		err = insert()
	}
	if err == nil {
		err = flush()
	}
	if err == stopped {
		return nil
	}
	return err
}

// wordCards gathers the cards of a word for its value: none once it has
// more than layout.MaxWordCards, or a name group's.
type wordCards struct {
	cards [layout.MaxWordCards]uint32
	n     int
	many  bool
}

func (c *wordCards) add(card uint32) {
	switch {
	case c.many || slices.Contains(c.cards[:c.n], card): // a word twice in one text
	case c.n == len(c.cards) || card == layout.GroupWord:
		c.many = true
	default:
		c.cards[c.n] = card
		c.n++
	}
}

func (c *wordCards) value() uint64 {
	if c.many {
		return 0
	}
	slices.Sort(c.cards[:c.n])
	return layout.WordValue(c.cards[:c.n])
}
