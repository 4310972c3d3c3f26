package store

import (
	"encoding/binary"
	"unicode/utf8"
)

// editAutomaton accepts the words at most edits from a term, counting in
// code points insertions, deletions, substitutions and swaps of two
// neighbours, no character edited twice (the optimal string alignment
// distance). It reads UTF-8 a byte at a time, as an FST is walked
// (vellum.Automaton), and is built as it is walked, each state's
// transitions found once and kept.
//
// A state is the band of one row of the distance table (the word read so
// far against the prefixes of the term within edits of its length; the
// rest of the row is past edits), with the band of the row before it and
// the word's last character, for the swaps. A character that is none of
// the term's is a substitution, deletion or insertion wherever it falls,
// so all of them lead to one state: its first byte decides, and the state
// dies there when that one is dead, without reading the rest of the
// character. So a walk of a dictionary of Han or kana words with a Latin
// term, or of any words with a term they are far from, leaves each branch
// at its first byte.
//
// Building every state ahead (a Levenshtein DFA) costs, for two edits or
// for kana, milliseconds per term, more than the walk of a large
// dictionary; the walk reaches few of the states.
type editAutomaton struct {
	term   []rune
	edits  int
	states []editState
	ids    map[string]int32
	key    []byte
	code   [][]byte // the UTF-8 of each character of the term

	// The transitions found, classes to a state: state s's to class c
	// at s*classes+c, plus one, 0 when not yet found. Bytes of no
	// character of the term lead alike by their kind (see byteClasses).
	class   [256]uint8
	classes int
	next    []int32
}

// maxBand is the width of a band for the most edits a search allows, 2.
const maxBand = 5

type editState struct {
	i          int               // characters of the word read
	band, prev [maxBand]uint8    // D[i][i-edits+k] and D[i-1][i-1-edits+k], at most edits+1
	last       rune              // the word's last character when the term has it, else -1
	pending    [utf8.UTFMax]byte // the bytes read of a character of the term's
	npending   uint8
	otherLeft  uint8 // bytes left of a character none of the term's
	other      int32 // the state that character leads to
	match      bool
	edited     uint8 // D[i][len(term)], when match
}

// byteClasses returns the classes of bytes for a term: each byte of its
// characters' UTF-8 a class of its own, and every other byte one of five
// by its kind (ASCII, continuation, and the leads of 2, 3 and 4 bytes),
// which a state cannot tell apart; and the number of classes.
func byteClasses(code [][]byte) (class [256]uint8, n int) {
	var own [256]bool
	for _, c := range code {
		for _, b := range c {
			own[b] = true
		}
	}
	for b := range class {
		if own[b] {
			class[b] = uint8(n)
			n++
		}
	}
	for b := range class {
		if !own[b] {
			switch {
			case b < 0x80:
				class[b] = uint8(n)
			case b < 0xC0:
				class[b] = uint8(n + 1)
			default:
				class[b] = uint8(n + 1 + utf8RuneLen(byte(b)) - 1) // 2, 3, 4: n+2, n+3, n+4
			}
		}
	}
	return class, n + 5
}

// newEditAutomaton returns the automaton of the words within edits (0, 1
// or 2) of term: 0 holds a walk to the starts of a term of two edits
// (nearWords).
func newEditAutomaton(term []byte, edits int) *editAutomaton {
	a := &editAutomaton{term: []rune(string(term)), edits: edits, ids: make(map[string]int32)}
	for _, r := range a.term {
		a.code = append(a.code, utf8.AppendRune(nil, r))
	}
	a.class, a.classes = byteClasses(a.code)
	a.states = append(a.states, editState{}) // 0, dead
	a.next = make([]int32, a.classes, 64*a.classes)
	start := editState{last: -1}
	for k := range start.band {
		j := k - edits
		start.band[k] = uint8(edits + 1)
		if j >= 0 && j <= len(a.term) && k <= 2*edits {
			start.band[k] = uint8(min(j, edits+1))
		}
	}
	a.intern(start)
	return a
}

// at returns D[i][j] from the band of row i.
func (a *editAutomaton) at(band *[maxBand]uint8, i, j int) uint8 {
	k := j - i + a.edits
	if k < 0 || k > 2*a.edits || j < 0 {
		return uint8(a.edits + 1)
	}
	return band[k]
}

// intern returns the id of the state s, adding it when new.
func (a *editAutomaton) intern(s editState) int32 {
	w := 2*a.edits + 1
	a.key = binary.AppendUvarint(a.key[:0], uint64(s.i))
	a.key = append(a.key, s.band[:w]...)
	if s.last >= 0 {
		a.key = append(a.key, s.prev[:w]...)
	}
	a.key = binary.AppendVarint(a.key, int64(s.last))
	a.key = append(a.key, s.npending)
	a.key = append(a.key, s.pending[:s.npending]...)
	a.key = append(a.key, s.otherLeft)
	a.key = binary.AppendVarint(a.key, int64(s.other))
	if id, ok := a.ids[string(a.key)]; ok {
		return id
	}
	id := int32(len(a.states))
	s.match, s.edited = false, 0
	if s.npending == 0 && s.otherLeft == 0 {
		if d := a.at(&s.band, s.i, len(a.term)); d <= uint8(a.edits) {
			s.match, s.edited = true, d
		}
	}
	a.states = append(a.states, s)
	a.ids[string(a.key)] = id
	a.next = append(a.next, make([]int32, a.classes)...)
	return id
}

// Start, IsMatch, CanMatch, WillAlwaysMatch and Accept make it a
// vellum.Automaton.
func (a *editAutomaton) Start() int               { return 1 }
func (a *editAutomaton) IsMatch(s int) bool       { return a.states[s].match }
func (a *editAutomaton) CanMatch(s int) bool      { return s != 0 }
func (a *editAutomaton) WillAlwaysMatch(int) bool { return false }

func (a *editAutomaton) Accept(s int, b byte) int {
	at := s*a.classes + int(a.class[b])
	if n := a.next[at]; n != 0 {
		return int(n) - 1
	}
	n := 0
	if s != 0 {
		n = a.step(s, b)
	}
	a.next[at] = int32(n) + 1
	return n
}

// step finds the state after s reads b.
func (a *editAutomaton) step(s int, b byte) int {
	st := a.states[s]
	if st.otherLeft > 0 {
		if st.otherLeft == 1 {
			return int(st.other)
		}
		return int(a.intern(editState{last: -1, otherLeft: st.otherLeft - 1, other: st.other}))
	}
	pending := st.pending
	pending[st.npending] = b
	np := int(st.npending) + 1
	base := st
	base.npending, base.pending = 0, [utf8.UTFMax]byte{}
	if utf8.FullRune(pending[:np]) {
		r, _ := utf8.DecodeRune(pending[:np])
		return a.read(&base, r)
	}
	for _, c := range a.code {
		if len(c) > np && string(c[:np]) == string(pending[:np]) {
			base.pending, base.npending = pending, uint8(np)
			return int(a.intern(base))
		}
	}
	// A character none of the term's, whatever its other bytes.
	other := a.read(&base, -2)
	left := utf8RuneLen(pending[0]) - np
	if other == 0 || left <= 0 {
		return other
	}
	return int(a.intern(editState{last: -1, otherLeft: uint8(left), other: int32(other)}))
}

// utf8RuneLen returns the bytes of the character that lead starts.
func utf8RuneLen(lead byte) int {
	switch {
	case lead < 0xE0:
		return 2
	case lead < 0xF0:
		return 3
	}
	return 4
}

// read returns the state after st, with no pending bytes, reads the
// character r (-2 for one none of the term's).
func (a *editAutomaton) read(st *editState, r rune) int {
	d, n := a.edits, len(a.term)
	i := st.i + 1
	next := editState{i: i, last: -1}
	alive := false
	for k := 0; k <= 2*d; k++ {
		j := i - d + k
		v := uint8(d + 1)
		switch {
		case j < 0 || j > n:
		case j == 0:
			v = uint8(min(i, d+1))
		default:
			cost := uint8(1)
			if a.term[j-1] == r {
				cost = 0
			}
			left := uint8(d + 1)
			if k > 0 {
				left = next.band[k-1]
			}
			v = min(a.at(&st.band, st.i, j)+1, left+1, a.at(&st.band, st.i, j-1)+cost)
			if j >= 2 && st.last >= 0 && r == a.term[j-2] && st.last == a.term[j-1] {
				v = min(v, a.at(&st.prev, st.i-1, j-2)+1)
			}
		}
		next.band[k] = min(v, uint8(d+1))
		alive = alive || next.band[k] <= uint8(d)
	}
	if !alive {
		return 0
	}
	for k := 2*d + 1; k < maxBand; k++ {
		next.band[k] = uint8(d + 1)
	}
	for _, t := range a.term {
		if t == r {
			// A swap may use it: the row it was read in is kept.
			next.last, next.prev = r, st.band
			break
		}
	}
	return int(a.intern(next))
}

// distance returns the edits from the term to word, and false when they
// are more than the automaton accepts.
func (a *editAutomaton) distance(word []byte) (int, bool) {
	s := a.Start()
	for _, c := range word {
		if s = a.Accept(s, c); s == 0 {
			return 0, false
		}
	}
	st := &a.states[s]
	return int(st.edited), st.match
}
