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
	"strings"
	"time"
	"unicode/utf8"

	"github.com/catalogd/catalogd/catalog"
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
}

// DefaultCardsPerSet is the average set size when Options.CardsPerSet is 0.
const DefaultCardsPerSet = 150

// ZoneStats counts the records of one zone.
type ZoneStats struct {
	Sets, Cards int
}

// Stats describes the snapshot Write wrote (when it returns no error).
// Zones always has "intl", "jp" and "chn".
type Stats struct {
	Sets, Cards int
	Zones       map[string]ZoneStats
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
	zone     int
	kind     setKind
	style    numStyle
	id       string
	code     string
	name     string
	lang     string
	folder   string
	promoNum string
	promoPad int
	day      int64 // release day (days since 1970-01-01), also for undated sets: it sets the era
	year     int
	dated    bool
	cards    int
	seed     uint64
	mkA, mkB int // first marketplace ids of the set

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
	sets := plan(opt, nm.sets)

	st := Stats{Zones: map[string]ZoneStats{}}
	for _, z := range zones {
		st.Zones[z.name] = ZoneStats{}
	}
	o := &output{w: w, buf: make([]byte, 0, outBufSize+8<<10)}
	o.buf = append(o.buf, `{"sets":[`...)
	for i := range sets {
		sp := &sets[i]
		o.sep(i)
		o.buf = appendSet(o.buf, sp)
		zs := st.Zones[zones[sp.zone].name]
		zs.Sets++
		zs.Cards += sp.cards
		st.Zones[zones[sp.zone].name] = zs
		st.Sets++
		st.Cards += sp.cards
		if o.maybeFlush() != nil {
			return st, o.err
		}
	}
	o.buf = append(o.buf, "\n],\"cards\":["...)
	cw := &cardWriter{o: o, names: nm, distinct: opt.DistinctNames}
	for i := range sets {
		cw.writeSet(&sets[i])
		if o.err != nil {
			return st, o.err
		}
	}
	o.buf = append(o.buf, "\n]}\n"...)
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

// ---- planning ----

func plan(opt Options, setNames map[string][]string) []setPlan {
	var totals [3]int
	rest := opt.Cards
	for z := range zones {
		if z == len(zones)-1 {
			totals[z] = rest
		} else {
			totals[z] = opt.Cards * zones[z].cardMil / 1000
			rest -= totals[z]
		}
	}
	var all []setPlan
	var jp []setPlan
	for z := range zones {
		r := newRNG(mix(opt.Seed, uint64(z)+1))
		sets := planZone(z, totals[z], opt.CardsPerSet, r, jp, setNames)
		if z == zoneJP {
			jp = sets
		}
		all = append(all, sets...)
	}
	for i := range all {
		all[i].seed = mix(opt.Seed, uint64(i)+1<<32)
	}
	return all
}

func planZone(z, total, perSet int, r *rng, jp []setPlan, setNames map[string][]string) []setPlan {
	zi := &zones[z]
	var sizes []int
	for rest := total; rest > 0; {
		s := max(1, (perSet*sizeMilles[r.intn(len(sizeMilles))]+500)/1000)
		s = min(s, rest)
		sizes = append(sizes, s)
		rest -= s
	}
	// Sets without cards are spread over the timeline, as in the real data:
	// shuffle where the empty ones go, then fill the rest in order.
	empty := len(sizes) * zi.emptySetMil / (1000 - zi.emptySetMil)
	n := len(sizes) + empty
	isEmpty := make([]bool, n)
	for i := range empty {
		isEmpty[i] = true
	}
	for i := n - 1; i > 0; i-- {
		j := r.intn(i + 1)
		isEmpty[i], isEmpty[j] = isEmpty[j], isEmpty[i]
	}
	all := make([]int, 0, n)
	for _, e := range isEmpty {
		if e {
			all = append(all, 0)
		} else {
			all = append(all, sizes[0])
			sizes = sizes[1:]
		}
	}
	sizes = all
	if n == 0 {
		return nil
	}
	first, last := dayOf(zi.first), dayOf(zi.last)
	span := last - first
	step := max(1, span/int64(n))

	sets := make([]setPlan, n)
	c := &coder{r: r, used: map[string]bool{}, states: map[string]*seriesState{}}
	jpAt := 0
	jpCopied := make([]bool, len(jp))
	for i := range sets {
		sp := &sets[i]
		sp.zone = z
		sp.cards = sizes[i]
		sp.day = first + span*int64(i)/int64(n) + int64(r.intn(int(step)))
		sp.year = yearOf(sp.day)
		sp.dated = !r.mil(zi.undatedSetMil)

		switch z {
		case zoneIntl:
			sp.lang = "en"
			c.intl(sp)
		case zoneJP:
			sp.lang = "ja"
			c.jp(sp)
		case zoneCHN:
			sp.lang = "zh-tw"
			if sp.year >= 2020 && r.mil(300) {
				sp.lang = "zh-cn"
			}
			// A Japanese set printed in Traditional Chinese keeps its code.
			if sp.lang == "zh-tw" && r.mil(450) {
				for jpAt < len(jp) && (jp[jpAt].day < sp.day-730 || jpCopied[jpAt]) {
					jpAt++
				}
				if jpAt < len(jp) && jp[jpAt].day <= sp.day && jp[jpAt].year >= 2019 && c.take(jp[jpAt].code) {
					src := &jp[jpAt]
					jpCopied[jpAt] = true
					sp.code, sp.kind, sp.folder = src.code, src.kind, src.folder
				}
			}
			if sp.code == "" {
				c.chn(sp)
			}
		}
		sp.id = zi.name + "-" + sp.code
		sp.style = chooseStyle(sp, r)

		sp.sparse = r.mil(30)
		sp.marketPath = z != zoneCHN && r.mil(80)
		sp.scan = r.mil(50)
		sp.noVariant = r.mil(80)
		sp.totalNull = sp.kind == kindPromo || r.mil(10)
		sp.mkA = 40000 + i*400 + r.intn(300)
		sp.mkB = 270000 + i*400 + r.intn(300)
		if z == zoneJP {
			sp.mkA += 500000
			sp.mkB += 290000
		}
	}
	nameSets(sets, setNames)
	return sets
}

// nameSets gives each set a real set name of its language, following the
// timeline (early sets get early names). When there are more sets than real
// names, a name comes back with a wave number, the way real reprints do.
func nameSets(sets []setPlan, pools map[string][]string) {
	count := map[string]int{}
	for i := range sets {
		count[sets[i].lang]++
	}
	seen := map[string]int{}
	pos := map[string]int{}
	for i := range sets {
		sp := &sets[i]
		pool := pools[sp.lang]
		idx := pos[sp.lang] * len(pool) / count[sp.lang]
		pos[sp.lang]++
		name := pool[idx]
		seen[name]++
		if k := seen[name]; k > 1 {
			switch sp.lang {
			case "en":
				name += " " + strconv.Itoa(k)
			case "ja":
				name += " 第" + strconv.Itoa(k) + "弾"
			case "zh-tw":
				name += " 第" + strconv.Itoa(k) + "彈"
			default:
				name += " 第" + strconv.Itoa(k) + "弹"
			}
		}
		sp.name = name
	}
}

func chooseStyle(sp *setPlan, r *rng) numStyle {
	roll := r.intn(1000)
	switch {
	case sp.kind == kindPocket:
		return numPad
	case sp.kind == kindPromo && sp.zone == zoneIntl:
		if sp.promoNum != "" {
			return numPrefix
		}
		if sp.year >= 2023 {
			return numPad
		}
		return numPlain
	case sp.kind == kindPromo && sp.zone == zoneJP:
		if roll < 600 {
			return numCodeSlash
		} else if roll < 850 {
			return numPad
		}
		return numCodeSpace
	case sp.kind == kindPromo:
		if roll < 500 {
			return numPad
		}
		return numCodeSpace
	case sp.zone == zoneIntl && sp.year < 2023:
		if roll < 850 {
			return numPlain
		}
		return numSlash
	case sp.zone == zoneIntl:
		if roll < 700 {
			return numPad
		} else if roll < 850 {
			return numPadSlash
		}
		return numPlain
	case sp.zone == zoneJP:
		if roll < 700 {
			return numPad
		}
		return numPadSlash
	}
	if roll < 750 {
		return numPad
	}
	return numPadSlash
}

// ---- set codes ----

type seriesState struct {
	n      int // last main number
	letter int // lettered sets already made after n (a, b, c)
	promo  bool
}

// coder makes the set codes of one zone. Codes are unique within the zone
// even ignoring case, as in the real data.
type coder struct {
	r      *rng
	used   map[string]bool
	states map[string]*seriesState
	pop    int
	pocket int
	cbb    int
}

func (c *coder) take(code string) bool {
	k := strings.ToLower(code)
	if c.used[k] {
		return false
	}
	c.used[k] = true
	return true
}

func (c *coder) series(list []series, year int, zhCN bool) (*series, *seriesState) {
	var s *series
	for i := range list {
		if list[i].zhCN != zhCN {
			continue
		}
		if s == nil || list[i].from <= year {
			s = &list[i]
		}
	}
	st := c.states[s.prefix]
	if st == nil {
		st = &seriesState{}
		c.states[s.prefix] = st
	}
	return s, st
}

func (c *coder) main(sp *setPlan, s *series, st *seriesState) {
	for {
		st.n++
		st.letter = 0
		if code := s.prefix + pad(st.n, s.pad) + s.tail; c.take(code) {
			sp.code, sp.kind, sp.folder = code, kindMain, s.folder
			return
		}
	}
}

func (c *coder) promo(sp *setPlan, s *series, st *seriesState) bool {
	if s.promo == "" || st.promo {
		return false
	}
	st.promo = true
	if !c.take(s.promo) {
		return false
	}
	sp.code, sp.kind, sp.folder = s.promo, kindPromo, s.folder
	sp.promoNum, sp.promoPad = s.promoNum, s.promoPad
	return true
}

func (c *coder) set(sp *setPlan, code string, kind setKind, folder string) bool {
	if !c.take(code) {
		return false
	}
	sp.code, sp.kind, sp.folder = code, kind, folder
	return true
}

func (c *coder) letters(n int, base byte) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = base + byte(c.r.intn(26))
	}
	return string(b)
}

// intl: sv01, sv03.5, swsh12tg, swshp, tk-xy-n, pop5, 2014xy, A2a, ...
func (c *coder) intl(sp *setPlan) {
	s, st := c.series(seriesIntl, sp.year, false)
	roll, y := c.r.intn(1000), sp.year
	num := s.prefix + pad(st.n, s.pad)
	ok := false
	switch {
	case roll < 30:
		ok = c.promo(sp, s, st)
	case roll < 80 && st.n > 0:
		ok = c.set(sp, num+".5", kindMain, s.folder)
	case roll < 110 && y >= 2021 && st.n > 0:
		ok = c.set(sp, num+[]string{"tg", "gg"}[c.r.intn(2)], kindMain, s.folder)
	case roll < 150:
		ok = c.set(sp, "tk-"+s.prefix+"-"+c.letters(1+c.r.intn(2), 'a'), kindKit, "tk")
	case roll < 180 && y >= 2004 && y <= 2009:
		c.pop++
		ok = c.set(sp, "pop"+strconv.Itoa(c.pop), kindMain, "pop")
	case roll < 200 && y >= 2011:
		ok = c.set(sp, strconv.Itoa(y)+s.prefix, kindKit, "mc")
	case roll < 300 && y >= 2024:
		if c.take("P-A") {
			sp.code, sp.kind, sp.folder = "P-A", kindPromo, "tcgp"
			return
		}
		c.pocket++
		ok = c.set(sp, "A"+strconv.Itoa(c.pocket)+[]string{"", "", "a", "b"}[c.r.intn(4)], kindPocket, "tcgp")
	}
	if !ok {
		c.main(sp, s, st)
	}
}

// jp: SV1a, SV4K, SM1+, SV-P, SVLN, PCG3, ...
func (c *coder) jp(sp *setPlan) {
	s, st := c.series(seriesJP, sp.year, false)
	c.asian(sp, s, st, "KMHLWDPRSNBIV")
}

func (c *coder) asian(sp *setPlan, s *series, st *seriesState, pairLetters string) {
	roll := c.r.intn(1000)
	ok := false
	switch {
	case roll < 30:
		ok = c.promo(sp, s, st)
	case roll < 60 && st.n > 0:
		ok = c.set(sp, s.prefix+strconv.Itoa(st.n)+"+", kindMain, s.folder)
	case roll < 230:
		st.n++
		st.letter = 0
		ok = c.set(sp, s.prefix+strconv.Itoa(st.n)+string(pairLetters[c.r.intn(len(pairLetters))]), kindMain, s.folder)
	case roll < 420 && st.n > 0 && st.letter < 3:
		st.letter++
		ok = c.set(sp, s.prefix+strconv.Itoa(st.n)+string(rune('a'+st.letter-1)), kindMain, s.folder)
	case roll < 470:
		ok = c.set(sp, s.prefix+c.letters(1+c.r.intn(2), 'A'), kindKit, s.folder)
	}
	if !ok {
		c.main(sp, s, st)
	}
}

// chn: SC1a, S8b, SV-P (Traditional); CSM1aC, CS2.5C, CSV3C, CBB2C, csm1b (mainland).
func (c *coder) chn(sp *setPlan) {
	if sp.lang == "zh-tw" {
		s, st := c.series(seriesCHN, sp.year, false)
		c.asian(sp, s, st, "DDab")
		return
	}
	s, st := c.series(seriesCHN, sp.year, true)
	roll := c.r.intn(1000)
	ok := false
	switch {
	case roll < 150 && st.n > 0:
		ok = c.set(sp, s.prefix+strconv.Itoa(st.n)+".5"+s.tail, kindMain, s.folder)
	case roll < 550 && st.n > 0 && st.letter < 3:
		st.letter++
		ok = c.set(sp, s.prefix+strconv.Itoa(st.n)+string(rune('a'+st.letter-1))+s.tail, kindMain, s.folder)
	case roll < 650 && s.prefix == "CSM" && st.n > 0:
		ok = c.set(sp, "csm"+strconv.Itoa(st.n)+string(rune('a'+c.r.intn(3))), kindMain, s.folder)
	case roll < 800 && sp.year >= 2025:
		c.cbb++
		ok = c.set(sp, "CBB"+strconv.Itoa(c.cbb)+"C", kindKit, "CBB")
	}
	if !ok {
		c.main(sp, s, st)
	}
}

// ---- records ----

func appendSet(b []byte, sp *setPlan) []byte {
	b = append(b, `{"id":`...)
	b = catalog.AppendJSONString(b, sp.id)
	b = append(b, `,"code":`...)
	b = catalog.AppendJSONString(b, sp.code)
	b = append(b, `,"name":`...)
	b = catalog.AppendJSONString(b, sp.name)
	b = append(b, `,"zone":"`...)
	b = append(b, zones[sp.zone].name...)
	b = append(b, '"')
	if sp.dated {
		b = append(b, `,"releasedOn":"`...)
		b = appendDate(b, sp.day)
		b = append(b, '"')
	}
	b = append(b, `,"cardCount":`...)
	b = strconv.AppendInt(b, int64(sp.cards), 10)
	return append(b, '}')
}

// cardWriter produces the cards of one set at a time; its scratch buffers
// are reused so that a card costs no allocation.
type cardWriter struct {
	o     *output
	names *names
	sp    *setPlan
	r     *rng
	zi    *zoneInfo

	table   *nameTable
	era     *markEra
	markMil int    // chance that a "mon" name carries a mark
	total   int    // printed total of the set
	pos     int    // cards written in this set
	mark    string // mechanic mark of the current name, "" for none

	name, num, lid []byte

	distinct bool // Options.DistinctNames
	serial   int  // cards named so far, for distinct names
}

func (w *cardWriter) writeSet(sp *setPlan) {
	w.sp, w.zi = sp, &zones[sp.zone]
	w.r = newRNG(sp.seed)
	w.pos = 0
	w.table = w.names.cards[sp.lang]
	w.era = markEraFor(sp.year)
	// Marks only go on "mon" names, so the per-name chance is scaled up to
	// give the era's share of all cards.
	w.markMil = min(800, w.era.mil*1000/max(1, w.table.monMil))

	r, n := w.r, sp.cards
	var sub *subset
	subN, letterN := 0, 0
	if sp.kind == kindMain && n >= 20 {
		if sp.zone == zoneIntl && r.mil(150) {
			sub = pickSubset(r, sp.year)
			if sub != nil {
				subN = n * (8 + r.intn(8)) / 100
			}
		}
		if n >= 40 && r.mil(10) {
			letterN = min(len(unownNumbers), n/5)
		}
	}
	mainN := n - subN - letterN

	dupeMil, altMil := 30, 0
	if sp.zone != zoneCHN && sp.kind == kindMain {
		altMil = 3
	}
	secretMil := 0
	if sp.kind == kindMain || sp.kind == kindPocket {
		secretMil = r.intn(150)
	}
	distinct := mainN * (1000 - dupeMil - altMil) / 1000
	w.total = max(1, distinct-distinct*secretMil/1000)

	for k, i := 0, 0; i < mainN; {
		k++
		w.num = w.formatNumber(w.num[:0], k, "")
		w.pickName()
		rarity := w.mainRarity(k)
		w.card(rarity, "")
		i++
		if i < mainN && r.mil(dupeMil) {
			w.card(rarity, w.extraVariant())
			i++
		}
		if i < mainN && r.mil(altMil) {
			w.num = w.formatNumber(w.num[:0], k, "a")
			w.pickName()
			w.card(w.mainRarity(k), "")
			i++
		}
		if w.o.maybeFlush() != nil {
			return
		}
	}
	for j := 1; j <= subN; j++ {
		w.num = appendPad(append(w.num[:0], sub.prefix...), j, sub.pad)
		w.pickName()
		w.card(w.rarity(raritySubset), "")
		if w.o.maybeFlush() != nil {
			return
		}
	}
	for j := range letterN {
		w.num = append(w.num[:0], unownNumbers[j]...)
		w.name = append(w.name[:0], w.unown()...)
		w.card(w.rarity(rarityLetters), "")
	}
	w.o.maybeFlush()
}

func pickSubset(r *rng, year int) *subset {
	var fit []*subset
	for i := range subsetsIntl {
		if s := &subsetsIntl[i]; s.from <= year && year <= s.to {
			fit = append(fit, s)
		}
	}
	if len(fit) == 0 {
		return nil
	}
	return fit[r.intn(len(fit))]
}

func (w *cardWriter) unown() string {
	switch w.sp.lang {
	case "en":
		return "Unown"
	case "ja":
		return "アンノーン"
	case "zh-tw":
		return "未知圖騰"
	}
	return "未知图腾"
}

// formatNumber writes the printed number of main-run card k in the set's style.
func (w *cardWriter) formatNumber(b []byte, k int, alt string) []byte {
	sp := w.sp
	width := max(3, digits(w.total))
	switch sp.style {
	case numPlain:
		b = strconv.AppendInt(b, int64(k), 10)
		b = append(b, alt...)
	case numPad:
		b = appendPad(b, k, 3)
		b = append(b, alt...)
	case numSlash:
		b = strconv.AppendInt(b, int64(k), 10)
		b = append(b, alt...)
		b = append(b, '/')
		b = strconv.AppendInt(b, int64(w.total), 10)
	case numPadSlash:
		b = appendPad(b, k, width)
		b = append(b, alt...)
		b = append(b, '/')
		b = appendPad(b, w.total, width)
	case numPrefix:
		b = append(b, sp.promoNum...)
		b = appendPad(b, k, sp.promoPad)
		b = append(b, alt...)
	case numCodeSlash:
		b = appendPad(b, k, 3)
		b = append(b, alt...)
		b = append(b, '/')
		b = append(b, sp.code...)
	case numCodeSpace:
		b = append(b, sp.code...)
		b = append(b, ' ')
		b = appendPad(b, k, 3)
		b = append(b, alt...)
	}
	return b
}

// localID is the card's part of its id and image URL: the printed number
// without "/total" or a leading set code ("025/165" → "025", "SV-P 012" →
// "012"), with "?" written as TCGdex does in its file names.
func (w *cardWriter) localID() []byte {
	n := w.num
	for i, c := range n {
		if c == '/' {
			n = n[:i]
			break
		}
	}
	for i := len(n) - 1; i >= 0; i-- {
		if n[i] == ' ' {
			n = n[i+1:]
			break
		}
	}
	w.lid = w.lid[:0]
	for _, c := range n {
		if c == '?' {
			w.lid = append(w.lid, "%3F"...)
		} else {
			w.lid = append(w.lid, c)
		}
	}
	return w.lid
}

func (w *cardWriter) pickName() {
	e := w.table.pick(w.r)
	w.name = append(w.name[:0], e.name...)
	w.mark = ""
	if w.distinct {
		w.serial++
		w.name = appendDistinct(w.name, w.r, w.serial)
	}
	if !e.mon || w.era.marks == nil || !w.r.mil(w.markMil) {
		return
	}
	mark := pickWeighted(w.r, w.era.marks)
	w.mark = mark
	switch {
	case w.sp.lang != "en" && mark == "δ":
		if w.sp.lang == "ja" {
			w.name = append(w.name, "（デルタ種）"...)
		} else {
			w.name = append(w.name, " δ"...)
		}
	case w.sp.lang != "en":
		w.name = append(w.name, mark...)
	case mark == "EX" && w.sp.year <= 2013 && w.r.mil(500):
		w.name = append(w.name, "-EX"...)
	default:
		w.name = append(w.name, ' ')
		w.name = append(w.name, mark...)
	}
}

func (w *cardWriter) mainRarity(k int) string {
	sp := w.sp
	switch {
	case sp.kind == kindPocket:
		return pickWeighted(w.r, rarityPocket)
	case w.r.mil(w.zi.noRarityMil):
		return ""
	case sp.kind == kindPromo:
		return "Promo"
	case k > w.total:
		switch {
		case sp.year >= 2023:
			return pickWeighted(w.r, secretModern)
		case sp.year >= 2017:
			return pickWeighted(w.r, secretMid)
		}
		return pickWeighted(w.r, secretClassic)
	}
	if r := markRarity(w.mark, sp.year); r != "" {
		return r
	}
	switch {
	case sp.year >= 2023:
		return pickWeighted(w.r, rarityModern)
	case sp.year >= 2017:
		return pickWeighted(w.r, rarityMid)
	}
	return pickWeighted(w.r, rarityClassic)
}

func (w *cardWriter) rarity(t []weighted) string {
	if w.r.mil(w.zi.noRarityMil) {
		return ""
	}
	return pickWeighted(w.r, t)
}

func (w *cardWriter) extraVariant() string {
	switch {
	case w.sp.kind == kindPromo:
		return pickWeighted(w.r, variantsPromo)
	case w.sp.year < 2003:
		return pickWeighted(w.r, variantsVintage)
	}
	return pickWeighted(w.r, variantsModern)
}

// card writes one card from w.name and w.num. A non-empty variant marks an
// extra printing of the previous card: same name and number, own id.
func (w *cardWriter) card(rarity, variant string) {
	sp, r, zi := w.sp, w.r, w.zi
	lid := w.localID()
	w.o.sep(w.o.records)
	w.o.records++
	b := w.o.buf

	id := sp.id + "-" + string(lid)
	if variant != "" {
		id += "-" + variant
	}
	b = append(b, `{"id":`...)
	b = catalog.AppendJSONString(b, id)
	b = append(b, `,"name":`...)
	b = catalog.AppendJSONString(b, string(w.name))
	b = append(b, `,"setName":`...)
	b = catalog.AppendJSONString(b, sp.name)
	b = append(b, `,"setCode":`...)
	b = catalog.AppendJSONString(b, sp.code)
	b = append(b, `,"number":`...)
	b = catalog.AppendJSONString(b, string(w.num))
	b = append(b, `,"language":"`...)
	b = append(b, sp.lang...)
	b = append(b, '"')
	if sp.dated {
		b = append(b, `,"year":`...)
		b = strconv.AppendInt(b, int64(sp.year), 10)
	}
	switch {
	case variant != "":
		b = append(b, `,"variant":`...)
		b = catalog.AppendJSONString(b, variant)
	case !sp.noVariant:
		b = append(b, `,"variant":"standard"`...)
	}
	if rarity != "" {
		b = append(b, `,"rarity":`...)
		b = catalog.AppendJSONString(b, rarity)
	}
	if !sp.sparse && !r.mil(20) {
		b = append(b, `,"imageUrl":`...)
		b = w.appendAsset(b, "high.png")
	}
	b = append(b, `,"zone":"`...)
	b = append(b, zi.name...)
	b = append(b, '"')
	if !sp.sparse {
		b = append(b, `,"totalCards":`...)
		if sp.totalNull {
			b = append(b, "null"...)
		} else {
			b = strconv.AppendInt(b, int64(w.total), 10)
		}
		b = append(b, `,"illustrator":`...)
		if r.mil(zi.noIllusMil) {
			b = append(b, "null"...)
		} else {
			b = catalog.AppendJSONString(b, w.names.illustrators.pick(r).name)
		}
		roll := r.intn(1000)
		aNull := roll < zi.bothMarketNullMil+zi.aNullMil
		bNull := roll < zi.bothMarketNullMil || (roll >= zi.bothMarketNullMil+zi.aNullMil && roll < zi.bothMarketNullMil+zi.aNullMil+zi.bNullMil)
		b = append(b, `,"marketAId":`...)
		if aNull {
			b = append(b, "null"...)
		} else {
			b = append(b, '"')
			b = strconv.AppendInt(b, int64(sp.mkA+w.pos), 10)
			b = append(b, '"')
		}
		if sp.marketPath {
			b = append(b, `,"marketAPath":`...)
			if aNull {
				b = append(b, "null"...)
			} else {
				b = append(b, `"/product/`...)
				b = strconv.AppendInt(b, int64(sp.mkA+w.pos), 10)
				b = append(b, '"')
			}
		}
		b = append(b, `,"marketBId":`...)
		if bNull {
			b = append(b, "null"...)
		} else {
			b = append(b, '"')
			b = strconv.AppendInt(b, int64(sp.mkB+w.pos), 10)
			b = append(b, '"')
		}
	}
	if sp.scan {
		b = append(b, `,"scanFallbackUrl":`...)
		if r.mil(300) {
			b = append(b, "null"...)
		} else {
			b = w.appendAsset(b, "low.webp")
		}
	}
	w.o.buf = append(b, '}')
	w.pos++
}

// appendAsset writes a quoted URL in TCGdex's asset layout. Codes and local
// ids hold only URL-safe characters ("?" is already %3F).
func (w *cardWriter) appendAsset(b []byte, file string) []byte {
	sp := w.sp
	b = append(b, `"https://assets.tcgdex.net/`...)
	b = append(b, sp.lang...)
	b = append(b, '/')
	b = append(b, sp.folder...)
	b = append(b, '/')
	b = append(b, sp.code...)
	b = append(b, '/')
	b = append(b, w.lid...)
	b = append(b, '/')
	b = append(b, file...)
	return append(b, '"')
}

// ---- small helpers ----

func pad(n, width int) string {
	s := strconv.Itoa(n)
	if len(s) >= width {
		return s
	}
	return strings.Repeat("0", width-len(s)) + s
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
