package importer

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/catalogd/catalogd/catalog/store"
)

// sampleSnapshot assembles a small valid snapshot from records of the
// built-in sample: the first set of each zone that has cards, with up to
// cardsPerSet of its cards.
func sampleSnapshot(tb testing.TB, cardsPerSet int) []byte {
	tb.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "data", "sample.json"))
	if err != nil {
		tb.Fatal(err)
	}
	var snap struct{ Sets, Cards []json.RawMessage }
	if err := json.Unmarshal(raw, &snap); err != nil {
		tb.Fatal(err)
	}
	type ref struct{ Zone, Code, SetCode string }
	var sets, cards []string
	zones := map[string]bool{}
	for _, s := range snap.Sets {
		var sr ref
		json.Unmarshal(s, &sr)
		if zones[sr.Zone] {
			continue
		}
		var mine []string
		for _, c := range snap.Cards {
			var cr ref
			json.Unmarshal(c, &cr)
			if cr.Zone == sr.Zone && cr.SetCode == sr.Code && len(mine) < cardsPerSet {
				mine = append(mine, string(c))
			}
		}
		if len(mine) == 0 {
			continue
		}
		zones[sr.Zone] = true
		sets = append(sets, string(s))
		cards = append(cards, mine...)
	}
	return []byte(`{"sets":[` + "\n" + strings.Join(sets, ",\n") + "\n],\n" + `"cards":[` + "\n" + strings.Join(cards, ",\n") + "\n]}\n")
}

// FuzzImport feeds arbitrary bytes, as standard input, to a real import
// into a directory that holds a catalogue. Properties: the import never
// panics; it either succeeds, having read exactly a JSON snapshot that
// encoding/json reads too, with as many records, and recorded the SHA-256
// and size of the bytes it read; or it fails with a *ValidationError whose
// problems are sorted, placed on real lines and columns of the input and
// short, or with an error about the gzip stream; and after a failure the
// catalogue is byte-identical and no temporary file is left.
//
// The seeds are small snapshots made of the sample's records, compressed
// or not, and the syntax fixtures. A failing import costs one fsync of a
// new bbolt file: .ci/fuzz runs this target with TMPDIR on a tmpfs.
func FuzzImport(f *testing.F) {
	small := sampleSnapshot(f, 2)
	f.Add(small)
	f.Add(gzipBytes(f, small))
	f.Add(sampleSnapshot(f, 1))
	for _, name := range []string{"valid.json", "valid-edge.json", "valid-cards-first.json", "several-problems.json"} {
		f.Add(readFile(f, filepath.Join("testdata", name)))
	}
	syntax, err := filepath.Glob(filepath.Join("testdata", "syntax", "*.json"))
	if err != nil || len(syntax) == 0 {
		f.Fatalf("no syntax fixtures: %v", err)
	}
	for _, name := range syntax {
		f.Add(readFile(f, name))
	}
	for _, name := range []string{"card-duplicate-member.json", "snapshot-duplicate-member.json", "set-cardCount-exponent.json", "card-setCode-unknown-cards-first.json"} {
		f.Add(readFile(f, filepath.Join("testdata", "invalid", name)))
	}

	setup := f.TempDir()
	good := filepath.Join(setup, "catalog.db")
	if _, err := Import(context.Background(), Config{DB: good, Inputs: []string{filepath.Join("testdata", "valid.json")}}); err != nil {
		f.Fatal(err)
	}
	goodBytes := readFile(f, good)

	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 64<<10 {
			return // snapshots this size show nothing smaller ones do not
		}
		dir := t.TempDir()
		db := filepath.Join(dir, "catalog.db")
		if err := os.WriteFile(db, goodBytes, 0o644); err != nil {
			t.Fatal(err)
		}
		before := snapshotFile(t, db)

		res, err := Import(context.Background(), Config{DB: db, Inputs: []string{"-"}, Stdin: bytes.NewReader(data)})
		assertDirHolds(t, dir, "catalog.db", "catalog.db.lock")
		if err != nil {
			before.assertUnchanged(t)
			checkImportError(t, data, err)
			return
		}

		plain := data
		if len(data) >= 2 && data[0] == 0x1f && data[1] == 0x8b {
			zr, err := gzip.NewReader(bytes.NewReader(data))
			if err == nil {
				plain, err = io.ReadAll(zr)
			}
			if err != nil {
				t.Fatalf("import of %q succeeded, but compress/gzip cannot read it: %v", data, err)
			}
		}
		if !json.Valid(plain) || !utf8.Valid(plain) {
			t.Fatalf("import of %q succeeded, but it is not valid JSON in UTF-8", plain)
		}
		var snap struct{ Sets, Cards []json.RawMessage }
		dec := json.NewDecoder(bytes.NewReader(plain))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&snap); err != nil {
			t.Fatalf("import of %q succeeded, but encoding/json reads no snapshot in it: %v", plain, err)
		}
		var sets, cards int64
		for _, z := range res.Info.Zones {
			sets += z.Sets
			cards += z.Cards
		}
		if sets != int64(len(snap.Sets)) || cards != int64(len(snap.Cards)) {
			t.Fatalf("import of %q holds %d sets and %d cards, encoding/json reads %d and %d", plain, sets, cards, len(snap.Sets), len(snap.Cards))
		}
		sum := sha256.Sum256(data)
		want := []store.Source{{Name: "<stdin>", SHA256: hex.EncodeToString(sum[:]), Bytes: int64(len(data))}}
		got := mustOpen(t, db).Info().Sources
		if !slices.Equal(got, want) || !slices.Equal(res.Info.Sources, want) {
			t.Fatalf("sources %+v (result %+v), want the bytes read, %+v", got, res.Info.Sources, want)
		}
	})
}

// checkImportError asserts that a failed import of data from standard input
// says why in a form a person can use.
func checkImportError(t *testing.T, data []byte, err error) {
	t.Helper()
	var ve *ValidationError
	if !errors.As(err, &ve) {
		if !strings.HasPrefix(err.Error(), "import: <stdin>: gzip: ") {
			t.Fatalf("import of %q: error %T %v, want a *ValidationError or a gzip error", data, err, err)
		}
		return
	}
	if len(ve.Errors) == 0 || len(ve.Errors) > MaxErrors || ve.Truncated && len(ve.Errors) != MaxErrors {
		t.Fatalf("import of %q: %d problems (truncated %v)", data, len(ve.Errors), ve.Truncated)
	}
	var lines [][]byte
	if len(data) < 2 || data[0] != 0x1f || data[1] != 0x8b {
		lines = bytes.Split(data, []byte("\n"))
	}
	for i, e := range ve.Errors {
		msg := e.Error()
		switch {
		case e.File != "<stdin>" || e.Line < 1 || e.Column < 1:
			t.Fatalf("import of %q: problem %q has no place", data, msg)
		case e.Found == "" || len(msg) > 1024 || !utf8.ValidString(msg):
			t.Fatalf("import of %q: problem %q says nothing found, is too long or is not UTF-8", data, msg)
		case i > 0 && (e.Line < ve.Errors[i-1].Line || e.Line == ve.Errors[i-1].Line && e.Column < ve.Errors[i-1].Column):
			t.Fatalf("import of %q: problems out of order: %v", data, err)
		case lines != nil && (e.Line > len(lines) || e.Column > len(lines[e.Line-1])+1):
			t.Fatalf("import of %q: problem %q points past the end of its line", data, msg)
		}
	}
}
