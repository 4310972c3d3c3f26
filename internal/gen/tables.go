package gen

// The package-level tables of this file are constants in all but name: Go
// has no constant slices or arrays of structs. Nothing assigns to them after
// initialisation (the generator takes pointers into zones, series and
// subsets only to read them), so every Write sees the same tables and the
// output depends on Options alone.

// nameEntry is one base card name. mon marks names that may take a mechanic
// mark ("Charizard" → "Charizard ex"); trainers and energies never do.
type nameEntry struct {
	name   string
	weight uint64
	mon    bool
}

type weighted struct {
	s string
	w int
}

// nameTable answers weighted draws in O(log n): a card-name draw happens once
// per card, so a linear scan over hundreds of entries would dominate the run.
type nameTable struct {
	entries []nameEntry
	cum     []uint64
	total   uint64
	monMil  int // permille of the weight that belongs to "mon" names
}

func newNameTable(entries []nameEntry) *nameTable {
	t := &nameTable{entries: entries, cum: make([]uint64, len(entries))}
	var mon uint64
	for i, e := range entries {
		t.total += e.weight
		t.cum[i] = t.total
		if e.mon {
			mon += e.weight
		}
	}
	t.monMil = int(mon * 1000 / t.total)
	return t
}

func (t *nameTable) pick(r *rng) *nameEntry {
	x := r.uint64n(t.total)
	lo, hi := 0, len(t.cum)-1
	for lo < hi {
		mid := (lo + hi) / 2
		if t.cum[mid] > x {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return &t.entries[lo]
}

func pickWeighted(r *rng, ws []weighted) string {
	total := 0
	for _, w := range ws {
		total += w.w
	}
	x := r.intn(total)
	for _, w := range ws {
		if x < w.w {
			return w.s
		}
		x -= w.w
	}
	return ws[len(ws)-1].s
}

// sizeMilles are the 64 quantiles of a log-normal distribution (σ = 0.75)
// scaled to a mean of 1000: set sizes drawn from it range from an eighth to
// about five times the average, like real sets (trainer kits of 20 cards,
// main sets of 200, the odd 700-card collection). Integers keep the output
// byte-identical on every platform, which floating point would not promise.
var sizeMilles = [64]int{
	124, 171, 203, 229, 252, 273, 293, 312, 330, 348, 366, 383, 400, 417, 434, 451,
	468, 485, 502, 519, 536, 554, 572, 590, 609, 628, 647, 667, 687, 707, 728, 750,
	773, 796, 819, 844, 869, 896, 923, 952, 982, 1013, 1046, 1080, 1117, 1155, 1196, 1240,
	1286, 1336, 1390, 1449, 1514, 1585, 1665, 1754, 1857, 1977, 2121, 2299, 2529, 2853,
	3380, 4667,
}

// zoneInfo holds what differs between zones. Rates are permille of cards (or
// of sets where the name says so) and follow testdata/catalogue-real.json.gz (testdata/README.md).
type zoneInfo struct {
	name          string
	cardMil       int // share of all cards
	emptySetMil   int // share of sets without cards (old or mainland sets not filled yet)
	undatedSetMil int
	first, last   [3]int // release dates of the first and last set
	noRarityMil   int
	noIllusMil    int
	// marketplace ids are missing together more often than alone
	bothMarketNullMil, aNullMil, bNullMil int
	series                                []series
}

const (
	zoneIntl = iota
	zoneJP
	zoneCHN
)

var zones = [3]zoneInfo{
	{
		name: "intl", cardMil: 540, emptySetMil: 20, undatedSetMil: 8,
		first: [3]int{1999, 1, 9}, last: [3]int{2026, 7, 31},
		noRarityMil: 24, noIllusMil: 31,
		bothMarketNullMil: 127, aNullMil: 36, bNullMil: 19,
		series: seriesIntl,
	},
	{
		name: "jp", cardMil: 290, emptySetMil: 300, undatedSetMil: 8,
		first: [3]int{1996, 10, 20}, last: [3]int{2026, 7, 31},
		noRarityMil: 219, noIllusMil: 173,
		bothMarketNullMil: 152, aNullMil: 374, bNullMil: 38,
		series: seriesJP,
	},
	{
		name: "chn", cardMil: 170, emptySetMil: 350, undatedSetMil: 20,
		first: [3]int{2019, 10, 9}, last: [3]int{2026, 6, 12},
		noRarityMil: 570, noIllusMil: 30,
		// the Asian marketplace ids belong to the Japanese printings
		bothMarketNullMil: 1000,
		series:            seriesCHN,
	},
}

// series is a line of sets sharing a code prefix. A set belongs to the last
// series that started in or before its release year.
type series struct {
	from     int
	prefix   string
	pad      int    // zero padding of the number in codes: sv01
	tail     string // after the number: the mainland "C" of CSV1C
	folder   string // image-URL folder
	promo    string // code of the series' promo set, "" for none
	promoNum string // printed-number prefix of promo cards: SWSH001
	promoPad int
	zhCN     bool // mainland (Simplified Chinese) series
}

var seriesIntl = []series{
	{from: 1996, prefix: "base", folder: "base", promo: "basep"},
	{from: 2000, prefix: "gym", folder: "gym"},
	{from: 2001, prefix: "neo", folder: "neo", promo: "np"},
	{from: 2002, prefix: "ecard", folder: "ecard"},
	{from: 2003, prefix: "ex", folder: "ex"},
	{from: 2007, prefix: "dp", folder: "dp", promo: "dpp", promoNum: "DP", promoPad: 2},
	{from: 2009, prefix: "pl", folder: "pl"},
	{from: 2010, prefix: "hgss", folder: "hgss", promo: "hgssp", promoNum: "HGSS", promoPad: 2},
	{from: 2011, prefix: "bw", folder: "bw", promo: "bwp", promoNum: "BW", promoPad: 2},
	{from: 2014, prefix: "xy", folder: "xy", promo: "xyp", promoNum: "XY", promoPad: 2},
	{from: 2017, prefix: "sm", folder: "sm", promo: "smp", promoNum: "SM", promoPad: 2},
	{from: 2020, prefix: "swsh", folder: "swsh", promo: "swshp", promoNum: "SWSH", promoPad: 3},
	{from: 2023, prefix: "sv", pad: 2, folder: "sv", promo: "svp"},
	{from: 2025, prefix: "me", pad: 2, folder: "me", promo: "mep"},
}

var seriesJP = []series{
	{from: 1996, prefix: "PMCG", folder: "PMCG"},
	{from: 2000, prefix: "neo", folder: "neo"},
	{from: 2001, prefix: "E", folder: "E"},
	{from: 2003, prefix: "ADV", folder: "ADV"},
	{from: 2004, prefix: "PCG", folder: "PCG"},
	{from: 2006, prefix: "DP", folder: "DP", promo: "DP-P"},
	{from: 2009, prefix: "L", folder: "L", promo: "L-P"},
	{from: 2010, prefix: "BW", folder: "BW", promo: "BW-P"},
	{from: 2013, prefix: "XY", folder: "XY", promo: "XY-P"},
	{from: 2016, prefix: "SM", folder: "SM", promo: "SM-P"},
	{from: 2019, prefix: "S", folder: "S", promo: "S-P"},
	{from: 2023, prefix: "SV", folder: "SV", promo: "SV-P"},
	{from: 2025, prefix: "M", folder: "M", promo: "M-P"},
}

var seriesCHN = []series{
	{from: 2019, prefix: "AC", folder: "SM", promo: "SM-P"},
	{from: 2020, prefix: "SC", folder: "S"},
	{from: 2021, prefix: "S", folder: "S", promo: "S-P"},
	{from: 2023, prefix: "SV", folder: "SV", promo: "SV-P"},
	{from: 2020, prefix: "CSM", tail: "C", folder: "CSM", zhCN: true},
	{from: 2023, prefix: "CS", tail: "C", folder: "CS", zhCN: true},
	{from: 2025, prefix: "CSV", tail: "C", folder: "CSV", zhCN: true},
}

// subset is a block of prefixed numbers at the end of a main set: Aquapolis'
// H1..H32, the Trainer Gallery's TG01..TG30, Crown Zenith's GG01..GG70.
type subset struct {
	from, to int
	prefix   string
	pad      int
}

var subsetsIntl = []subset{
	{2002, 2003, "H", 0},
	{2009, 2010, "SH", 0},
	{2009, 2010, "AR", 0},
	{2010, 2010, "SL", 0},
	{2012, 2013, "RC", 0},
	{2016, 2016, "RC", 0},
	{2019, 2021, "SV", 0},
	{2021, 2021, "CC", 3},
	{2021, 2023, "TG", 2},
	{2023, 2023, "GG", 2},
}

// markEra says which mechanic marks the cards of a period carry and how
// often (permille of all the period's cards, measured on the real intl data).
type markEra struct {
	from  int
	mil   int
	marks []weighted
}

var markEras = []markEra{
	{1996, 0, nil},
	{2003, 70, []weighted{{"ex", 1}}},
	{2005, 130, []weighted{{"δ", 6}, {"ex", 4}, {"☆", 1}}},
	{2007, 25, []weighted{{"ex", 2}, {"☆", 1}, {"G", 1}}},
	{2008, 90, []weighted{{"LV.X", 5}, {"G", 3}, {"GL", 2}, {"E4", 2}, {"FB", 1}, {"C", 1}}},
	{2010, 35, []weighted{{"LEGEND", 1}}},
	{2011, 110, []weighted{{"EX", 1}}},
	{2015, 150, []weighted{{"EX", 8}, {"BREAK", 2}}},
	{2017, 200, []weighted{{"GX", 9}, {"◇", 1}}},
	{2020, 190, []weighted{{"V", 6}, {"VMAX", 3}, {"V-UNION", 1}}},
	{2022, 230, []weighted{{"V", 12}, {"VSTAR", 4}, {"VMAX", 3}}},
	{2023, 160, []weighted{{"ex", 1}}},
}

func markEraFor(year int) *markEra {
	e := &markEras[0]
	for i := range markEras {
		if markEras[i].from <= year {
			e = &markEras[i]
		}
	}
	return e
}

// Rarity tables use TCGdex's English rarity names, which every zone shares.
var (
	rarityClassic = []weighted{{"Common", 45}, {"Uncommon", 32}, {"Rare", 15}, {"Holo Rare", 6}, {"Rare Holo", 2}}
	rarityMid     = []weighted{{"Common", 44}, {"Uncommon", 32}, {"Rare", 14}, {"Holo Rare", 8}, {"Amazing Rare", 1}, {"Radiant Rare", 1}}
	rarityModern  = []weighted{{"Common", 45}, {"Uncommon", 33}, {"Rare", 16}, {"ACE SPEC Rare", 2}, {"Shiny rare", 4}}
	secretClassic = []weighted{{"Secret Rare", 8}, {"Ultra Rare", 2}}
	secretMid     = []weighted{{"Secret Rare", 50}, {"Ultra Rare", 35}, {"Shiny rare", 15}}
	secretModern  = []weighted{{"Illustration rare", 50}, {"Special illustration rare", 25}, {"Hyper rare", 15}, {"Ultra Rare", 10}}
	raritySubset  = []weighted{{"Holo Rare", 40}, {"Ultra Rare", 25}, {"Shiny rare", 15}, {"Secret Rare", 10}, {"Rare", 10}}
	rarityLetters = []weighted{{"Rare", 1}, {"Uncommon", 1}}
	rarityPocket  = []weighted{
		{"One Diamond", 745}, {"Two Diamond", 542}, {"Three Diamond", 292}, {"Four Diamond", 119},
		{"One Star", 200}, {"Two Star", 263}, {"Three Star", 23}, {"One Shiny", 150}, {"Two Shiny", 60}, {"Crown", 24},
	}
)

func markRarity(mark string, year int) string {
	switch mark {
	case "ex":
		if year >= 2023 {
			return "Double rare"
		}
		return "Ultra Rare"
	case "V", "V-UNION":
		return "Holo Rare V"
	case "VMAX":
		return "Holo Rare VMAX"
	case "VSTAR":
		return "Holo Rare VSTAR"
	case "LV.X":
		return "Rare Holo LV.X"
	case "LEGEND":
		return "LEGEND"
	case "EX", "GX", "BREAK":
		return "Ultra Rare"
	}
	return ""
}

// Extra printings of a card, as separate records with the same number.
var (
	variantsVintage = []weighted{{"first-edition", 8}, {"shadowless", 1}, {"unlimited", 1}}
	variantsModern  = []weighted{{"reverse-holo", 8}, {"holo", 2}}
	variantsPromo   = []weighted{{"stamped", 6}, {"staff", 3}, {"prerelease", 2}}
)

var unownNumbers = []string{
	"A", "B", "C", "D", "E", "F", "G", "H", "I", "J", "K", "L", "M", "N",
	"O", "P", "Q", "R", "S", "T", "U", "V", "W", "X", "Y", "Z", "!", "?",
}
