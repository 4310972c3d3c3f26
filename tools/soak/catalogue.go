package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strconv"

	"github.com/catalogd/catalogd/tools/gen"
)

// Each import marks what it changes with its number n: the core's set
// names end in " #n", and the churn part's set codes in "~n". Generated
// codes hold no "~", so a churn part never collides with the core.
const (
	nameMark = " #"
	codeMark = "~"
)

// setTarget is a core set requests may name.
type setTarget struct {
	id, code string
	cards    int
}

// core is the part of the catalogue that every import carries, with the
// same ids: the records requests are made for.
type core struct {
	opt   gen.Options // of the generated snapshot, before any mark
	cards []record
	sets  []setTarget
}

// record is what the soak reads of a generated set or card.
type record struct {
	ID      string `json:"id"`
	Code    string `json:"code"` // sets
	Zone    string `json:"zone"`
	Name    string `json:"name"`
	SetCode string `json:"setCode"` // cards
	Number  string `json:"number"`  // cards
}

// writeCore generates the core snapshot at path and reads back what the
// requests need from it.
func writeCore(path string, cards int, seed uint64) (*core, error) {
	c := &core{opt: gen.Options{Cards: cards, Seed: seed}}
	if _, err := gen.WriteFile(path, c.opt); err != nil {
		return nil, fmt.Errorf("generate the core snapshot: %w", err)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var snap struct{ Sets, Cards []record }
	if err := json.NewDecoder(bufio.NewReaderSize(f, 1<<20)).Decode(&snap); err != nil {
		return nil, fmt.Errorf("read the core snapshot %s: %w", path, err)
	}
	at := map[string]int{} // zone + "/" + code -> index in c.sets
	for _, r := range snap.Sets {
		at[r.Zone+"/"+r.Code] = len(c.sets)
		c.sets = append(c.sets, setTarget{id: r.ID, code: r.Code})
	}
	for _, r := range snap.Cards {
		i, ok := at[r.Zone+"/"+r.SetCode]
		if !ok {
			return nil, fmt.Errorf("read the core snapshot %s: card %q: no set %q in zone %q", path, r.ID, r.SetCode, r.Zone)
		}
		c.sets[i].cards++
	}
	if c.cards = snap.Cards; len(c.cards) == 0 {
		return nil, fmt.Errorf("the core snapshot %s has no cards", path)
	}
	return c, nil
}

// writeMarkedCore writes the core for import n to path: the same records,
// with every set name (and so every card's setName) ending in " #n".
func (c *core) writeMarkedCore(path string, n int) error {
	opt := c.opt
	opt.SetNameSuffix = nameMark + strconv.Itoa(n)
	_, err := gen.WriteFile(path, opt)
	return err
}

// writeChurn generates cards cards with seed and writes them to path as
// the churn part of import n: every set code ends in "~n", and the set
// ids and card ids that hold it follow.
func writeChurn(path string, cards int, seed uint64, n int) (sets, written int, err error) {
	st, err := gen.WriteFile(path, gen.Options{Cards: cards, Seed: seed, SetCodeSuffix: codeMark + strconv.Itoa(n)})
	if err != nil {
		return 0, 0, fmt.Errorf("generate a churn snapshot: %w", err)
	}
	return st.Sets, st.Cards, nil
}
