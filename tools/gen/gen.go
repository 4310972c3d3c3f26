// Package gen writes synthetic catalogue snapshots of any size, for
// benchmarks and load tests: one JSON object {"sets":[...],"cards":[...]}
// with the fields and the cross-record rules of docs/CONTRACT.md (Records;
// Snapshots and validation), one record per line like the real TCGdex snapshot.
//
// The shapes follow testdata/catalogue-real.json.gz: the zone split, names
// drawn with their real frequencies, set codes and printed numbers of the
// real series, the share of missing and null fields per zone. What the real
// data lacks but the format allows is added on purpose, so that an importer
// meets it: printed numbers with "/total" or a space, variants other than
// "standard", an omitted variant, explicit nulls and absent optional fields.
//
// The output depends on Options only: same options, same bytes, on every
// platform and Go release (integer arithmetic and a private RNG only).
package gen

import (
	"bufio"
	"errors"
	"io"
	"os"
	"strconv"
	"time"
	"unicode/utf8"
)

// Options selects the snapshot. The zero value of CardsPerSet means
// DefaultCardsPerSet.
type Options struct {
	Cards       int    // total cards
	Seed        uint64 // same options → identical bytes
	CardsPerSet int    // average over the sets that have cards; sizes vary per set

	// DistinctNames makes the worst case for the search index: every card
	// name carries, after its real name, its running number and a word in
	// each of Latin, kana and Han script drawn at random, so that names
	// almost never repeat and the bigrams of names run into the millions.
	DistinctNames bool

	// SetNameSuffix ends every set name (and so every card's setName), and
	// SetCodeSuffix every set code (and so every set and card id): marks
	// that tell one snapshot of the same options from another, as a
	// catalogue that is imported again and again has.
	SetNameSuffix, SetCodeSuffix string

	// CardsFirst writes the cards before the sets: the members of a
	// snapshot come in any order, and then the import meets every card
	// before its set.
	CardsFirst bool
}

// DefaultCardsPerSet is the average set size when Options.CardsPerSet is 0.
const DefaultCardsPerSet = 150

// Stats counts what Write wrote (when it returns no error).
type Stats struct {
	Sets, Cards int
}

type setKind uint8

const (
	kindMain setKind = iota
	kindPromo
	kindKit    // trainer kits, starter decks, collections
	kindPocket // the digital game's sets: own rarities
)

type numStyle uint8

const (
	numPlain     numStyle = iota // 25
	numPad                       // 025
	numSlash                     // 25/102
	numPadSlash                  // 025/165
	numPrefix                    // SWSH001
	numCodeSlash                 // 001/SV-P
	numCodeSpace                 // SV-P 012
)

// setPlan is everything about a set that its cards need. The plan of every
// set is kept (memory O(sets)); cards are produced and written one at a time.
type setPlan struct {
	zone  int
	kind  setKind
	style numStyle
	id    string
	code  string
	// recordCode is the code in the records: code and the options'
	// SetCodeSuffix. Printed numbers and image URLs have code alone.
	recordCode string
	name       string
	lang       string
	folder     string
	promoNum   string
	promoPad   int
	day        int64 // release day (days since 1970-01-01), also for undated sets: it sets the era
	year       int
	dated      bool
	cards      int
	seed       uint64
	mkA, mkB   int // first marketplace ids of the set

	sparse     bool // a source without the optional fields: they are absent, not null
	marketPath bool
	scan       bool
	noVariant  bool // a source that leaves out "variant" (it means standard)
	totalNull  bool
}

// WriteFile writes the snapshot of opt to a new file at path.
func WriteFile(path string, opt Options) (Stats, error) {
	f, err := os.Create(path)
	if err != nil {
		return Stats{}, err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	stats, err := Write(w, opt)
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return stats, err
}

// Write streams a snapshot to w: all sets first, then all cards in the order
// of their sets.
func Write(w io.Writer, opt Options) (Stats, error) {
	if opt.Cards < 0 {
		return Stats{}, errors.New("gen: Cards must not be negative")
	}
	if opt.CardsPerSet < 0 {
		return Stats{}, errors.New("gen: CardsPerSet must not be negative")
	}
	if opt.CardsPerSet == 0 {
		opt.CardsPerSet = DefaultCardsPerSet
	}
	nm, err := loadNames()
	if err != nil {
		return Stats{}, err
	}
	tb, err := loadTables()
	if err != nil {
		return Stats{}, err
	}
	sets := plan(opt, nm.sets, tb)
	for i := range sets {
		sp := &sets[i]
		sp.name += opt.SetNameSuffix
		sp.id += opt.SetCodeSuffix
		sp.recordCode = sp.code + opt.SetCodeSuffix
	}

	var st Stats
	o := &output{w: w, buf: make([]byte, 0, outBufSize+8<<10)}
	writeSets := func() error {
		o.buf = append(o.buf, `"sets":[`...)
		for i := range sets {
			sp := &sets[i]
			o.sep(i)
			o.buf = appendSet(o.buf, sp, tb.Zones[sp.zone].Name)
			st.Sets++
			st.Cards += sp.cards
			if o.maybeFlush() != nil {
				return o.err
			}
		}
		o.buf = append(o.buf, "\n]"...)
		return nil
	}
	writeCards := func() error {
		o.buf = append(o.buf, `"cards":[`...)
		cw := &cardWriter{o: o, names: nm, tables: tb, distinct: opt.DistinctNames}
		for i := range sets {
			cw.writeSet(&sets[i])
			if o.err != nil {
				return o.err
			}
		}
		o.buf = append(o.buf, "\n]"...)
		return nil
	}
	first, second := writeSets, writeCards
	if opt.CardsFirst {
		first, second = writeCards, writeSets
	}
	o.buf = append(o.buf, '{')
	if err := first(); err != nil {
		return st, err
	}
	o.buf = append(o.buf, ',')
	if err := second(); err != nil {
		return st, err
	}
	o.buf = append(o.buf, "}\n"...)
	o.flush()
	return st, o.err
}

const outBufSize = 256 << 10

type output struct {
	w       io.Writer
	buf     []byte
	err     error
	records int
}

func (o *output) sep(i int) {
	if i > 0 {
		o.buf = append(o.buf, ',')
	}
	o.buf = append(o.buf, '\n')
}

func (o *output) maybeFlush() error {
	if len(o.buf) >= outBufSize {
		o.flush()
	}
	return o.err
}

func (o *output) flush() {
	if o.err == nil && len(o.buf) > 0 {
		_, o.err = o.w.Write(o.buf)
	}
	o.buf = o.buf[:0]
}

func appendPad(b []byte, n, width int) []byte {
	for d := digits(n); d < width; d++ {
		b = append(b, '0')
	}
	return strconv.AppendInt(b, int64(n), 10)
}

func digits(n int) int {
	d := 1
	for n >= 10 {
		n /= 10
		d++
	}
	return d
}

func dayOf(ymd [3]int) int64 {
	return time.Date(ymd[0], time.Month(ymd[1]), ymd[2], 0, 0, 0, 0, time.UTC).Unix() / 86400
}

func yearOf(day int64) int {
	return time.Unix(day*86400, 0).UTC().Year()
}

func appendDate(b []byte, day int64) []byte {
	y, m, d := time.Unix(day*86400, 0).UTC().Date()
	b = strconv.AppendInt(b, int64(y), 10)
	b = append(b, '-', byte('0'+m/10), byte('0'+m%10), '-', byte('0'+d/10), byte('0'+d%10))
	return b
}

// appendDistinct appends to a name what makes it distinct (see
// Options.DistinctNames): the serial number, then a Latin, a katakana and a
// Han word of random letters.
func appendDistinct(name []byte, r *rng, serial int) []byte {
	name = append(name, ' ')
	name = strconv.AppendInt(name, int64(serial), 10)
	name = append(name, ' ')
	for range 4 + r.intn(5) {
		name = append(name, byte('a'+r.intn(26)))
	}
	name = append(name, ' ')
	for range 2 + r.intn(4) {
		name = utf8.AppendRune(name, rune(0x30A2+r.intn(0x30F3-0x30A2)))
	}
	name = append(name, ' ')
	for range 2 + r.intn(3) {
		name = utf8.AppendRune(name, rune(0x4E00+r.intn(0x9FA5-0x4E00)))
	}
	return name
}
