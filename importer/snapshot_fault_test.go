package importer

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
	"time"
	"unicode/utf8"
)

// These tests feed snapshots that are broken in the ways files break, or
// are hostile, to a real import over an existing catalogue. Each asserts a
// clear error (the file, the line and column, what is wrong), that the
// catalogue is byte-identical afterwards and that no temporary file is
// left behind; memory is checked where the input is large.

// faultSnapshot is small and valid, with what a cut can land in: objects,
// arrays, members, strings with escapes and multi-byte characters,
// numbers, null, and several lines.
const faultSnapshot = `{"sets": [
  {"id": "jp-SV1a", "code": "SV1a", "name": "トリプレットビート", "zone": "jp", "releasedOn": "2023-03-10", "cardCount": 73}
],
"cards": [
  {"id": "jp-SV1a-001", "name": "Pok\u00e9mon \"ex\" トロピウス", "setName": "トリプレットビート", "setCode": "SV1a",
   "number": "001", "language": "ja", "year": 2023, "zone": "jp", "totalCards": 73, "illustrator": null, "marketBId": "701036"}
]}
`

// catalogueDir holds a catalogue imported from testdata/valid.json.
type catalogueDir struct {
	dir, db string
	before  fileState
}

func newCatalogueDir(t *testing.T) *catalogueDir {
	t.Helper()
	dir := t.TempDir()
	db := filepath.Join(dir, "catalog.db")
	mustImport(t, Config{DB: db, Inputs: []string{filepath.Join("testdata", "valid.json")}})
	return &catalogueDir{dir: dir, db: db, before: snapshotFile(t, db)}
}

// importFile writes data to a snapshot file beside the catalogue and
// imports it.
func (c *catalogueDir) importFile(t *testing.T, name string, data []byte) (string, error) {
	t.Helper()
	file := filepath.Join(c.dir, name)
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(file)
	_, err := Import(context.Background(), Config{DB: c.db, Inputs: []string{file}})
	return file, err
}

// assertKept checks the catalogue is as it was and nothing else is left.
func (c *catalogueDir) assertKept(t *testing.T, extra ...string) {
	t.Helper()
	c.before.assertUnchanged(t)
	assertDirHolds(t, c.dir, append([]string{"catalog.db", "catalog.db.lock"}, extra...)...)
}

// position returns the line and byte column (both from 1) of offset in data.
func position(data []byte, offset int) (int, int) {
	line := 1 + bytes.Count(data[:offset], []byte("\n"))
	return line, offset - bytes.LastIndexByte(data[:offset], '\n')
}

// oneProblem asserts err is a *ValidationError with exactly one problem, in
// file at line:col, whose Found or Expected contains what, and that the
// message shows the place.
func oneProblem(t *testing.T, err error, file string, line, col int, what string) *RecordError {
	t.Helper()
	ve := asValidationError(t, err)
	if len(ve.Errors) != 1 {
		t.Fatalf("%d problems, want 1:\n%v", len(ve.Errors), err)
	}
	e := ve.Errors[0]
	place := fmt.Sprintf("%s:%d:%d: ", file, line, col)
	if e.File != file || e.Line != line || e.Column != col || !strings.Contains(err.Error(), place) {
		t.Fatalf("problem %q, want it at %s", e.Error(), place)
	}
	if !strings.Contains(e.Found, what) && !strings.Contains(e.Expected, what) {
		t.Fatalf("problem %q, want it to say %q", e.Error(), what)
	}
	return e
}

// cut is one place to truncate a snapshot at.
type cut struct {
	at    int    // bytes kept
	where string // what the cut lands in
	errAt int    // offset the problem must point at
	says  string // part of the problem
}

// cutPoints lists the cuts of a JSON text at every structural position:
// after each '{', '[', ':', ',', '}', ']' and line end; after the opening
// quote of each string and before its closing one; inside each escape and
// each multi-byte character; inside each number and each literal.
func cutPoints(data []byte) []cut {
	cuts := []cut{{0, "an empty file", 0, "unexpected end of input where a value was expected"}}
	eof := func(at int, where string) {
		cuts = append(cuts, cut{at, where, at, "unexpected end of input"})
	}
	for i := 0; i < len(data); {
		switch c := data[i]; {
		case c == '"':
			i++
			cuts = append(cuts, cut{i, "after the opening quote of a string", i, "unexpected end of input inside a string"})
			for data[i] != '"' {
				switch {
				case data[i] == '\\':
					n := 2
					if data[i+1] == 'u' {
						n = 6
					}
					for k := 1; k < n; k++ {
						cuts = append(cuts, cut{i + k, "inside an escape sequence", i, "unexpected end of input inside"})
					}
					i += n
				case data[i] >= utf8.RuneSelf:
					_, size := utf8.DecodeRune(data[i:])
					for k := 1; k < size; k++ {
						cuts = append(cuts, cut{i + k, "inside a multi-byte character", i, "unexpected end of input inside a string"})
					}
					i += size
				default:
					i++
				}
			}
			cuts = append(cuts, cut{i, "before the closing quote of a string", i, "unexpected end of input inside a string"})
			i++
		case c == '-' || '0' <= c && c <= '9':
			for i++; i < len(data) && '0' <= data[i] && data[i] <= '9'; i++ {
				eof(i, "inside a number")
			}
		case c == 't' || c == 'f' || c == 'n':
			lit := map[byte]string{'t': "true", 'f': "false", 'n': "null"}[c]
			for k := 1; k < len(lit); k++ {
				cuts = append(cuts, cut{i + k, "inside a literal", i, "invalid literal (expected " + lit + ")"})
			}
			i += len(lit)
		case strings.IndexByte("{[:,}]\n", c) >= 0:
			i++
			eof(i, fmt.Sprintf("after %q", c))
		default:
			i++
		}
	}
	return cuts
}

// TestTruncatedSnapshot cuts a valid snapshot at every structural position:
// each cut is one problem at the end of the file, or at the start of the
// escape, character or literal it breaks, and changes nothing.
func TestTruncatedSnapshot(t *testing.T) {
	c := newCatalogueDir(t)
	data := []byte(faultSnapshot)
	if _, err := Import(context.Background(), Config{DB: c.db, Inputs: []string{"-"}, Stdin: bytes.NewReader(data), DryRun: true}); err != nil {
		t.Fatalf("the whole snapshot does not import: %v", err)
	}
	end := bytes.LastIndexByte(data, '}') // a cut after it leaves a valid snapshot
	cuts := slices.DeleteFunc(cutPoints(data), func(k cut) bool { return k.at > end })
	if len(cuts) < 100 {
		t.Fatalf("only %d cut points", len(cuts))
	}
	for _, k := range cuts {
		t.Run(fmt.Sprintf("%d_%s", k.at, strings.ReplaceAll(k.where, " ", "_")), func(t *testing.T) {
			file, err := c.importFile(t, "cut.json", data[:k.at])
			line, col := position(data, k.errAt)
			e := oneProblem(t, err, file, line, col, k.says)
			if !strings.HasPrefix(e.Found, "invalid JSON: ") {
				t.Errorf("problem %q does not say the JSON is invalid", e.Error())
			}
			c.assertKept(t)
		})
	}
}

// TestInvalidUTF8 puts bytes that are not UTF-8 in strings: each is one
// problem at the first bad byte.
func TestInvalidUTF8(t *testing.T) {
	c := newCatalogueDir(t)
	long := strings.Repeat("a", maxString+100)
	for _, tc := range []struct {
		name, before, bad, after string
	}{
		{"InvalidByte", `{"sets":[],"cards":[{"id":"x","name":"Pik`, "\xff", `chu"}]}`},
		{"Overlong", `{"sets":[],"cards":[{"id":"x","name":"`, "\xc0\xaf", `"}]}`},
		{"Surrogate", `{"sets":[],"cards":[{"id":"x","name":"`, "\xed\xa0\x80", `"}]}`},
		{"CutSequence", `{"sets":[],"cards":[{"id":"x","name":"ピ`, "\xe3\x82", `"}]}`},
		{"AfterEscape", `{"sets":[],"cards":[{"id":"x","name":"\u00e9`, "\xfe", `"}]}`},
		{"MemberName", `{"sets":[{"i`, "\xff", `d":"x"}],"cards":[]}`},
		{"UnknownMember", "{\"sets\":[],\n\"cards\":[],\n\"extra\":{\"a\":[\"", "\x80", `"]}}`},
		{"TooLongString", `{"sets":[],"cards":[{"id":"x","name":"` + long, "\xff", `"}]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := []byte(tc.before + tc.bad + tc.after)
			file, err := c.importFile(t, "utf8.json", data)
			line, col := position(data, len(tc.before))
			oneProblem(t, err, file, line, col, "invalid UTF-8 inside a string")
			c.assertKept(t)
		})
	}
}

// TestGzipCutShort truncates and corrupts a compressed snapshot: the
// header, the deflate stream, the trailer (CRC-32 and size), a checksum
// that does not match.
func TestGzipCutShort(t *testing.T) {
	c := newCatalogueDir(t)
	compressed := gzipBytes(t, []byte(faultSnapshot))
	n := len(compressed)
	for _, tc := range []struct {
		name string
		data []byte
		says string
	}{
		{"Header", compressed[:5], "gzip: unexpected EOF"},
		{"HeaderOnly", compressed[:10], "cannot read the file: unexpected EOF"},
		{"Stream", compressed[:n/2], "cannot read the file: unexpected EOF"},
		{"NoTrailer", compressed[:n-8], "cannot read the file: unexpected EOF"},
		{"HalfTrailer", compressed[:n-4], "cannot read the file: unexpected EOF"},
		{"LastByte", compressed[:n-1], "cannot read the file: unexpected EOF"},
		{"BadChecksum", flipByte(compressed, n-8), "cannot read the file: gzip: invalid checksum"},
		{"BadSize", flipByte(compressed, n-1), "cannot read the file: gzip: invalid checksum"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file, err := c.importFile(t, "snapshot.json.gz", tc.data)
			if err == nil {
				t.Fatal("import succeeded")
			}
			if !strings.Contains(err.Error(), file) || !strings.Contains(err.Error(), tc.says) {
				t.Errorf("error %q, want one naming %s and saying %q", err, file, tc.says)
			}
			c.assertKept(t)
		})
	}
}

func flipByte(data []byte, i int) []byte {
	b := bytes.Clone(data)
	b[i] ^= 0xff
	return b
}

// repeatReader yields n copies of one byte without holding them.
type repeatReader struct {
	block []byte
	n     int64
}

func newRepeatReader(c byte, n int64) *repeatReader {
	return &repeatReader{block: bytes.Repeat([]byte{c}, 64<<10), n: n}
}

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, io.EOF
	}
	k := 0
	for k < len(p) && r.n > 0 {
		m := copy(p[k:min(len(p), k+int(min(r.n, int64(len(r.block)))))], r.block)
		k += m
		r.n -= int64(m)
	}
	return k, nil
}

// TestHugeString streams a card whose name is a single string of 100 MB
// through standard input: one problem at the name, and memory bounded far
// below the size of the string.
func TestHugeString(t *testing.T) {
	c := newCatalogueDir(t)
	const size = 100 << 20
	head := "{\"sets\":[{\"id\":\"jp-A\",\"code\":\"A\",\"name\":\"A\",\"zone\":\"jp\",\"cardCount\":1}],\n\"cards\":[{\"id\":\"jp-A-1\",\"name\":\""
	tail := "\",\"setName\":\"A\",\"setCode\":\"A\",\"number\":\"1\",\"language\":\"ja\",\"zone\":\"jp\"}]}\n"
	in := io.MultiReader(strings.NewReader(head), newRepeatReader('a', size), strings.NewReader(tail))

	runtime.GC()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	_, err := Import(context.Background(), Config{DB: c.db, Inputs: []string{"-"}, Stdin: in})
	runtime.ReadMemStats(&m1)

	e := oneProblem(t, err, "<stdin>", 2, len(`"cards":[{"id":"jp-A-1","name":`)+1, fmt.Sprintf("a string of %d bytes", size))
	if e.Record != "cards[0]" || e.Field != "name" || !strings.Contains(e.Expected, "at most 65536 bytes") {
		t.Errorf("problem %q, want cards[0] name: a string of at most 65536 bytes", e.Error())
	}
	if alloc := m1.TotalAlloc - m0.TotalAlloc; alloc > 16<<20 {
		t.Errorf("the import allocated %d MiB for a 100 MiB string", alloc>>20)
	}
	c.assertKept(t)
}

// TestDeepNesting nests 100,000 arrays or objects: the import stops at
// 64 levels with one problem where the 65th begins, without exhausting
// the stack or the memory.
func TestDeepNesting(t *testing.T) {
	c := newCatalogueDir(t)
	const depth = 100000
	arrays := strings.Repeat("[", depth) + strings.Repeat("]", depth)
	objects := strings.Repeat(`{"a":`, depth) + "1" + strings.Repeat("}", depth)
	for _, tc := range []struct {
		name, before, nest, after string
		step                      int // bytes per level
	}{
		{"UnknownMemberArrays", "{\"sets\":[],\n\"cards\":[],\n\"extra\":", arrays, "}", 1},
		{"UnknownMemberObjects", "{\"sets\":[],\n\"cards\":[],\n\"extra\":", objects, "}", len(`{"a":`)},
		{"KnownMember", `{"sets":[{"id":`, arrays, `}],"cards":[]}`, 1},
		{"Snapshot", ``, arrays, ``, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := []byte(tc.before + tc.nest + tc.after)
			file, err := c.importFile(t, "deep.json", data)
			line, col := position(data, len(tc.before)+(maxDepth+1)*tc.step)
			oneProblem(t, err, file, line, col, "nested deeper than 64 levels")
			c.assertKept(t)
		})
	}
}

// TestNumbersWhereIntegersBelong: integers are whole numbers in plain
// digits within their range; everything else JSON allows as a number is
// refused at the number, -0 included.
func TestNumbersWhereIntegersBelong(t *testing.T) {
	c := newCatalogueDir(t)
	for _, tc := range []struct {
		number, says string
	}{
		{"1e400", "an integer in plain digits"},
		{"-1e400", "an integer in plain digits"},
		{"1e-400", "an integer in plain digits"},
		{"-0", "an integer in plain digits"},
		{"-0.0", "an integer in plain digits"},
		{"0e0", "an integer in plain digits"},
		{"1E+2", "an integer in plain digits"},
		{"73.0", "an integer in plain digits"},
		{"18446744073709551616", "an integer in plain digits"},
		{"9007199254740992", "an integer from 0 to 9007199254740991"},
		{"-1", "an integer from 0 to 9007199254740991"},
		{strings.Repeat("1", 65), "a number of 65 characters"},
	} {
		t.Run(tc.number, func(t *testing.T) {
			before := "{\"sets\":[\n{\"id\":\"jp-A\",\"code\":\"A\",\"name\":\"A\",\"zone\":\"jp\",\"cardCount\":"
			data := []byte(before + tc.number + "}],\"cards\":[]}")
			file, err := c.importFile(t, "numbers.json", data)
			line, col := position(data, len(before))
			e := oneProblem(t, err, file, line, col, tc.says)
			if len(tc.number) <= 64 && !strings.Contains(e.Error(), tc.number) {
				t.Errorf("problem %q does not show the number %s", e.Error(), tc.number)
			}
			c.assertKept(t)
		})
	}

	// A number longer than any is a problem of its field, not of the JSON:
	// the file is read on, and what follows is judged too, an unknown
	// member's long number among it.
	long := strings.Repeat("9", 80)
	data := []byte(`{"sets":[{"id":"jp-A","code":"A","name":"A","zone":"jp","cardCount":` + long + `,"x":` + long + `}],"cards":[]}`)
	_, err := c.importFile(t, "numbers.json", data)
	ve := asValidationError(t, err)
	if len(ve.Errors) != 2 || ve.Errors[0].Field != "cardCount" || ve.Errors[1].Field != "x" || ve.Errors[1].Found != "a number of 80 characters" {
		t.Errorf("two numbers of 80 digits, the second an unknown member's: %v; want cardCount and x reported", err)
	}
	c.assertKept(t)
}

// TestDuplicateKeys: a member repeated in an object, however it is
// spelled, is refused with a problem naming it at its second occurrence.
func TestDuplicateKeys(t *testing.T) {
	c := newCatalogueDir(t)
	set := `{"id":"jp-A","code":"A","name":"A","zone":"jp","cardCount":1}`
	card := `{"id":"jp-A-1","name":"n","setName":"A","setCode":"A","number":"1","language":"ja","zone":"jp"}`
	for _, tc := range []struct {
		name, before, dup, after string
		key                      string
	}{
		{"SetMember", `{"sets":[{"id":"jp-A","code":"A",`, `"code":"B",`, `"name":"A","zone":"jp","cardCount":1}],"cards":[]}`, "code"},
		{"CardMemberEscaped", `{"sets":[` + set + `],"cards":[{"id":"jp-A-1",`, `"\u0069d":"jp-A-2",`, card[len(`{"id":"jp-A-1",`):] + `]}`, "id"},
		{"NullThenValue", `{"sets":[` + set + `],"cards":[{"illustrator":null,`, `"illustrator":"x",`, card[1:] + `]}`, "illustrator"},
		{"UnknownMember", `{"sets":[{"x":1,`, `"x":2,`, set[1:] + `],"cards":[]}`, "x"},
		{"Sets", `{"sets":[` + set + `],"cards":[` + card + `],`, `"sets":[]`, `}`, "sets"},
		{"CardsEscaped", `{"cards":[` + card + `],"sets":[` + set + `],`, `"c\u0061rds":[]`, `}`, "cards"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := []byte(tc.before + tc.dup + tc.after)
			file, err := c.importFile(t, "dup.json", data)
			ve := asValidationError(t, err)
			line, col := position(data, len(tc.before))
			found := false
			for _, e := range ve.Errors {
				if e.Field == tc.key && e.Found == "a duplicate member" && e.Line == line && e.Column == col {
					found = true
				}
			}
			if !found || !strings.Contains(err.Error(), fmt.Sprintf("%s:%d:%d: ", file, line, col)) {
				t.Errorf("error %v, want %s:%d:%d naming the repeated member %q", err, file, line, col, tc.key)
			}
			c.assertKept(t)
		})
	}
	t.Run("InsideUnknownMember", func(t *testing.T) {
		// Nothing inside an unknown member is read; the member itself is
		// the problem.
		data := []byte(`{"sets":[],"cards":[],"extra":{"a":1,"a":2}}`)
		file, err := c.importFile(t, "dup.json", data)
		e := oneProblem(t, err, file, 1, len(`{"sets":[],"cards":[],`)+1, `only the members "sets", "cards" and "names"`)
		if e.Field != "extra" {
			t.Errorf("problem %q, want one naming extra", e.Error())
		}
		c.assertKept(t)
	})
}

// TestSnapshotChangesWhileRead changes the snapshot file while the import
// reads it. The import detects a file whose size or modification time
// changed, or whose size is not what it read; it cannot detect a rewrite
// that keeps both, but then the SHA-256 it records is that of the bytes it
// read, not of what the file holds afterwards.
func TestSnapshotChangesWhileRead(t *testing.T) {
	original := []byte(faultSnapshot)
	other := bytes.Replace(original, []byte("Pok"), []byte("Mon"), 1)
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, path string)
		ok     bool
	}{
		{"Appended", func(t *testing.T, path string) {
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if _, err := f.WriteString(`{"sets":[]}`); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"Truncated", func(t *testing.T, path string) {
			if err := os.Truncate(path, int64(len(original)/2)); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"RewrittenSameSize", func(t *testing.T, path string) {
			if err := os.WriteFile(path, other, 0o644); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"RewrittenSameSizeAndTime", func(t *testing.T, path string) {
			if err := os.WriteFile(path, other, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Chtimes(path, old, old); err != nil {
				t.Fatal(err)
			}
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCatalogueDir(t)
			file := filepath.Join(c.dir, "snapshot.json")
			if err := os.WriteFile(file, original, 0o644); err != nil {
				t.Fatal(err)
			}
			// An old modification time, so that a change within the
			// file system's timestamp granularity still shows.
			if err := os.Chtimes(file, old, old); err != nil {
				t.Fatal(err)
			}
			changed := false
			res, err := Import(context.Background(), Config{DB: c.db, Inputs: []string{file}, Progress: func(read, total int64) {
				// The first call comes once the whole file is read.
				if !changed {
					changed = true
					tc.change(t, file)
				}
			}})
			if !changed {
				t.Fatal("the import never reported progress")
			}
			if !tc.ok {
				if err == nil || !strings.Contains(err.Error(), file+" changed while it was read") {
					t.Fatalf("error %v, want one saying %s changed while it was read", err, file)
				}
				c.assertKept(t, "snapshot.json")
				return
			}
			if err != nil {
				t.Fatalf("import: %v", err)
			}
			sum := sha256.Sum256(original)
			if got := res.Info.Sources[0]; got.SHA256 != hex.EncodeToString(sum[:]) || got.Bytes != int64(len(original)) {
				t.Errorf("recorded %+v, want the SHA-256 and size of the bytes read", got)
			}
			if got := mustOpen(t, c.db).Info().Sources[0].SHA256; got != hex.EncodeToString(sum[:]) {
				t.Errorf("the catalogue records %s, want the SHA-256 of the bytes read", got)
			}
		})
	}

	t.Run("StdinInPieces", func(t *testing.T) {
		// Standard input cannot be checked against a size; what is
		// recorded is what was read, however it arrived: here one byte at
		// a time and with white space after the snapshot.
		c := newCatalogueDir(t)
		data := append([]byte(faultSnapshot), " \n\t\n"...)
		res, err := Import(context.Background(), Config{DB: c.db, Inputs: []string{"-"}, Stdin: iotest.OneByteReader(bytes.NewReader(data))})
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(data)
		if got := res.Info.Sources[0]; got.SHA256 != hex.EncodeToString(sum[:]) || got.Bytes != int64(len(data)) {
			t.Errorf("recorded %+v, want the SHA-256 and size of the %d bytes read", got, len(data))
		}
	})
}

// TestImportStopsReadingAtASyntaxError: once a file is known not to be
// JSON, the rest of it is neither read nor waited for (a stream that
// never ends), and a file cut short is reported once, where it stops,
// not also as every card whose set lay past the cut.
func TestImportStopsReadingAtASyntaxError(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "catalog.db")
	rest := &countingSpaces{left: 16 << 20}
	in := io.MultiReader(strings.NewReader("xyz"), rest)
	_, err := Import(context.Background(), Config{DB: db, Inputs: []string{"-"}, Stdin: in})
	ve := asValidationError(t, err)
	if len(ve.Errors) != 1 || !strings.Contains(ve.Errors[0].Found, "invalid JSON") {
		t.Errorf("problems %v, want the invalid JSON", err)
	}
	if read := 16<<20 - rest.left; read > 1<<20 {
		t.Errorf("read %d bytes past the syntax error", read)
	}

	cards := `{"cards":[` + `{"id":"jp-A-1","name":"n","setName":"A","setCode":"A","number":"1","language":"ja","zone":"jp"},` +
		`{"id":"jp-B-1","name":"n","setName":"B","setCode":"B","number":"1","language":"ja","zone":"jp"}],` +
		`"sets":[{"id":"jp-A","code":"A","name":"A","zone":"jp","cardCount":1},{"id":"jp-B","co`
	file := filepath.Join(dir, "cut.json")
	if err := os.WriteFile(file, []byte(cards), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Import(context.Background(), Config{DB: db, Inputs: []string{file}})
	ve = asValidationError(t, err)
	if len(ve.Errors) != 1 || !strings.Contains(ve.Errors[0].Found, "unexpected end of input") {
		t.Errorf("a file cut short: %v, want its end reported alone", err)
	}
	// A card whose set was read, with another name, is reported still.
	misnamed := strings.Replace(cards, `"setName":"A"`, `"setName":"Not A"`, 1)
	if err := os.WriteFile(file, []byte(misnamed), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Import(context.Background(), Config{DB: db, Inputs: []string{file}})
	ve = asValidationError(t, err)
	if len(ve.Errors) != 2 || ve.Errors[0].Field != "setName" || !strings.Contains(ve.Errors[1].Found, "unexpected end of input") {
		t.Errorf("a misnamed set and a file cut short: %v, want both reported", err)
	}
}

// countingSpaces reads as left spaces.
type countingSpaces struct{ left int }

func (c *countingSpaces) Read(p []byte) (int, error) {
	if c.left == 0 {
		return 0, io.EOF
	}
	n := min(len(p), c.left)
	for i := range n {
		p[i] = ' '
	}
	c.left -= n
	return n, nil
}
