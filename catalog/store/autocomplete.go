package store

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/catalogd/catalogd/catalog"
	"github.com/catalogd/catalogd/catalog/store/internal/layout"
	bolt "go.etcd.io/bbolt"
)

// AutocompleteQuery is one autocomplete (docs/CONTRACT.md, As you type),
// already validated.
type AutocompleteQuery struct {
	// Q is what was typed: its last term is a prefix of a word.
	Q string
	// Zone limits the names and their cards to one zone; "" is every zone.
	Zone string
	// Limit is the most names answered, at most MaxAutocompleteLimit.
	Limit int
}

// NameCount is a card name as printed and how many cards bear it.
type NameCount struct {
	Name  string
	Cards uint64
}

// Autocomplete returns the names that complete q.Q, best first: those
// with a form (the folded name, its romanized form, a name of one of its
// groups) equal to what was typed, then those with a form that starts
// with it, then those with a word that starts with its last term; within
// each, more cards first, then the folded name.
func (db *DB) Autocomplete(q AutocompleteQuery) ([]NameCount, error) {
	fields := completionTerms(q.Q)
	if len(fields) == 0 || q.Limit <= 0 {
		return nil, nil
	}
	ns := 0
	if q.Zone != "" {
		z := catalog.ZoneIndex(q.Zone)
		if z < 0 {
			return nil, fmt.Errorf("autocomplete: unknown zone %q", q.Zone)
		}
		ns = 1 + z
	}
	var names []NameCount
	err := db.read(func(r *reader) error {
		a := completer{c: r.completions, other: r.completionRecords, cards: indexBlocks{c: r.tx.Bucket(layout.BucketNumbers).Cursor()}, ns: ns, limit: min(q.Limit, layout.MaxAutocompleteLimit)}
		whole := []byte(strings.Join(fields, " "))
		equal, err := a.run(layout.CompleteForm, whole)
		if err != nil {
			return err
		}
		starting, err := a.prefix(layout.CompleteForm, whole)
		if err != nil {
			return err
		}
		last, others := []byte(fields[len(fields)-1]), fields[:len(fields)-1]
		head := catalog.LeadingWord(last)
		if head == nil && len(others) > 0 {
			// A last term that starts no word (a symbol: ニドラン ♀,
			// ゲッコウガ ☆) is held within a name as the others are, and
			// the term before it is the one completed.
			others = append(slices.Clone(others[:len(others)-1]), string(last))
			last = []byte(fields[len(fields)-2])
			head = catalog.LeadingWord(last)
		}
		var words []uint32
		switch {
		case len(firstOfTiers(a.limit, equal, starting)) == a.limit:
			// The names with a form that starts with what was typed are
			// enough: none with a word that does comes before them.
		case head == nil:
			// A last term that starts with a separator starts no word.
		case len(others) == 0 && len(head) == len(last):
			words, err = a.prefix(layout.CompleteWord, last)
		default:
			if len(head) < len(last) {
				// The last term runs on past its first word (mr., ho-oh):
				// the names of words that start with that word are the
				// ones to check, and the whole term stands in them.
				others = append(slices.Clone(others), string(last))
			}
			words, err = db.wordsWithOthers(r, &a, searchTerms(strings.Join(others, " ")), head, last)
		}
		if err != nil {
			return err
		}
		names, err = a.names(r, firstOfTiers(a.limit, equal, starting, words))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("autocomplete %q: %w", q.Q, err)
	}
	return names, nil
}

// completionTerms returns the terms of what was typed (Terms) without
// the punctuation at its end, which asks nothing more: mr. completes what
// mr does, charizard . what charizard does.
func completionTerms(q string) []string {
	fields := Terms(q)
	for len(fields) > 0 {
		if last := strings.TrimRightFunc(fields[len(fields)-1], unicode.IsPunct); last != "" {
			fields[len(fields)-1] = last
			break
		}
		fields = fields[:len(fields)-1]
	}
	return fields
}

// firstOfTiers returns the first limit names of the tiers, in order, each
// name once: each tier holds the first limit names of its kind, so those
// after the names of the tiers before it are among them.
func firstOfTiers(limit int, tiers ...[]uint32) []uint32 {
	var out []uint32
	for _, t := range tiers {
		for _, ord := range t {
			if len(out) == limit {
				return out
			}
			if !slices.Contains(out, ord) {
				out = append(out, ord)
			}
		}
	}
	return out
}

// completer reads the runs of the completions bucket for one namespace.
type completer struct {
	c     *bolt.Cursor // of the runs
	other *bolt.Cursor // of the records and groups' runs
	cards indexBlocks  // the cards' index entries
	ns    int
	limit int
	key   []byte
	runs  int // read by the query so far
}

// run returns the first names of the namespace in the run of kind+term,
// its groups' included.
func (a *completer) run(kind byte, term []byte) ([]uint32, error) {
	run, err := findRun(a.c, kind, term)
	if run == nil || err != nil {
		return nil, err
	}
	return a.readRun(term, run)
}

// readRun returns the first names of the namespace in run, the run of
// term, its groups' included.
func (a *completer) readRun(term, run []byte) ([]uint32, error) {
	a.runs++
	first, err := firstNames(nil, run, a.ns, a.limit)
	if err != nil {
		return nil, damagef("autocomplete index damaged: run %q: %v; import the catalogue again", term, err)
	}
	err = a.eachGroupRun(term, run, func(g uint32, grun []byte) error {
		names, err := firstNames(nil, grun, a.ns, a.limit)
		if err != nil {
			return damagef("autocomplete index damaged: group %d: %v; import the catalogue again", g, err)
		}
		first = layout.MergeFirst(nil, first, names, a.limit)
		return nil
	})
	return first, err
}

// eachGroupRun calls fn with the run of each group of run, the run of
// term.
func (a *completer) eachGroupRun(term, run []byte, fn func(g uint32, grun []byte) error) error {
	groups, err := segmentOrdinals(nil, run, layout.RunGroups, -1)
	if err != nil {
		return damagef("autocomplete index damaged: run %q: %v; import the catalogue again", term, err)
	}
	var gid [4]byte
	for _, g := range groups {
		a.runs++
		binary.BigEndian.PutUint32(gid[:], g)
		grun, err := findRun(a.other, layout.CompleteGroup, gid[:])
		if err != nil {
			return err
		}
		if err := fn(g, grun); err != nil {
			return err
		}
	}
	return nil
}

// blockRuns reads the runs of a block, as the build writes them
// (build/completionruns.go).
type blockRuns struct {
	v    []byte
	term []byte
}

// next returns the next run and its term, valid until the next call, or
// ok false at the end of the block.
func (b *blockRuns) next() (term, run []byte, ok bool, err error) {
	if len(b.v) == 0 {
		return nil, nil, false, nil
	}
	shared, w := binary.Uvarint(b.v)
	if w <= 0 || shared > uint64(len(b.term)) {
		return nil, nil, false, layout.ErrBadEntry
	}
	suffix, rest, ok := layout.LengthPrefixed(b.v[w:])
	if !ok {
		return nil, nil, false, layout.ErrBadEntry
	}
	if run, b.v, ok = layout.LengthPrefixed(rest); !ok {
		return nil, nil, false, layout.ErrBadEntry
	}
	b.term = append(b.term[:shared], suffix...)
	return b.term, run, true, nil
}

// blockBefore places c on the block that holds the first run of kind at
// or after term (or the block after it, when none does), and returns it.
func blockBefore(c *bolt.Cursor, kind byte, term []byte) (k, v []byte) {
	from := append([]byte{kind}, term...)
	k, v = c.Seek(from)
	if bytes.HasPrefix(k, append(from, 0)) {
		return k, v // the block starts with term itself
	}
	if k == nil {
		k, v = c.Last()
	} else {
		k, v = c.Prev()
	}
	if k == nil || k[0] != kind {
		return c.Seek(from)
	}
	return k, v
}

// findRun returns the run of kind+term, nil when there is none.
func findRun(c *bolt.Cursor, kind byte, term []byte) ([]byte, error) {
	tc := termCursor{c: c, kind: kind}
	if err := tc.seek(term); err != nil || !tc.ok || !bytes.Equal(tc.term, term) {
		return nil, err
	}
	return tc.run, nil
}

// prefix returns the first names of the namespace in the runs of kind
// whose terms start with term: stored once for a prefix of many runs,
// else merged from each.
func (a *completer) prefix(kind byte, term []byte) ([]uint32, error) {
	a.key = append(append(append(a.key[:0], layout.CompleteTop, kind), term...), 0)
	if k, v := a.c.Seek(a.key); bytes.Equal(k, a.key) {
		top, err := segmentOrdinals(nil, v, a.ns, a.limit)
		if err != nil {
			return nil, damagef("autocomplete index damaged: %q: %v; import the catalogue again", k, err)
		}
		return top, nil
	}
	var best []uint32
	runs := a.runs
	tc := termCursor{c: a.c, kind: kind}
	err := tc.seek(term)
	for ; err == nil && tc.ok && bytes.HasPrefix(tc.term, term); err = tc.next() {
		first, err := a.readRun(tc.term, tc.run)
		if err != nil {
			return nil, err
		}
		best = layout.MergeFirst(nil, best, first, a.limit)
		if a.runs-runs > layout.TopPrefixRuns {
			return nil, damagef("autocomplete index damaged: %q starts more than %d runs and has no first names; import the catalogue again", term, layout.TopPrefixRuns)
		}
	}
	return best, err
}

// segmentOrdinals appends the ordinals of segment seg of v, at most n of
// them (all when n < 0), where they are plain gaps: the groups of a run,
// or the first names of a namespace stored for a prefix. A nil v has
// none.
func segmentOrdinals(dst []uint32, v []byte, seg, n int) ([]uint32, error) {
	s, err := runSegment(v, seg)
	if err != nil {
		return dst, err
	}
	var ord uint32
	for i := 0; len(s) > 0 && (n < 0 || i < n); i++ {
		d, w := binary.Uvarint(s)
		if w <= 0 {
			return dst, layout.ErrBadEntry
		}
		if i == 0 {
			ord = uint32(d)
		} else {
			ord += uint32(d)
		}
		dst, s = append(dst, ord), s[w:]
	}
	return dst, nil
}

// names returns the names of ords as printed, with their cards.
func (a *completer) names(r *reader, ords []uint32) ([]NameCount, error) {
	out := make([]NameCount, 0, len(ords))
	var n nameView
	var key []byte
	for _, ord := range ords {
		if err := a.name(ord, &n); err != nil {
			return nil, err
		}
		card, err := r.cardOf(&n.entries[0], &key)
		if err != nil {
			return nil, err
		}
		name, err := cardName(card)
		if err != nil {
			return nil, damagef("autocomplete index damaged: card %q: %v; import the catalogue again", n.entries[0].ID, err)
		}
		out = append(out, NameCount{Name: name, Cards: n.record.Count(a.ns)})
	}
	return out, nil
}

// cardName returns the name of a card from its canonical JSON, where it
// follows the id (Card.AppendJSON): a card's whole JSON need not be
// decoded for it.
func cardName(card []byte) (string, error) {
	rest, ok := bytes.CutPrefix(card, []byte(`{"id":`))
	if !ok {
		return "", errors.New("not a card's canonical JSON")
	}
	end := jsonStringEnd(rest)
	if rest, ok = bytes.CutPrefix(rest[end:], []byte(`,"name":`)); !ok || end == 0 {
		return "", errors.New("not a card's canonical JSON")
	}
	quoted := rest[:jsonStringEnd(rest)]
	if len(quoted) >= 2 && bytes.IndexByte(quoted, '\\') < 0 {
		return string(quoted[1 : len(quoted)-1]), nil // as written: valid UTF-8, nothing escaped
	}
	var name string
	if err := json.Unmarshal(quoted, &name); err != nil {
		return "", err
	}
	return name, nil
}

// jsonStringEnd returns the length of the JSON string at the start of b,
// quotes included, or 0 when b does not start with a whole one.
func jsonStringEnd(b []byte) int {
	if len(b) == 0 || b[0] != '"' {
		return 0
	}
	for i := 1; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return 0
}

// nameView is a name as a query reads it: its record, and the index
// entry of a card that bears it for each romanization its cards take.
type nameView struct {
	record  layout.NameRecord
	entries []layout.IndexEntry
}

// name reads name ord into n.
func (a *completer) name(ord uint32, n *nameView) error {
	if err := a.record(ord, &n.record); err != nil {
		return damagef("autocomplete index damaged: name %d: %v; import the catalogue again", ord, err)
	}
	n.entries = n.entries[:0]
	for _, card := range n.record.Ords {
		e, err := a.cards.decoded(card)
		if err != nil {
			return damagef("autocomplete index damaged: name %d: card %d: %v; import the catalogue again", ord, card, err)
		}
		n.entries = append(n.entries, e)
	}
	return nil
}

// record decodes the record of the name placed at ord into n.
func (a *completer) record(ord uint32, n *layout.NameRecord) error {
	var key [5]byte
	key[0] = layout.CompleteNames
	binary.BigEndian.PutUint32(key[1:], ord/layout.NameBlockSize)
	k, v := a.other.Seek(key[:])
	if !bytes.Equal(k, key[:]) {
		return layout.ErrBadEntry
	}
	b, err := layout.ReadIndexBlock(v)
	if err != nil || int(ord%layout.NameBlockSize) >= b.Len() {
		return layout.ErrBadEntry
	}
	return layout.DecodeNameRecord(n, b.Entry(int(ord%layout.NameBlockSize)))
}

// wordStarts tells whether a text has a word that starts with a prefix,
// keeping what it found of each group's text: the cards a query checks
// share few groups.
type wordStarts struct {
	prefix  []byte
	groups  *groupTexts
	byGroup map[uint32]bool
	oneWord bool // the prefix is one word, no boundary within it
	first   rune // of the prefix
}

func newWordStarts(prefix []byte, groups *groupTexts) wordStarts {
	whole := 0 // words of the prefix that are the whole of it
	catalog.EachWord(prefix, func(w []byte) {
		if len(w) == len(prefix) {
			whole++
		}
	})
	first, _ := utf8.DecodeRune(prefix)
	return wordStarts{prefix: prefix, groups: groups, oneWord: whole == 1, first: first}
}

// text reports whether the prefix starts where a word of text does
// (catalog.WordStartsAt). It may run on past that word's end, across
// punctuation and spaces: mr. completes Mr. Mime, lele-gx Tapu Lele-GX.
func (ws *wordStarts) text(text []byte) bool {
	for i := 0; ; i++ {
		at := bytes.Index(text[i:], ws.prefix)
		if at < 0 {
			return false
		}
		if i += at; catalog.WordStartsAt(text, i) {
			return true
		}
	}
}

// entry reports whether a word of the entry's search text or of its
// groups' texts starts with the prefix.
func (ws *wordStarts) entry(e *layout.IndexEntry) bool {
	if ws.text(e.Name) {
		return true
	}
	found := false
	layout.EachGroupID(e.Groups, func(id uint32) bool {
		in, ok := ws.byGroup[id]
		if !ok {
			if ws.byGroup == nil {
				ws.byGroup = make(map[uint32]bool)
			}
			in = ws.text(ws.groups.text(id))
			ws.byGroup[id] = in
		}
		found = in
		return !found
	})
	return found
}

// holds reports whether one of the name's cards holds every term, as a
// substring of its search text or of its groups' texts (a name has no
// number), and a word that starts with the prefix of starts: its entries
// are a card of each romanization its cards in the namespace take.
func (n *nameView) holds(terms []term, starts *wordStarts) bool {
	return slices.ContainsFunc(n.entries, func(e layout.IndexEntry) bool {
		for i := range terms {
			if t := terms[i].text; !bytes.Contains(e.Name, t) && !starts.groups.anyHolds(e.Groups, t) {
				return false
			}
		}
		return starts.entry(&e)
	})
}
