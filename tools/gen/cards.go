package gen

import (
	"strconv"

	"github.com/catalogd/catalogd/catalog"
)

// Records: a set and its cards, appended as JSON lines.

func appendSet(b []byte, sp *setPlan, zone string) []byte {
	b = append(b, `{"id":`...)
	b = catalog.AppendJSONString(b, sp.id)
	b = append(b, `,"code":`...)
	b = catalog.AppendJSONString(b, sp.recordCode)
	b = append(b, `,"name":`...)
	b = catalog.AppendJSONString(b, sp.name)
	b = append(b, `,"zone":"`...)
	b = append(b, zone...)
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
	o      *output
	names  *names
	tables *tables
	sp     *setPlan
	r      *rng
	zi     *zoneInfo

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
	w.sp, w.zi = sp, &w.tables.Zones[sp.zone]
	w.r = newRNG(sp.seed)
	w.pos = 0
	w.table = w.names.cards[sp.lang]
	w.era = w.tables.markEraFor(sp.year)
	// Marks only go on "mon" names, so the per-name chance is scaled up to
	// give the era's share of all cards.
	w.markMil = min(800, w.era.Mil*1000/max(1, w.table.monMil))

	r, n := w.r, sp.cards
	var sub *subset
	subN, letterN := 0, 0
	if sp.kind == kindMain && n >= 20 {
		if sp.zone == zoneIntl && r.mil(150) {
			sub = pickSubset(r, w.tables.SubsetsIntl, sp.year)
			if sub != nil {
				subN = n * (8 + r.intn(8)) / 100
			}
		}
		if n >= 40 && r.mil(10) {
			letterN = min(len(w.tables.UnownNumbers), n/5)
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
		w.num = appendPad(append(w.num[:0], sub.Prefix...), j, sub.Pad)
		w.pickName()
		w.card(w.rarity(w.tables.Rarities.Subset), "")
		if w.o.maybeFlush() != nil {
			return
		}
	}
	for j := range letterN {
		w.num = append(w.num[:0], w.tables.UnownNumbers[j]...)
		w.name = append(w.name[:0], w.unown()...)
		w.card(w.rarity(w.tables.Rarities.Letters), "")
	}
	w.o.maybeFlush()
}

func pickSubset(r *rng, subsets []subset, year int) *subset {
	var fit []*subset
	for i := range subsets {
		if s := &subsets[i]; s.From <= year && year <= s.To {
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
	if !e.mon || w.era.Marks == nil || !w.r.mil(w.markMil) {
		return
	}
	mark := pickWeighted(w.r, w.era.Marks)
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
		return pickWeighted(w.r, w.tables.Rarities.Pocket)
	case w.r.mil(w.zi.NoRarityMil):
		return ""
	case sp.kind == kindPromo:
		return "Promo"
	case k > w.total:
		switch {
		case sp.year >= 2023:
			return pickWeighted(w.r, w.tables.Rarities.SecretModern)
		case sp.year >= 2017:
			return pickWeighted(w.r, w.tables.Rarities.SecretMid)
		}
		return pickWeighted(w.r, w.tables.Rarities.SecretClassic)
	}
	if r := markRarity(w.mark, sp.year); r != "" {
		return r
	}
	switch {
	case sp.year >= 2023:
		return pickWeighted(w.r, w.tables.Rarities.Modern)
	case sp.year >= 2017:
		return pickWeighted(w.r, w.tables.Rarities.Mid)
	}
	return pickWeighted(w.r, w.tables.Rarities.Classic)
}

func (w *cardWriter) rarity(t []weighted) string {
	if w.r.mil(w.zi.NoRarityMil) {
		return ""
	}
	return pickWeighted(w.r, t)
}

func (w *cardWriter) extraVariant() string {
	switch {
	case w.sp.kind == kindPromo:
		return pickWeighted(w.r, w.tables.Variants.Promo)
	case w.sp.year < 2003:
		return pickWeighted(w.r, w.tables.Variants.Vintage)
	}
	return pickWeighted(w.r, w.tables.Variants.Modern)
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
	b = catalog.AppendJSONString(b, sp.recordCode)
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
	b = append(b, zi.Name...)
	b = append(b, '"')
	if !sp.sparse {
		b = append(b, `,"totalCards":`...)
		if sp.totalNull {
			b = append(b, "null"...)
		} else {
			b = strconv.AppendInt(b, int64(w.total), 10)
		}
		b = append(b, `,"illustrator":`...)
		if r.mil(zi.NoIllusMil) {
			b = append(b, "null"...)
		} else {
			b = catalog.AppendJSONString(b, w.names.illustrators.pick(r).name)
		}
		roll := r.intn(1000)
		aNull := roll < zi.BothMarketNullMil+zi.ANullMil
		bNull := roll < zi.BothMarketNullMil || (roll >= zi.BothMarketNullMil+zi.ANullMil && roll < zi.BothMarketNullMil+zi.ANullMil+zi.BNullMil)
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
