// Package catalog is the domain of catalogd: sets and cards, the rules one
// record must satisfy, the folding and printed-number keys that order and find
// them, and the read-only bbolt file that holds one generation of the
// catalogue.
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

// Set is a card set of one release zone (docs/CONTRACT.md, Records).
type Set struct {
	ID         string           `json:"id"`
	Code       string           `json:"code"`
	Name       string           `json:"name"`
	Zone       string           `json:"zone"`
	ReleasedOn Nullable[string] `json:"releasedOn,omitzero"`
	CardCount  int64            `json:"cardCount"`
}

// Card is one printed card (docs/CONTRACT.md, Records). Optional fields are Nullable so
// that absent, null (where docs/CONTRACT.md, Records, allows it) and a value stay distinct from
// snapshot to response.
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

// Page is the pagination metadata of a list of cards.
type Page struct {
	Page     int64 `json:"page"`
	PageSize int64 `json:"pageSize"`
	Total    int64 `json:"total"`
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
