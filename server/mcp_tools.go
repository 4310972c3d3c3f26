package server

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/catalogd/catalogd/catalog"
	"github.com/catalogd/catalogd/catalog/store"
	"github.com/catalogd/catalogd/server/op"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// catalogTools are the tools of docs/CONTRACT.md, MCP: each the operation
// of the REST route that asks the same question, with its definition for
// agents and a one-line summary of its answer.
func catalogTools() []catalogTool {
	return []catalogTool{listSetsTool(), listSetCardsTool(), getCardTool(), getCardsTool(), getSetCardsByNumberTool(), searchCardsTool(), autocompleteNamesTool()}
}

func listSetsTool() catalogTool {
	return toolOf(&mcp.Tool{
		Name:  "list_sets",
		Title: "List sets",
		Description: "Lists the card sets of the catalogue, or of one release zone, newest release first " +
			"(sets without a release date last, then by id). A set's id is unique across zones; its code is " +
			"unique within its zone. Either names the set in list_set_cards and search_cards.",
		InputSchema: objectSchema(nil,
			"zone", zoneSchema("Only the sets of this release zone; every zone when left out."),
		),
		OutputSchema: outputSchema([]string{"Set", "Zone"}, "data", arrayOf("Set")),
		Annotations:  readOnlyHints("List sets"),
	}, op.ListSets, func(_ *store.DB, req op.ListSetsRequest, a op.Answer) (string, error) {
		where := "every zone"
		if req.Zone != "" {
			where = "zone " + req.Zone
		}
		return fmt.Sprintf("%s in %s, newest release first.", counted(int64(a.N), "set"), where), nil
	})
}

// codeSchema is the schema of the argument that names a set, as the REST
// path parameter {code} does.
var codeSchema = &jsonschema.Schema{
	Type: "string", MinLength: intPtr(1),
	Description: "A set code as returned by list_sets, or the full set id. A code used in several zones " +
		"names the set of the first zone in the order intl, jp, chn; use the set id for another zone.",
}

// setNotFound is where an agent finds the sets after naming one that is
// not there.
const setNotFound = "; list_sets gives the id and code of every set"

func listSetCardsTool() catalogTool {
	t := toolOf(&mcp.Tool{
		Name:  "list_set_cards",
		Title: "List the cards of a set",
		Description: "Returns one page of the cards of a set, in printed-number order (1 < 2 < TG02 < 3 < 10 < 025/165 < 112/102), " +
			"then by card id, with the page, the page size and the total number of cards of the set. " +
			"A page past the last one has no cards and the true total.",
		InputSchema: objectSchema([]string{"code"},
			"code", codeSchema,
			"page", integerSchema("The page to return, counting from 1.", 1, op.MaxPage, 1),
			"pageSize", integerSchema("The number of cards per page.", 1, op.MaxPageSize, op.DefaultPageSize),
		),
		OutputSchema: outputSchema([]string{"Card", "Page", "Zone"}, "data", arrayOf("Card"), "meta", &jsonschema.Schema{Ref: "#/$defs/Page"}),
		Annotations:  readOnlyHints("List the cards of a set"),
	}, op.ListSetCards, func(db *store.DB, req op.ListSetCardsRequest, a op.Answer) (string, error) {
		summary, err := setSummary(db, req.Code)
		if err != nil {
			return "", err
		}
		pages := (a.Total + req.PageSize - 1) / req.PageSize
		switch {
		case a.Total == 0:
			summary += "no cards."
		case a.N == 0:
			summary += fmt.Sprintf("%s; page %d is past the last page, %d.", counted(a.Total, "card"), req.Page, pages)
		default:
			first := (req.Page-1)*req.PageSize + 1
			summary += fmt.Sprintf("cards %d to %d of %d, page %d of %d.", first, first+int64(a.N)-1, a.Total, req.Page, pages)
		}
		return summary, nil
	})
	t.notFound = setNotFound
	return t
}

// setSummary starts the summary of an answer about the set code names.
func setSummary(db *store.DB, code string) (string, error) {
	set, err := db.Set(code)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("Set %s (id %s, code %s, zone %s): ", catalog.Quote(set.Name), set.ID, set.Code, set.Zone), nil
}

// cardNotFound is where an agent finds card ids after naming one that is
// not there.
const cardNotFound = "; search_cards and list_set_cards give card ids"

func getCardTool() catalogTool {
	t := toolOf(&mcp.Tool{
		Name:        "get_card",
		Title:       "Get a card",
		Description: "Returns the card whose id is exactly cardId.",
		InputSchema: objectSchema([]string{"cardId"},
			"cardId", &jsonschema.Schema{
				Type: "string", MinLength: intPtr(1),
				Description: "The full card id, as list_set_cards and search_cards return it in a card's id.",
			},
		),
		OutputSchema: outputSchema([]string{"Card", "Zone"}, "data", &jsonschema.Schema{Ref: "#/$defs/Card"}),
		Annotations:  readOnlyHints("Get a card"),
	}, op.GetCard, func(_ *store.DB, req op.GetCardRequest, a op.Answer) (string, error) {
		var card struct{ Name, Number, SetName, SetCode, Zone string }
		if err := json.Unmarshal(a.Body[len(`{"data":`):len(a.Body)-1], &card); err != nil {
			return "", fmt.Errorf("card %q: decode stored record: %w", req.ID, err)
		}
		return fmt.Sprintf("Card %s (id %s): number %s of set %s (code %s, zone %s).",
			catalog.Quote(card.Name), req.ID, card.Number, catalog.Quote(card.SetName), card.SetCode, card.Zone), nil
	})
	t.notFound = cardNotFound
	return t
}

func getCardsTool() catalogTool {
	t := toolOf(&mcp.Tool{
		Name:  "get_cards",
		Title: "Get many cards",
		Description: fmt.Sprintf("Returns the cards of up to %d ids at once (a deck list, a binder page), in the order asked, "+
			"each once, and in notFound the ids that no card has. One call answers a whole list: prefer it to many get_card calls.", op.MaxIDs),
		InputSchema: objectSchema([]string{"id"},
			"id", &jsonschema.Schema{
				Type: "array", MinItems: intPtr(1), MaxItems: intPtr(op.MaxIDs),
				Items:       &jsonschema.Schema{Type: "string", MinLength: intPtr(1)},
				Description: "The full card ids, as list_set_cards and search_cards return them in a card's id.",
			},
		),
		OutputSchema: outputSchema([]string{"Card", "Zone"}, "data", withItems(arrayOf("Card"), 0, op.MaxIDs),
			"notFound", withItems(&jsonschema.Schema{Type: "array", Items: &jsonschema.Schema{Type: "string"}}, 0, op.MaxIDs)),
		Annotations: readOnlyHints("Get many cards"),
	}, op.GetCards, func(_ *store.DB, req op.GetCardsRequest, a op.Answer) (string, error) {
		summary := fmt.Sprintf("%s of the %s asked for found, in the order asked", counted(int64(a.N), "card"), counted(int64(len(req.IDs)), "distinct id"))
		if a.Missing > 0 {
			summary += fmt.Sprintf("; %s in notFound%s", counted(int64(a.Missing), "id"), cardNotFound)
		}
		return summary + ".", nil
	})
	// A call of n ids costs what getCards of n ids does.
	t.cost = func(a toolArgs) int { return idsCost(len(a.values["id"])) }
	return t
}

func getSetCardsByNumberTool() catalogTool {
	t := toolOf(&mcp.Tool{
		Name:  "get_set_cards_by_number",
		Title: "Get the cards of a set by printed number",
		Description: "Returns every card of a set printed with one number, ordered by card id: the card read off its " +
			"printed corner (\"SV1a 025/073\" is code SV1a, number 025/073). The number may be written in any form " +
			"that has the same normalized printed number: 25, 025, 025/073 and 25/73 are one number, TG02 and TG2 too. " +
			"A number may have several cards (variants).",
		InputSchema: objectSchema([]string{"code", "number"},
			"code", codeSchema,
			"number", &jsonschema.Schema{
				Type: "string", MinLength: intPtr(1), MaxLength: intPtr(catalog.MaxNumberLength),
				Description: "The printed number, as printed or in any equal form (025/073, 25, TG02).",
			},
		),
		OutputSchema: outputSchema([]string{"Card", "Zone"}, "data", withItems(arrayOf("Card"), 1, 0)),
		Annotations:  readOnlyHints("Get the cards of a set by printed number"),
	}, op.GetSetCardsByNumber, func(db *store.DB, req op.GetSetCardsByNumberRequest, a op.Answer) (string, error) {
		summary, err := setSummary(db, req.Code)
		if err != nil {
			return "", err
		}
		return summary + fmt.Sprintf("%s numbered %s, by id.", counted(int64(a.N), "card"), catalog.Quote(req.Number)), nil
	})
	t.notFound = setNotFound + ", and list_set_cards the numbers of its cards"
	return t
}

func searchCardsTool() catalogTool {
	return toolOf(&mcp.Tool{
		Name:  "search_cards",
		Title: "Search cards",
		Description: "Finds cards by name or printed number, in every zone unless zone is given, in printed-number order " +
			"then by card id, at most limit of them. Names and queries are folded alike (case, diacritics, " +
			"full-width and half-width forms, hiragana to katakana, traditional Chinese to simplified; the kana voicing marks are kept), so pokemon " +
			"finds Pokémon, ぴかちゅう finds ピカチュウ and 宝可梦 finds 寶可夢. A name is also found by its romanized form: kana as Hepburn " +
			"romaji, a Chinese name's Han characters as toneless pinyin, so pikachu finds ピカチュウ and pikaqiu finds 皮卡丘; " +
			"and by its name in other languages (the catalogue's name groups), so charizard with zone jp finds リザードン. " +
			"The query is split on white space into terms; a card matches " +
			"when every term is part of its name or of its romanized form, or equals its printed number (25, 025 and 25/102 all equal 25), " +
			"so charizard 4 finds Charizard numbered 4. With fuzzy true, a term of 5 to 8 characters may also be one edit " +
			"(a letter added, dropped, changed, or two neighbours swapped) from a word of the name, and a term of 9 or more " +
			"two edits, so charzard finds Charizard; terms with a digit and shorter terms match as without it. Cards that match " +
			"every term as typed come first, then those that take fewer edits.",
		InputSchema: objectSchema([]string{"q"},
			"q", &jsonschema.Schema{
				Type: "string", MinLength: intPtr(op.MinQueryLen), MaxLength: intPtr(op.MaxQueryLen),
				Description: fmt.Sprintf("The query: %d to %d characters (Unicode code points) once leading and trailing white space is trimmed.", op.MinQueryLen, op.MaxQueryLen),
			},
			"zone", zoneSchema("Only cards of this release zone."),
			"set", &jsonschema.Schema{
				Type: "string", MinLength: intPtr(1), MaxLength: intPtr(op.MaxSetLen),
				Description: "Only cards of this set, named by its id or by its code. A code matches the sets of that code " +
					"in every zone, or in zone alone when it is given. An id names its set before a code does, and with zone, " +
					"only a set of that zone. A set that does not exist gives no cards, not an error.",
			},
			"limit", integerSchema("The largest number of cards to return.", 1, op.MaxLimit, op.DefaultLimit),
			"fuzzy", &jsonschema.Schema{
				Type: "boolean", Default: json.RawMessage("false"),
				Description: "Let the terms be typed with a typo or two, as described above.",
			},
		),
		OutputSchema: outputSchema([]string{"Card", "Zone"}, "data", arrayOf("Card")),
		Annotations:  readOnlyHints("Search cards"),
	}, op.SearchCards, func(_ *store.DB, req op.SearchRequest, a op.Answer) (string, error) {
		var filters []string
		if req.Zone != "" {
			filters = append(filters, "zone "+req.Zone)
		}
		if req.Set != "" {
			filters = append(filters, "set "+catalog.Quote(req.Set))
		}
		verb := " match "
		if a.N == 1 {
			verb = " matches "
		}
		summary := counted(int64(a.N), "card") + verb + catalog.Quote(req.Q)
		if len(filters) > 0 {
			summary += " (" + strings.Join(filters, ", ") + ")"
		}
		if req.Fuzzy {
			summary += ", allowing typos, those that take the fewest edits first, then in printed-number order."
		} else {
			summary += ", in printed-number order."
		}
		if a.N == req.Limit {
			summary += fmt.Sprintf(" That is the limit of %d: more may match.", req.Limit)
		}
		return summary, nil
	})
}

// counted is n things in English: "1 card", "2 cards".
func counted(n int64, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return strconv.FormatInt(n, 10) + " " + thing + "s"
}

func autocompleteNamesTool() catalogTool {
	return toolOf(&mcp.Tool{
		Name:  "autocomplete_names",
		Title: "Autocomplete card names",
		Description: "Suggests the card names that complete what a person has typed so far, in any script or language, " +
			"with how many cards bear each. The last term of q starts where a word does in the name, its romanized form " +
			"(Hepburn romaji for kana, toneless pinyin for a Chinese name) or its name in another language (the " +
			"catalogue's name groups), and may run on past that word (mr. suggests Mr. Mime); every other term must be " +
			"part of one of these, as in search_cards. So pika suggests Pikachu and ピカチュウ, and charizard with zone jp " +
			"suggests リザードン. Names equal to q come first, then those that start with q, then those in which its last " +
			"term starts where a word does; within each, more cards first, then by name. Pass a name it suggests to " +
			"search_cards to find its cards (but for a name of one character, such as N: search_cards takes two or more).",
		InputSchema: objectSchema([]string{"q"},
			"q", &jsonschema.Schema{
				Type: "string", MinLength: intPtr(op.MinPrefixLen), MaxLength: intPtr(op.MaxQueryLen),
				Description: fmt.Sprintf("What was typed: %d to %d characters (Unicode code points) once leading and trailing white space is trimmed.", op.MinPrefixLen, op.MaxQueryLen),
			},
			"zone", zoneSchema("Only names of cards of this release zone, counting only those cards."),
			"limit", integerSchema("The largest number of names to return.", 1, store.MaxAutocompleteLimit, op.DefaultAutocompleteLimit),
		),
		OutputSchema: outputSchema([]string{"NameCount"}, "data", arrayOf("NameCount")),
		Annotations:  readOnlyHints("Autocomplete card names"),
	}, op.AutocompleteNames, func(_ *store.DB, req op.AutocompleteRequest, a op.Answer) (string, error) {
		summary := fmt.Sprintf("%s complete %s", counted(int64(a.N), "name"), catalog.Quote(req.Q))
		if a.N == 1 {
			summary = fmt.Sprintf("1 name completes %s", catalog.Quote(req.Q))
		}
		if req.Zone != "" {
			summary += " in zone " + req.Zone
		}
		summary += ", best first, with the cards that bear each."
		if a.N == req.Limit {
			summary += fmt.Sprintf(" That is the limit of %d: more may complete it.", req.Limit)
		}
		return summary, nil
	})
}
