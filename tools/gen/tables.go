package gen

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
)

// tables.json holds the rates, series, rarities and marks the generator
// draws from; tables/README.md says where they come from and how to change
// them.
//
//go:embed tables/tables.json
var tablesFS embed.FS

// tables is tables.json decoded. Each Write decodes it again rather than
// keep it in a package variable, and only reads it, so that the output
// depends on Options alone.
type tables struct {
	// SizeMilles are the 64 quantiles of a log-normal distribution
	// (σ = 0.75) scaled to a mean of 1000: set sizes drawn from it range
	// from an eighth to about five times the average, like real sets.
	// Integers keep the output byte-identical on every platform, which
	// floating point would not promise.
	SizeMilles   []int
	Zones        [3]zoneInfo
	SubsetsIntl  []subset
	MarkEras     []markEra
	UnownNumbers []string
	// Rarities use TCGdex's English rarity names, which every zone shares.
	Rarities struct {
		Classic, Mid, Modern, SecretClassic, SecretMid, SecretModern, Subset, Letters, Pocket []weighted
	}
	// Variants are extra printings of a card, as separate records with the
	// same number.
	Variants struct{ Vintage, Modern, Promo []weighted }
}

// loadTables decodes tables.json. It is part of the binary, so an error
// here means the file was edited into a bad shape.
func loadTables() (*tables, error) {
	b, err := tablesFS.ReadFile("tables/tables.json")
	if err != nil {
		return nil, fmt.Errorf("gen: %w", err)
	}
	return parseTables(b)
}

func parseTables(b []byte) (*tables, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	t := &tables{}
	if err := dec.Decode(t); err != nil {
		return nil, fmt.Errorf("gen: tables.json: %w", err)
	}
	r, v := &t.Rarities, &t.Variants
	for _, ws := range [][]weighted{r.Classic, r.Mid, r.Modern, r.SecretClassic, r.SecretMid, r.SecretModern, r.Subset, r.Letters, r.Pocket, v.Vintage, v.Modern, v.Promo} {
		if len(ws) == 0 {
			return nil, fmt.Errorf("gen: tables.json: a rarity or variant table is missing or empty")
		}
	}
	if len(t.SizeMilles) == 0 || len(t.MarkEras) == 0 || len(t.UnownNumbers) == 0 {
		return nil, fmt.Errorf("gen: tables.json: sizeMilles, markEras and unownNumbers must not be empty")
	}
	for i, z := range t.Zones {
		if z.Name == "" || len(z.Series) == 0 {
			return nil, fmt.Errorf("gen: tables.json: zone %d: want a name and series", i)
		}
	}
	return t, nil
}

// nameEntry is one base card name. mon marks names that may take a mechanic
// mark ("Charizard" → "Charizard ex"); trainers and energies never do.
type nameEntry struct {
	name   string
	weight uint64
	mon    bool
}

// weighted is one choice of a weighted draw, written ["name", weight] in
// tables.json.
type weighted struct {
	S string
	W int
}

func (w *weighted) UnmarshalJSON(b []byte) error {
	if err := json.Unmarshal(b, &[2]any{&w.S, &w.W}); err != nil {
		return fmt.Errorf("want [\"name\", weight], found %s: %w", b, err)
	}
	if w.W <= 0 {
		return fmt.Errorf("want [\"name\", weight] with a positive weight, found %s", b)
	}
	return nil
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
		total += w.W
	}
	x := r.intn(total)
	for _, w := range ws {
		if x < w.W {
			return w.S
		}
		x -= w.W
	}
	return ws[len(ws)-1].S
}

// zoneInfo holds what differs between zones. Rates are permille of cards (or
// of sets where the name says so) and follow testdata/catalogue-real.json.gz (testdata/README.md).
type zoneInfo struct {
	Name          string
	CardMil       int // share of all cards
	EmptySetMil   int // share of sets without cards (old or mainland sets not filled yet)
	UndatedSetMil int
	First, Last   [3]int // release dates of the first and last set
	NoRarityMil   int
	NoIllusMil    int
	// marketplace ids are missing together more often than alone
	BothMarketNullMil, ANullMil, BNullMil int
	Series                                []series
}

const (
	zoneIntl = iota
	zoneJP
	zoneCHN
)

// series is a line of sets sharing a code prefix. A set belongs to the last
// series that started in or before its release year.
type series struct {
	From     int
	Prefix   string
	Pad      int    // zero padding of the number in codes: sv01
	Tail     string // after the number: the mainland "C" of CSV1C
	Folder   string // image-URL folder
	Promo    string // code of the series' promo set, "" for none
	PromoNum string // printed-number prefix of promo cards: SWSH001
	PromoPad int
	ZhCN     bool // mainland (Simplified Chinese) series
}

// subset is a block of prefixed numbers at the end of a main set: Aquapolis'
// H1..H32, the Trainer Gallery's TG01..TG30, Crown Zenith's GG01..GG70.
type subset struct {
	From, To int
	Prefix   string
	Pad      int
}

// markEra says which mechanic marks the cards of a period carry and how
// often (permille of all the period's cards, measured on the real intl data).
type markEra struct {
	From  int
	Mil   int
	Marks []weighted
}

func (t *tables) markEraFor(year int) *markEra {
	e := &t.MarkEras[0]
	for i := range t.MarkEras {
		if t.MarkEras[i].From <= year {
			e = &t.MarkEras[i]
		}
	}
	return e
}

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
