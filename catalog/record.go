// Package catalog is the domain of catalogd: sets and cards, the rules one
// record and one name group must satisfy, the folding, romanized forms,
// words and printed-number keys that order and find them. It knows no file: the
// catalogue file is catalog/store's. That file keeps what Fold and
// AppendNumberKey give, which the reader computes again from a query, so
// a change to what they give is a new format of the file
// (layout.FormatVersion, in catalog/store/internal/layout), which an
// upgrade imports again. It keeps the romanized forms of NewIndexText too,
// which only the import computes: a change to them takes effect at the
// next import.
package catalog

import "encoding/json"

// MaxInteger is the largest integer the API carries (2^53 - 1), so that every
// value survives a JavaScript client.
const MaxInteger = 9007199254740991

// DefaultVariant is the variant of a card whose snapshot record has none.
const DefaultVariant = "standard"

// The release zones, in the order that resolves a set code used in several.
const (
	ZoneIntl = "intl"
	ZoneJP   = "jp"
	ZoneCHN  = "chn"
)

// Zones returns the release zones in resolution order.
func Zones() []string { return []string{ZoneIntl, ZoneJP, ZoneCHN} }

// ZoneIndex returns the position of zone in resolution order, or -1 when zone
// is not a release zone.
func ZoneIndex(zone string) int {
	switch zone {
	case ZoneIntl:
		return 0
	case ZoneJP:
		return 1
	case ZoneCHN:
		return 2
	}
	return -1
}

// Set is a card set of one release zone (docs/CONTRACT.md, Records). Its
// fields are SetMembers, in that order.
type Set struct {
	ID         string           `json:"id"`
	Code       string           `json:"code"`
	Name       string           `json:"name"`
	Zone       string           `json:"zone"`
	ReleasedOn Nullable[string] `json:"releasedOn,omitzero"`
	CardCount  int64            `json:"cardCount"`
}

// Card is one printed card (docs/CONTRACT.md, Records). Its fields are
// CardMembers, in that order. Optional fields are Nullable so that absent,
// null (where docs/CONTRACT.md, Records, allows it) and a value stay
// distinct from snapshot to response.
type Card struct {
	ID              string           `json:"id"`
	Name            string           `json:"name"`
	SetName         string           `json:"setName"`
	SetCode         string           `json:"setCode"`
	Number          string           `json:"number"`
	Language        string           `json:"language"`
	Year            Nullable[int64]  `json:"year,omitzero"`
	Variant         string           `json:"variant"`
	Rarity          Nullable[string] `json:"rarity,omitzero"`
	ImageURL        Nullable[string] `json:"imageUrl,omitzero"`
	Zone            string           `json:"zone"`
	TotalCards      Nullable[int64]  `json:"totalCards,omitzero"`
	Illustrator     Nullable[string] `json:"illustrator,omitzero"`
	MarketAID       Nullable[string] `json:"marketAId,omitzero"`
	MarketAPath     Nullable[string] `json:"marketAPath,omitzero"`
	MarketBID       Nullable[string] `json:"marketBId,omitzero"`
	ScanFallbackURL Nullable[string] `json:"scanFallbackUrl,omitzero"`
}

// Page is the pagination metadata of a list of cards. Its fields are
// PageMembers, in that order.
type Page struct {
	Page     int64 `json:"page"`
	PageSize int64 `json:"pageSize"`
	Total    int64 `json:"total"`
}

// Member is one member of a record's JSON, with the rules of
// docs/CONTRACT.md, Records. SetMembers, CardMembers and PageMembers define
// the records once. The importer decodes snapshots by them and the MCP
// schemas are made from them; the fields of Set, Card and Page (in order),
// AppendJSON, Validate, what an import stores, openapi.yaml and the answers
// are held to them by tests (shape_test.go, here, in importer and in
// server), which name the place and the member out of step. A new member
// is a row here, then its field, its line in AppendJSON, in the importer's
// toSet or toCard, in Validate when it has a rule, and in openapi.yaml.
type Member struct {
	Name     string // the JSON member name
	Type     string // "string" or "integer"
	Required bool   // a snapshot record must have it
	Nullable bool   // it may be null
	// Default is what a snapshot record without the member gets; a member
	// that is required or has a default is in every answer.
	Default string
	// Strings: their length in characters, 0 for no bound.
	MinLength, MaxLength int
	// Integers: the least value; the greatest is MaxInteger.
	Minimum int64
	// Format is "date" (a calendar date YYYY-MM-DD), "uri" (an absolute URI)
	// or "zone" (one of Zones()).
	Format      string
	Description string
}

// SetMembers are the members of a Set.
var SetMembers = [...]Member{
	{Name: "id", Type: "string", Required: true, MinLength: 1, MaxLength: MaxKeyLength,
		Description: "The set id, unique across all zones."},
	{Name: "code", Type: "string", Required: true, MinLength: 1, MaxLength: MaxKeyLength,
		Description: "The set code, unique within its zone; the same code may be used in several zones."},
	{Name: "name", Type: "string", Required: true, MinLength: 1,
		Description: "The set's name, in its zone's language."},
	{Name: "zone", Type: "string", Required: true, Format: "zone"},
	{Name: "releasedOn", Type: "string", Format: "date",
		Description: "The release date, a calendar date `YYYY-MM-DD`."},
	{Name: "cardCount", Type: "integer", Required: true, Minimum: 0,
		Description: "The number of the set's cards in this catalogue, as many as listing the set gives; the count printed on the cards is their `totalCards`."},
}

// CardMembers are the members of a Card.
var CardMembers = [...]Member{
	{Name: "id", Type: "string", Required: true, MinLength: 1, MaxLength: MaxKeyLength,
		Description: "The catalogue id of the card, unique across all zones."},
	{Name: "name", Type: "string", Required: true, MinLength: 1, MaxLength: MaxNameLength,
		Description: "The card's name, in its zone's language."},
	{Name: "setName", Type: "string", Required: true, MinLength: 1,
		Description: "The `name` of the card's set."},
	{Name: "setCode", Type: "string", Required: true, MinLength: 1, MaxLength: MaxKeyLength,
		Description: "The `code` of the card's set, in the card's zone."},
	{Name: "number", Type: "string", Required: true, MinLength: 1, MaxLength: MaxNumberLength,
		Description: "The printed number, as printed (`4/102`, `TG02`)."},
	{Name: "language", Type: "string", Required: true, MinLength: 2,
		Description: "The language the card is printed in, a language tag (`en`, `ja`, `zh-tw`)."},
	{Name: "year", Type: "integer", Minimum: 1996,
		Description: "The year the card's set was released."},
	{Name: "variant", Type: "string", Default: DefaultVariant,
		Description: "The printing of the card, `standard` unless the catalogue tells one printing from another."},
	{Name: "rarity", Type: "string", MinLength: 1, MaxLength: 100,
		Description: "The card's rarity, absent when it has no rarity mark."},
	{Name: "imageUrl", Type: "string", Format: "uri",
		Description: "Where an image of the card may be found; not every such image exists."},
	{Name: "zone", Type: "string", Required: true, Format: "zone"},
	{Name: "totalCards", Type: "integer", Nullable: true, Minimum: 1,
		Description: "The set's count as printed on the card (165 in `025/165`), null when the set prints none; the set may hold more cards than that, secret rares among them: its `cardCount` is what this catalogue holds."},
	{Name: "illustrator", Type: "string", Nullable: true, MinLength: 1,
		Description: "Who illustrated the card, null when unknown."},
	{Name: "marketAId", Type: "string", Nullable: true, MinLength: 1,
		Description: "The card's product id at the first marketplace, null when it has none."},
	{Name: "marketAPath", Type: "string", Nullable: true, MinLength: 1,
		Description: "The card's path at the first marketplace, null when it has none."},
	{Name: "marketBId", Type: "string", Nullable: true, MinLength: 1,
		Description: "The card's product id at the second marketplace, null when it has none."},
	{Name: "scanFallbackUrl", Type: "string", Nullable: true, Format: "uri",
		Description: "Another image of the card, for when the one at `imageUrl` is missing; null when there is none."},
}

// PageMembers are the members of a Page.
var PageMembers = [...]Member{
	{Name: "page", Type: "integer", Required: true, Minimum: 1,
		Description: "The page returned, counting from 1."},
	{Name: "pageSize", Type: "integer", Required: true, Minimum: 1,
		Description: "The number of cards per page asked for."},
	{Name: "total", Type: "integer", Required: true, Minimum: 0,
		Description: "The number of cards of the set, on all pages."},
}

// Nullable is an optional field that may also be null. The zero value is
// absent: it is left out of JSON output (with the omitzero option).
type Nullable[T int64 | string] struct {
	Value   T
	Null    bool // present, and null
	Present bool // present, null or not
}

// Some returns a present, non-null value.
func Some[T int64 | string](v T) Nullable[T] { return Nullable[T]{Value: v, Present: true} }

// Null returns a present null.
func Null[T int64 | string]() Nullable[T] { return Nullable[T]{Null: true, Present: true} }

// IsZero reports whether the field is absent.
func (n Nullable[T]) IsZero() bool { return !n.Present }

// HasValue reports whether the field is present and not null.
func (n Nullable[T]) HasValue() bool { return n.Present && !n.Null }

// UnmarshalJSON reads null or a value; being called at all means present.
func (n *Nullable[T]) UnmarshalJSON(b []byte) error {
	*n = Nullable[T]{Present: true}
	if string(b) == "null" {
		n.Null = true
		return nil
	}
	return json.Unmarshal(b, &n.Value)
}

// MarshalJSON renders null or the value.
func (n Nullable[T]) MarshalJSON() ([]byte, error) {
	if !n.HasValue() {
		return []byte("null"), nil
	}
	switch v := any(n.Value).(type) {
	case int64:
		return appendInt(nil, v), nil
	case string:
		return AppendJSONString(nil, v), nil
	}
	return []byte("null"), nil
}
