package store

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/catalogd/catalogd/catalog"
	"github.com/catalogd/catalogd/catalog/store/internal/layout"
	bolt "go.etcd.io/bbolt"
)

// ErrOutsideHistory means a generation is neither the active one nor one
// the file holds the changes since.
var ErrOutsideHistory = errors.New("not in the history of the catalogue")

// ErrNewerGeneration means a generation is newer than the active one: a
// catalogue this server has not switched to yet, which a replica beside it
// already serves (docs/CONTRACT.md, Scaling out).
var ErrNewerGeneration = errors.New("newer than the catalogue served here")

// generationTime is the layout of the time that starts a generation's name
// (NewGeneration).
const generationTime = "20060102T150405Z"

// switchWindow is how long after the time its name gives a generation
// newer than the active one counts as one this server is switching to: its
// import, then its file put beside every replica, take minutes, not hours.
// Past that, or from beyond the clocks' skew in the future, it is a
// generation this server will not switch to (a catalogue file restored
// from a backup, a since made up): ErrOutsideHistory, so that the partner
// downloads the export again rather than retry for as long as nothing is
// imported (docs/OPERATIONS.md, Backups).
const (
	switchWindow = 6 * time.Hour
	clockSkew    = 5 * time.Minute
)

// NewGeneration names the generation of an import made at now that
// replaces the generation after ("" for none): a time to the second, then
// 8 hex digits at random. The time is now's, or the second after that of
// after when now is not past it (two imports in one second, a clock set
// back a little): names sort by time, which tells a generation newer than
// the one served from one gone from its history (notHeld). A generation
// named further ahead of now than the clocks' skew was made by a clock
// that was wrong; following it would name every import after it in the
// future, so the order is broken that once instead.
func NewGeneration(now time.Time, after string) string {
	t := now.UTC().Truncate(time.Second)
	if prev, ok := generationMade(after); ok && !t.After(prev) && prev.Before(now.Add(clockSkew)) {
		t = prev.Add(time.Second)
	}
	var b [4]byte
	rand.Read(b[:])
	return t.Format(generationTime) + "-" + hex.EncodeToString(b[:])
}

// generationMade returns the time that starts the name of generation gen,
// if gen is a generation's name as NewGeneration makes them.
func generationMade(gen string) (time.Time, bool) {
	stamp, suffix, ok := strings.Cut(gen, "-")
	if !ok || len(suffix) != 8 || strings.ToLower(suffix) != suffix {
		return time.Time{}, false
	}
	if _, err := hex.DecodeString(suffix); err != nil {
		return time.Time{}, false
	}
	t, err := time.Parse(generationTime, stamp)
	return t, err == nil
}

// notHeld is the error of a generation whose changes the catalogue does
// not hold: ErrNewerGeneration when its name says it was made after the
// active one, within switchWindow of now; ErrOutsideHistory otherwise.
// role, if any, says what the generation is to the request.
func (db *DB) notHeld(gen, role string) error {
	t, ok := generationMade(gen)
	active, aok := generationMade(db.info.Generation)
	now := db.now()
	if ok && aok && t.After(active) && t.Before(now.Add(clockSkew)) && now.Sub(t) < switchWindow {
		return fmt.Errorf("generation %q%s is %w, %q", gen, role, ErrNewerGeneration, db.info.Generation)
	}
	return fmt.Errorf("generation %q%s is %w", gen, role, ErrOutsideHistory)
}

// ErrBadCursor means a changes cursor is not one this catalogue made.
var ErrBadCursor = errors.New("not a cursor of the list of changes")

// ErrOtherListCursor means a changes cursor is one of another list, made
// with another since or zone. It is an ErrBadCursor.
var ErrOtherListCursor = fmt.Errorf("a cursor of another list of changes (another since or zone): %w", ErrBadCursor)

// SyncGenerations returns the generations Changes answers for, oldest
// first: the one each kept step came from, then the active one.
func (db *DB) SyncGenerations() []string {
	var gens []string
	for _, s := range db.info.History {
		gens = append(gens, s.From)
	}
	return append(gens, db.info.Generation)
}

// sinceStep returns the index in History of the first step after
// generation gen, len(History) for the active generation.
func (db *DB) sinceStep(gen string) (int, bool) {
	if gen == db.info.Generation {
		return len(db.info.History), true
	}
	for i, s := range db.info.History {
		if s.From == gen {
			return i, true
		}
	}
	return 0, false
}

// ChangesQuery asks for one page of the changes since a generation.
type ChangesQuery struct {
	// Since is the generation the copy holds, or two joined by
	// HeldSeparator, "G1~G2": a copy of G1 that holds some records as
	// generations up to G2 left them, after a sync that paged across an
	// import (Changes).
	Since string
	Zone  string // "" for every zone
	After string // the cursor of the previous page, "" for the first
	Limit int
}

// HeldSeparator joins the two generations of a Since.
const HeldSeparator = "~"

// Change is one entry of a list of changes: Record is the set's or card's
// JSON as served, nil for a removal. Valid only during the call it is
// passed to.
type Change struct {
	Kind   string // "set", "card" or "names" (the name groups, one record)
	ID     string
	Record []byte
}

// Changes calls fn with at most q.Limit changes from generation q.Since to
// the active one (sets, then cards, each by id, then the name groups; a
// record once, as it is now), after the cursor q.After. It returns the
// cursor of the next page, "" after the last, and the Since of the client's
// next sync once it has applied this page.
//
// A cursor remembers the generation its list started at. When another
// catalogue has been swapped in since, the rest of the list is given as seen
// from that generation: a record that did not exist then is given only as
// removed, if it existed at q.Since, and otherwise not at all. The client
// is then to sync again from that generation (docs/CONTRACT.md, Changes),
// and is given everything else again, as it is then; a record added after
// the list started and removed before the next sync would otherwise stay.
//
// The copy then holds some records as a later generation left them, so the
// cursor remembers the newest generation a page of the list was given from
// (held), and the next Since names it too, "G1~G2". The pages of one list
// may come from replicas that switch to a new catalogue at different
// moments, so held may be newer than the catalogue served here. A client
// that stops before the last page holds records of held too, beside those
// of q.Since: its next Since is q.Since's first generation and held. Since
// such a copy may hold a record that its first generation did not, a list
// since "G1~G2" gives as removed every record gone now that was there at
// G1 or at any generation after it up to G2. The next sync is refused
// (ErrOutsideHistory) when G2 has left the history, which a catalogue put
// back from before G2 and imported over does: its changes would never
// name those records, and the copy would stay wrong.
func (db *DB) Changes(q ChangesQuery, fn func(Change) error) (next, nextSince string, err error) {
	if q.Limit < 1 {
		return "", "", fmt.Errorf("changes since %q: limit %d: give 1 or more", q.Since, q.Limit)
	}
	from, heldStep, err := db.sinceSteps(q.Since)
	if err != nil {
		return "", "", err
	}
	pin, held, after, err := db.listStart(q)
	if err != nil {
		return "", "", err
	}
	pinStep, ok := db.sinceStep(pin)
	if !ok {
		return "", "", db.notHeld(pin, ", where this list of changes started,")
	}
	pinStep = max(pinStep, from)
	zone := layout.ZoneNone
	if q.Zone != "" {
		zone = layout.ZoneByte(q.Zone)
	}
	in := func(z byte) bool {
		return z != layout.ZoneNone && (zone == layout.ZoneNone || z == zone || z == layout.ZoneAll)
	}

	err = db.view(func(tx *bolt.Tx) error {
		b := tx.Bucket(layout.BucketChanges)
		if b == nil || from == len(db.info.History) {
			return nil
		}
		w := newChangeWalk(b, db.info.History[from:], after)
		n := 0
		var last []byte
		var rec []byte
		for w.next() {
			before, now := in(w.before), in(w.after)
			if !before && heldStep > from {
				// The copy may hold it as a generation up to the
				// second of since had it: see above.
				before = w.inUntil(heldStep-from, in)
			}
			if pinStep < len(db.info.History) && !in(w.beforeStep(pinStep-from)) {
				now = false // absent when the list started: see above
			}
			if !before && !now {
				continue
			}
			if n == q.Limit {
				next = encodeCursor(joinHeld(pin, held), q, last)
				return nil
			}
			c := Change{Kind: "set", ID: string(w.key[1:])}
			switch w.key[0] {
			case layout.ChangeCard:
				c.Kind = "card"
			case layout.ChangeNames:
				c.Kind, c.ID = "names", "names"
			}
			if now {
				var err error
				if rec, err = db.appendRecord(rec[:0], w.key[0], c.ID); err != nil {
					return err
				}
				c.Record = rec
			}
			if err := fn(c); err != nil {
				return err
			}
			last = append(last[:0], w.key...)
			n++
		}
		return nil
	})
	if err != nil {
		return "", "", fmt.Errorf("changes since %q: %w", q.Since, err)
	}
	return next, sinceAfter(q.Since, pin, held, next == ""), nil
}

// sinceAfter returns the Since of a client's next sync once it has applied
// a page of the list since since that started at pin, whose pages came
// from generations up to held: pin and held after the last page; before
// it, since's first generation and held.
func sinceAfter(since, pin, held string, last bool) string {
	if !last {
		pin, _, _ = strings.Cut(since, HeldSeparator)
	}
	return joinHeld(pin, held)
}

// joinHeld is the Since of a copy of pin that holds records of held too:
// pin alone when they are one generation.
func joinHeld(pin, held string) string {
	if held == pin {
		return pin
	}
	return pin + HeldSeparator + held
}

// listStart returns the generation the list of q started at (pin), the
// newest generation a page of it was given from (held, Changes) and the
// record key after which the page starts.
func (db *DB) listStart(q ChangesQuery) (pin, held string, after []byte, err error) {
	pin, held = db.info.Generation, db.info.Generation
	if q.After != "" {
		var start string
		if start, after, err = decodeCursor(q.After, q); err != nil {
			return "", "", nil, err
		}
		var cursorHeld string
		var two bool
		pin, cursorHeld, two = strings.Cut(start, HeldSeparator)
		if _, ok := db.sinceStep(cursorHeld); two && !ok {
			held = cursorHeld // newer than the catalogue served here, or gone
		}
	}
	return pin, held, after, nil
}

// sinceSteps returns the index in History of the first step after the
// generation of since (sinceStep), and of the first step after its second
// generation, if any, which must be a later one of the same history (or
// else the first again).
func (db *DB) sinceSteps(since string) (from, heldStep int, err error) {
	base, held, two := strings.Cut(since, HeldSeparator)
	from, ok := db.sinceStep(base)
	if !ok {
		return 0, 0, db.notHeld(base, "")
	}
	if !two {
		return from, from, nil
	}
	heldStep, ok = db.sinceStep(held)
	if !ok {
		return 0, 0, db.notHeld(held, ", whose records the copy holds too,")
	}
	if heldStep <= from {
		return 0, 0, fmt.Errorf("generation %q, whose records the copy holds too, does not follow %q: it is %w", held, base, ErrOutsideHistory)
	}
	return from, heldStep, nil
}

// appendRecord appends the JSON of the set or card id as served, or of
// every name group.
func (db *DB) appendRecord(dst []byte, kind byte, id string) ([]byte, error) {
	if kind == layout.ChangeNames {
		return db.appendNameGroups(dst)
	}
	if kind == layout.ChangeSet {
		err := db.read(func(r *reader) error {
			s, ok, err := setByID(r.setCursor, id)
			if err == nil && !ok {
				err = damagef("set %q of the list of changes is missing", id)
			}
			dst = append(dst, s.JSON...)
			return err
		})
		return dst, err
	}
	dst, err := db.AppendCard(dst, id)
	if errors.Is(err, ErrNotFound) {
		// Not ErrNotFound: the request named no card, the file is wrong.
		return dst, damagef("card %q of the list of changes is missing", id)
	}
	if err != nil {
		return dst, fmt.Errorf("card %q of the list of changes: %w", id, err)
	}
	return dst, nil
}

// changeWalk merges the change lists of consecutive steps by key.
type changeWalk struct {
	steps   []layout.HistoryStep
	cursors []*bolt.Cursor
	keys    [][]byte // the current key of each cursor, without its step; nil when done
	vals    [][]byte

	key           []byte // the record met, kind and id
	before, after byte   // its zone before the first step and after the last
	seen          []int  // the steps that changed it, as indexes into steps
	seenBefore    []byte // its zone before each of them
}

func newChangeWalk(b *bolt.Bucket, steps []layout.HistoryStep, after []byte) *changeWalk {
	w := &changeWalk{steps: steps}
	for _, s := range steps {
		c := b.Cursor()
		var seek [4]byte
		binary.BigEndian.PutUint32(seek[:], s.Step)
		k, v := c.Seek(append(seek[:], after...))
		if after != nil && k != nil && bytes.Equal(k[4:], after) && bytes.HasPrefix(k, seek[:]) {
			k, v = c.Next()
		}
		w.cursors = append(w.cursors, c)
		w.keys = append(w.keys, nil)
		w.vals = append(w.vals, nil)
		w.set(len(w.cursors)-1, s.Step, k, v)
	}
	return w
}

func (w *changeWalk) set(i int, step uint32, k, v []byte) {
	if len(k) < 5 || binary.BigEndian.Uint32(k) != step || len(v) != 2 {
		w.keys[i] = nil
		return
	}
	w.keys[i], w.vals[i] = k[4:], v
}

// next moves to the next record any step changed.
func (w *changeWalk) next() bool {
	var min []byte
	for _, k := range w.keys {
		if k != nil && (min == nil || bytes.Compare(k, min) < 0) {
			min = k
		}
	}
	if min == nil {
		return false
	}
	w.key = append(w.key[:0], min...)
	w.seen, w.seenBefore = w.seen[:0], w.seenBefore[:0]
	for i, k := range w.keys {
		if k == nil || !bytes.Equal(k, w.key) {
			continue
		}
		if len(w.seen) == 0 {
			w.before = w.vals[i][0]
		}
		w.after = w.vals[i][1]
		w.seen = append(w.seen, i)
		w.seenBefore = append(w.seenBefore, w.vals[i][0])
		nk, nv := w.cursors[i].Next()
		w.set(i, w.steps[i].Step, nk, nv)
	}
	return true
}

// inUntil reports whether the record was in a zone in for any of the
// generations from the one before the first step to the one after step
// k-1.
func (w *changeWalk) inUntil(k int, in func(byte) bool) bool {
	if in(w.before) {
		return true
	}
	for j, s := range w.seen {
		if s >= k {
			break
		}
		after := w.after // what step s left, until the next step that changed it
		if j+1 < len(w.seen) {
			after = w.seenBefore[j+1]
		}
		if in(after) {
			return true
		}
	}
	return false
}

// beforeStep returns the zone of the record before step i: what the first
// step at or after i that changed it found, or what the last one left.
func (w *changeWalk) beforeStep(i int) byte {
	for j, s := range w.seen {
		if s >= i {
			return w.seenBefore[j]
		}
	}
	return w.after
}

// CheckCursor returns an error wrapping ErrBadCursor when q.After is given
// and is not a cursor of the list q asks for, which Changes would refuse:
// a caller can name it beside its other parameters.
func (q ChangesQuery) CheckCursor() error {
	if q.After == "" {
		return nil
	}
	_, _, err := decodeCursor(q.After, q)
	return err
}

// encodeCursor makes the cursor after the record key of the list of q
// that started as start: the generation it started at, and the newest a
// page was given from when that is another, "pin~held" (Changes). It is
// start, uvarint-length-prefixed, a marker byte, the listSum of q, then the
// key.
//
// The marker is 0 for a generation alone. A record key starts with a kind,
// ChangeSet, ChangeCard or ChangeNames, never 0, so it makes a version of
// catalogd that read the key right after start refuse the cursor, rather
// than take the sum for a key (replicas of two versions, during an
// upgrade). It is heldMarker for two generations, which is no kind either,
// and which a version that knew 0 alone refuses too: a 400 that loses
// nothing, where taking "pin~held" for a generation gone would be a 410
// that sends the client to the export.
func encodeCursor(start string, q ChangesQuery, key []byte) string {
	b := binary.AppendUvarint(nil, uint64(len(start)))
	b = append(b, start...)
	if strings.Contains(start, HeldSeparator) {
		b = append(b, heldMarker)
	} else {
		b = append(b, 0)
	}
	b = binary.BigEndian.AppendUint32(b, listSum(q))
	b = append(b, key...)
	return base64.RawURLEncoding.EncodeToString(b)
}

// heldMarker marks a cursor whose start is two generations (encodeCursor).
const heldMarker = 0xff

// decodeCursor returns the start (encodeCursor) and the record key of a
// cursor of the list of q.
func decodeCursor(s string, q ChangesQuery) (string, []byte, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return "", nil, fmt.Errorf("cursor %s: %w", catalog.Quote(s), ErrBadCursor)
	}
	n, used := binary.Uvarint(b)
	if used <= 0 || n > uint64(len(b)-used) || len(b)-used-int(n) < 5 {
		return "", nil, fmt.Errorf("cursor %s: %w", catalog.Quote(s), ErrBadCursor)
	}
	start, rest := string(b[used:used+int(n)]), b[used+int(n):]
	marker, sum, key := rest[0], rest[1:5], rest[5:]
	pin, held, two := strings.Cut(start, HeldSeparator)
	startOK := !two && marker == 0 ||
		two && marker == heldMarker && pin != "" && held != "" && !strings.Contains(held, HeldSeparator) && utf8.ValidString(held)
	if !startOK || !isRecordKey(key) {
		return "", nil, fmt.Errorf("cursor %s: %w", catalog.Quote(s), ErrBadCursor)
	}
	if binary.BigEndian.Uint32(sum) != listSum(q) {
		return "", nil, fmt.Errorf("cursor %s is %w", catalog.Quote(s), ErrOtherListCursor)
	}
	return start, key, nil
}

// isRecordKey reports whether key is a key of a list of changes without its
// step: a set's or a card's, kind and id, or the name groups', the kind
// alone.
func isRecordKey(key []byte) bool {
	if len(key) == 1 {
		return key[0] == layout.ChangeNames
	}
	return len(key) > 1 && (key[0] == layout.ChangeSet || key[0] == layout.ChangeCard)
}

// listSum is a checksum of what chooses a list of changes, since and zone,
// which its cursors carry: a cursor given with another list would skip
// whatever that list holds before the cursor's record, so it is refused.
// Such a cursor passes only when the two lists' sums collide, one time in
// 2^32: this guards against a client that mixes its lists up, not against
// forgery, which gains a client nothing it cannot ask for.
func listSum(q ChangesQuery) uint32 {
	return crc32.ChecksumIEEE([]byte(q.Since + "\x00" + q.Zone))
}
