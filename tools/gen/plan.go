package gen

import (
	"strconv"
	"strings"
)

// Planning: how many sets each zone gets, their sizes, names, codes and
// numbering styles, decided before any record is written.

func plan(opt Options, setNames map[string][]string, tb *tables) []setPlan {
	var totals [3]int
	rest := opt.Cards
	for z := range tb.Zones {
		if z == len(tb.Zones)-1 {
			totals[z] = rest
		} else {
			totals[z] = opt.Cards * tb.Zones[z].CardMil / 1000
			rest -= totals[z]
		}
	}
	var all []setPlan
	var jp []setPlan
	for z := range tb.Zones {
		r := newRNG(mix(opt.Seed, uint64(z)+1))
		sets := planZone(tb, z, totals[z], opt.CardsPerSet, r, jp, setNames)
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

func planZone(tb *tables, z, total, perSet int, r *rng, jp []setPlan, setNames map[string][]string) []setPlan {
	zi := &tb.Zones[z]
	var sizes []int
	for rest := total; rest > 0; {
		s := max(1, (perSet*tb.SizeMilles[r.intn(len(tb.SizeMilles))]+500)/1000)
		s = min(s, rest)
		sizes = append(sizes, s)
		rest -= s
	}
	// Sets without cards are spread over the timeline, as in the real data:
	// shuffle where the empty ones go, then fill the rest in order.
	empty := len(sizes) * zi.EmptySetMil / (1000 - zi.EmptySetMil)
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
	first, last := dayOf(zi.First), dayOf(zi.Last)
	span := last - first
	step := max(1, span/int64(n))

	sets := make([]setPlan, n)
	c := &coder{r: r, zone: zi, used: map[string]bool{}, states: map[string]*seriesState{}}
	jpAt := 0
	jpCopied := make([]bool, len(jp))
	for i := range sets {
		sp := &sets[i]
		sp.zone = z
		sp.cards = sizes[i]
		sp.day = first + span*int64(i)/int64(n) + int64(r.intn(int(step)))
		sp.year = yearOf(sp.day)
		sp.dated = !r.mil(zi.UndatedSetMil)

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
		sp.id = zi.Name + "-" + sp.code
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
	zone   *zoneInfo
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
		if list[i].ZhCN != zhCN {
			continue
		}
		if s == nil || list[i].From <= year {
			s = &list[i]
		}
	}
	st := c.states[s.Prefix]
	if st == nil {
		st = &seriesState{}
		c.states[s.Prefix] = st
	}
	return s, st
}

func (c *coder) main(sp *setPlan, s *series, st *seriesState) {
	for {
		st.n++
		st.letter = 0
		if code := s.Prefix + string(appendPad(nil, st.n, s.Pad)) + s.Tail; c.take(code) {
			sp.code, sp.kind, sp.folder = code, kindMain, s.Folder
			return
		}
	}
}

func (c *coder) promo(sp *setPlan, s *series, st *seriesState) bool {
	if s.Promo == "" || st.promo {
		return false
	}
	st.promo = true
	if !c.take(s.Promo) {
		return false
	}
	sp.code, sp.kind, sp.folder = s.Promo, kindPromo, s.Folder
	sp.promoNum, sp.promoPad = s.PromoNum, s.PromoPad
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
	s, st := c.series(c.zone.Series, sp.year, false)
	roll, y := c.r.intn(1000), sp.year
	num := s.Prefix + string(appendPad(nil, st.n, s.Pad))
	ok := false
	switch {
	case roll < 30:
		ok = c.promo(sp, s, st)
	case roll < 80 && st.n > 0:
		ok = c.set(sp, num+".5", kindMain, s.Folder)
	case roll < 110 && y >= 2021 && st.n > 0:
		ok = c.set(sp, num+[]string{"tg", "gg"}[c.r.intn(2)], kindMain, s.Folder)
	case roll < 150:
		ok = c.set(sp, "tk-"+s.Prefix+"-"+c.letters(1+c.r.intn(2), 'a'), kindKit, "tk")
	case roll < 180 && y >= 2004 && y <= 2009:
		c.pop++
		ok = c.set(sp, "pop"+strconv.Itoa(c.pop), kindMain, "pop")
	case roll < 200 && y >= 2011:
		ok = c.set(sp, strconv.Itoa(y)+s.Prefix, kindKit, "mc")
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
	s, st := c.series(c.zone.Series, sp.year, false)
	c.asian(sp, s, st, "KMHLWDPRSNBIV")
}

func (c *coder) asian(sp *setPlan, s *series, st *seriesState, pairLetters string) {
	roll := c.r.intn(1000)
	ok := false
	switch {
	case roll < 30:
		ok = c.promo(sp, s, st)
	case roll < 60 && st.n > 0:
		ok = c.set(sp, s.Prefix+strconv.Itoa(st.n)+"+", kindMain, s.Folder)
	case roll < 230:
		st.n++
		st.letter = 0
		ok = c.set(sp, s.Prefix+strconv.Itoa(st.n)+string(pairLetters[c.r.intn(len(pairLetters))]), kindMain, s.Folder)
	case roll < 420 && st.n > 0 && st.letter < 3:
		st.letter++
		ok = c.set(sp, s.Prefix+strconv.Itoa(st.n)+string(rune('a'+st.letter-1)), kindMain, s.Folder)
	case roll < 470:
		ok = c.set(sp, s.Prefix+c.letters(1+c.r.intn(2), 'A'), kindKit, s.Folder)
	}
	if !ok {
		c.main(sp, s, st)
	}
}

// chn: SC1a, S8b, SV-P (Traditional); CSM1aC, CS2.5C, CSV3C, CBB2C, csm1b (mainland).
func (c *coder) chn(sp *setPlan) {
	if sp.lang == "zh-tw" {
		s, st := c.series(c.zone.Series, sp.year, false)
		c.asian(sp, s, st, "DDab")
		return
	}
	s, st := c.series(c.zone.Series, sp.year, true)
	roll := c.r.intn(1000)
	ok := false
	switch {
	case roll < 150 && st.n > 0:
		ok = c.set(sp, s.Prefix+strconv.Itoa(st.n)+".5"+s.Tail, kindMain, s.Folder)
	case roll < 550 && st.n > 0 && st.letter < 3:
		st.letter++
		ok = c.set(sp, s.Prefix+strconv.Itoa(st.n)+string(rune('a'+st.letter-1))+s.Tail, kindMain, s.Folder)
	case roll < 650 && s.Prefix == "CSM" && st.n > 0:
		ok = c.set(sp, "csm"+strconv.Itoa(st.n)+string(rune('a'+c.r.intn(3))), kindMain, s.Folder)
	case roll < 800 && sp.year >= 2025:
		c.cbb++
		ok = c.set(sp, "CBB"+strconv.Itoa(c.cbb)+"C", kindKit, "CBB")
	}
	if !ok {
		c.main(sp, s, st)
	}
}
