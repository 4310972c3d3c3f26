package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/catalogd/catalogd/internal/bench/snapshot"
	"github.com/catalogd/catalogd/internal/gen"
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
	path  string // the generated snapshot, before any mark
	cards []snapshot.Record
	sets  []setTarget
}

// writeCore generates the core snapshot at path and reads back what the
// requests need from it.
func writeCore(path string, cards int, seed uint64) (*core, error) {
	if _, err := gen.WriteFile(path, gen.Options{Cards: cards, Seed: seed}); err != nil {
		return nil, fmt.Errorf("generate the core snapshot: %w", err)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	c := &core{path: path}
	at := map[string]int{} // zone + "/" + code -> index in c.sets
	err = snapshot.Read(bufio.NewReaderSize(f, 1<<20), func(member string, _ json.RawMessage, r snapshot.Record) error {
		if member == "sets" {
			at[r.Zone+"/"+r.Code] = len(c.sets)
			c.sets = append(c.sets, setTarget{id: r.ID, code: r.Code})
			return nil
		}
		i, ok := at[r.Zone+"/"+r.SetCode]
		if !ok {
			return fmt.Errorf("card %q: no set %q in zone %q", r.ID, r.SetCode, r.Zone)
		}
		c.sets[i].cards++
		c.cards = append(c.cards, snapshot.Record{ID: r.ID, Zone: r.Zone, Name: r.Name, SetCode: r.SetCode, Number: r.Number})
		return nil
	}, false)
	if err != nil {
		return nil, fmt.Errorf("read the core snapshot %s: %w", path, err)
	}
	if len(c.cards) == 0 {
		return nil, fmt.Errorf("the core snapshot %s has no cards", path)
	}
	return c, nil
}

// writeMarkedCore writes the core for import n to path: the same records,
// with every set name (and so every card's setName) ending in " #n".
func (c *core) writeMarkedCore(path string, n int) error {
	f, err := os.Open(c.path)
	if err != nil {
		return err
	}
	defer f.Close()
	mark := nameMark + strconv.Itoa(n)
	return writeSnapshot(path, bufio.NewReaderSize(f, 1<<20), func(member string, rec map[string]json.RawMessage) error {
		field := "setName"
		if member == "sets" {
			field = "name"
		}
		return appendTo(rec, field, mark)
	})
}

// writeChurn generates cards cards with seed and writes them to path as
// the churn part of import n: every set code ends in "~n", and the set
// ids and card ids that hold it follow.
func writeChurn(path string, cards int, seed uint64, n int) (sets, written int, err error) {
	var buf bytes.Buffer
	if _, err := gen.Write(&buf, gen.Options{Cards: cards, Seed: seed}); err != nil {
		return 0, 0, fmt.Errorf("generate a churn snapshot: %w", err)
	}
	mark := codeMark + strconv.Itoa(n)
	err = writeSnapshot(path, &buf, func(member string, rec map[string]json.RawMessage) error {
		var id, zone, code string
		codeField := "setCode"
		if member == "sets" {
			codeField = "code"
			sets++
		} else {
			written++
		}
		if err := unmarshalFields(rec, map[string]*string{"id": &id, "zone": &zone, codeField: &code}); err != nil {
			return err
		}
		setID := zone + "-" + code
		if member == "sets" && id != setID || member == "cards" && !strings.HasPrefix(id, setID+"-") {
			return fmt.Errorf("id %q does not start with %q: the generator's ids changed", id, setID)
		}
		if err := appendTo(rec, codeField, mark); err != nil {
			return err
		}
		return setString(rec, "id", setID+mark+id[len(setID):])
	})
	return sets, written, err
}

// writeSnapshot copies the snapshot r to path, each record passed through
// edit.
func writeSnapshot(path string, r io.Reader, edit func(member string, rec map[string]json.RawMessage) error) error {
	return writeFile(path, func(w *bufio.Writer) error {
		var members []string // in the order met
		count := 0
		w.WriteString("{")
		err := snapshot.Read(r, func(member string, raw json.RawMessage, _ snapshot.Record) error {
			if len(members) == 0 || members[len(members)-1] != member {
				if len(members) > 0 {
					w.WriteString("\n],")
				}
				fmt.Fprintf(w, "%q:[", member)
				members, count = append(members, member), 0
			}
			var rec map[string]json.RawMessage
			if err := json.Unmarshal(raw, &rec); err != nil {
				return err
			}
			if err := edit(member, rec); err != nil {
				return err
			}
			b, err := json.Marshal(rec)
			if err != nil {
				return err
			}
			if count > 0 {
				w.WriteByte(',')
			}
			w.WriteByte('\n')
			w.Write(b)
			count++
			return nil
		}, true)
		if err != nil {
			return err
		}
		if len(members) > 0 {
			w.WriteString("\n]")
		}
		for _, m := range []string{"sets", "cards"} {
			if !slices.Contains(members, m) {
				if len(members) > 0 {
					w.WriteByte(',')
				}
				fmt.Fprintf(w, "%q:[]", m)
				members = append(members, m)
			}
		}
		w.WriteString("}\n")
		return nil
	})
}

func unmarshalFields(rec map[string]json.RawMessage, dst map[string]*string) error {
	for name, p := range dst {
		if err := json.Unmarshal(rec[name], p); err != nil {
			return fmt.Errorf("field %s: %w", name, err)
		}
	}
	return nil
}

// appendTo adds suffix to the string field name of rec.
func appendTo(rec map[string]json.RawMessage, name, suffix string) error {
	var s string
	if err := json.Unmarshal(rec[name], &s); err != nil {
		return fmt.Errorf("field %s: %w", name, err)
	}
	return setString(rec, name, s+suffix)
}

func setString(rec map[string]json.RawMessage, name, s string) error {
	b, err := json.Marshal(s)
	rec[name] = b
	return err
}

// writeFile creates path and has write fill it through a buffer.
func writeFile(path string, write func(*bufio.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	err = write(w)
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
