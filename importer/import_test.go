package importer

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/catalogd/catalogd/catalog"
	"github.com/catalogd/catalogd/catalog/store"
	bolt "go.etcd.io/bbolt"
)

// validCounts is what testdata/valid.json holds, zone by zone.
var validCounts = []store.ZoneCount{
	{Zone: "intl", Sets: 3, Cards: 6},
	{Zone: "jp", Sets: 3, Cards: 3},
	{Zone: "chn", Sets: 2, Cards: 3},
}

func TestImportValid(t *testing.T) {
	file := filepath.Join("testdata", "valid.json")
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "catalog.db")
	res := mustImport(t, Config{DB: dbPath, Inputs: []string{file}})
	if res.Path != dbPath || res.DryRun {
		t.Errorf("result path %q dry run %v, want %q and false", res.Path, res.DryRun, dbPath)
	}
	db := mustOpen(t, dbPath)
	info := db.Info()
	if !slices.Equal(info.Zones, validCounts) {
		t.Errorf("counts %+v, want %+v", info.Zones, validCounts)
	}
	if !slices.Equal(res.Info.Zones, validCounts) {
		t.Errorf("result counts %+v, want %+v", res.Info.Zones, validCounts)
	}
	data := readFile(t, file)
	sum := sha256.Sum256(data)
	want := []store.Source{{Name: file, SHA256: hex.EncodeToString(sum[:]), Bytes: int64(len(data))}}
	if !slices.Equal(info.Sources, want) {
		t.Errorf("sources %+v, want %+v", info.Sources, want)
	}
	if info.Generation == "" || info.ImportedAt.IsZero() {
		t.Errorf("generation %q imported at %v, want both set", info.Generation, info.ImportedAt)
	}
	assertHoldsSnapshot(t, db, data)
	assertDirHolds(t, dir, "catalog.db", "catalog.db.lock")
}

// The edge fixture holds every value at the bounds of its rule (lengths in
// code points, the integer limits, 29 February of leap years, URIs that are
// neither http nor lower case), every nullable member as null, absent
// optional members, escapes, and members in an order of their own.
func TestImportEdgeValues(t *testing.T) {
	file := filepath.Join("testdata", "valid-edge.json")
	dbPath := filepath.Join(t.TempDir(), "catalog.db")
	mustImport(t, Config{DB: dbPath, Inputs: []string{file}})
	db := mustOpen(t, dbPath)
	assertHoldsSnapshot(t, db, readFile(t, file))

	card := getCard(t, db, "intl-edge-1")
	if card.Variant != catalog.DefaultVariant {
		t.Errorf("variant %q, want the default %q", card.Variant, catalog.DefaultVariant)
	}
	if got, want := card.Name, "Pokémon 😀"; got != want {
		t.Errorf("name %q, want %q", got, want)
	}
	if card.Year.Value != 1996 || !card.Illustrator.Null || card.ScanFallbackURL.Present != true {
		t.Errorf("card %+v lost a bound or a null", card)
	}
	if card := getCard(t, db, "chn-edge-3"); card.Year.Present || card.Rarity.Present || card.TotalCards.Present {
		t.Errorf("card %+v gained a member it does not have", card)
	}
}

func TestImportCardsBeforeSets(t *testing.T) {
	file := filepath.Join("testdata", "valid-cards-first.json")
	dbPath := filepath.Join(t.TempDir(), "catalog.db")
	mustImport(t, Config{DB: dbPath, Inputs: []string{file}})
	db := mustOpen(t, dbPath)
	if got := db.Info().Zones; !slices.Equal(got, validCounts) {
		t.Errorf("counts %+v, want %+v", got, validCounts)
	}
	assertHoldsSnapshot(t, db, readFile(t, file))
}

// The cards come in the first file and their sets in the second: together
// they are the catalogue of valid.json.
func TestImportSeveralFiles(t *testing.T) {
	files := []string{
		filepath.Join("testdata", "several", "1-cards.json"),
		filepath.Join("testdata", "several", "2-sets.json"),
	}
	dbPath := filepath.Join(t.TempDir(), "catalog.db")
	mustImport(t, Config{DB: dbPath, Inputs: files})
	db := mustOpen(t, dbPath)
	info := db.Info()
	if !slices.Equal(info.Zones, validCounts) {
		t.Errorf("counts %+v, want %+v", info.Zones, validCounts)
	}
	var names []string
	for _, s := range info.Sources {
		names = append(names, s.Name)
	}
	if !slices.Equal(names, files) {
		t.Errorf("sources %q, want %q", names, files)
	}
	for _, f := range files {
		assertHoldsSnapshot(t, db, readFile(t, f))
	}
}

// Compression is recognised by its magic number, not by the file name.
func TestImportGzip(t *testing.T) {
	compressed := gzipBytes(t, readFile(t, filepath.Join("testdata", "valid.json")))
	for _, name := range []string{"snapshot.json.gz", "snapshot.json"} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			file := filepath.Join(dir, name)
			writeFile(t, file, string(compressed))
			dbPath := filepath.Join(dir, "catalog.db")
			mustImport(t, Config{DB: dbPath, Inputs: []string{file}})
			info := mustOpen(t, dbPath).Info()
			if !slices.Equal(info.Zones, validCounts) {
				t.Errorf("counts %+v, want %+v", info.Zones, validCounts)
			}
			sum := sha256.Sum256(compressed)
			want := []store.Source{{Name: file, SHA256: hex.EncodeToString(sum[:]), Bytes: int64(len(compressed))}}
			if !slices.Equal(info.Sources, want) {
				t.Errorf("sources %+v, want the file as read, %+v", info.Sources, want)
			}
		})
	}
	t.Run("Truncated", func(t *testing.T) {
		dir := t.TempDir()
		file := filepath.Join(dir, "snapshot.json.gz")
		writeFile(t, file, string(compressed[:len(compressed)/2]))
		_, err := Import(context.Background(), Config{DB: filepath.Join(dir, "catalog.db"), Inputs: []string{file}})
		ve := asValidationError(t, err)
		if len(ve.Errors) != 1 || ve.Errors[0].File != file || !strings.Contains(ve.Errors[0].Found, "cannot read the file") {
			t.Errorf("err = %v, want one problem reading %s", err, file)
		}
		assertDirHolds(t, dir, "snapshot.json.gz", "catalog.db.lock")
	})
}

func TestImportStdin(t *testing.T) {
	plain := readFile(t, filepath.Join("testdata", "valid.json"))
	for _, tt := range []struct {
		name string
		data []byte
	}{
		{"Plain", plain},
		{"Gzip", gzipBytes(t, plain)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dbPath := filepath.Join(t.TempDir(), "catalog.db")
			mustImport(t, Config{DB: dbPath, Inputs: []string{"-"}, Stdin: bytes.NewReader(tt.data)})
			info := mustOpen(t, dbPath).Info()
			if !slices.Equal(info.Zones, validCounts) {
				t.Errorf("counts %+v, want %+v", info.Zones, validCounts)
			}
			if len(info.Sources) != 1 || info.Sources[0].Name != "<stdin>" || info.Sources[0].Bytes != int64(len(tt.data)) {
				t.Errorf("sources %+v, want <stdin> of %d bytes", info.Sources, len(tt.data))
			}
		})
	}
	t.Run("NoStdin", func(t *testing.T) {
		dir := t.TempDir()
		_, err := Import(context.Background(), Config{DB: filepath.Join(dir, "catalog.db"), Inputs: []string{"-"}})
		if err == nil || !strings.Contains(err.Error(), "standard input") {
			t.Errorf("err = %v, want one about standard input", err)
		}
		assertDirHolds(t, dir, "catalog.db.lock")
	})
}

func TestImportDryRun(t *testing.T) {
	valid := filepath.Join("testdata", "valid.json")
	t.Run("NoCatalogue", func(t *testing.T) {
		dir := t.TempDir()
		res := mustImport(t, Config{DB: filepath.Join(dir, "catalog.db"), Inputs: []string{valid}, DryRun: true})
		if !res.DryRun || res.Path != "" {
			t.Errorf("result dry run %v path %q, want true and none", res.DryRun, res.Path)
		}
		if !slices.Equal(res.Info.Zones, validCounts) {
			t.Errorf("counts %+v, want %+v", res.Info.Zones, validCounts)
		}
		assertDirHolds(t, dir)
	})
	t.Run("ExistingCatalogue", func(t *testing.T) {
		dir := t.TempDir()
		dbPath := filepath.Join(dir, "catalog.db")
		mustImport(t, Config{DB: dbPath, Inputs: []string{filepath.Join("testdata", "valid-edge.json")}})
		before := snapshotFile(t, dbPath)
		res := mustImport(t, Config{DB: dbPath, Inputs: []string{valid}, DryRun: true})
		if !slices.Equal(res.Info.Zones, validCounts) {
			t.Errorf("counts %+v, want those of the dry run's input, %+v", res.Info.Zones, validCounts)
		}
		before.assertUnchanged(t)
		assertDirHolds(t, dir, "catalog.db", "catalog.db.lock")
	})
}

// TestImportDryRunLeavesTheDirectory: a dry run, of a valid or an invalid
// snapshot, leaves every file beside the catalogue as it was, and makes
// none; it does not even need the directory to exist.
func TestImportDryRunLeavesTheDirectory(t *testing.T) {
	for _, c := range []struct {
		name, input string
		valid       bool
	}{
		{"Valid", "valid.json", true},
		{"Invalid", "several-problems.json", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			dbPath := filepath.Join(dir, "catalog.db")
			mustImport(t, Config{DB: dbPath, Inputs: []string{filepath.Join("testdata", "valid-edge.json")}})
			writeFile(t, filepath.Join(dir, "notes.txt"), "kept")
			before := dirState(t, dir)
			_, err := Import(context.Background(), Config{DB: dbPath, Inputs: []string{filepath.Join("testdata", c.input)}, DryRun: true})
			if (err == nil) != c.valid {
				t.Fatalf("dry run of %s: %v", c.input, err)
			}
			if after := dirState(t, dir); !maps.Equal(after, before) {
				t.Errorf("after the dry run %s holds %v, want %v", dir, after, before)
			}

			missing := filepath.Join(t.TempDir(), "not", "yet")
			_, err = Import(context.Background(), Config{DB: filepath.Join(missing, "catalog.db"), Inputs: []string{filepath.Join("testdata", c.input)}, DryRun: true})
			if (err == nil) != c.valid {
				t.Fatalf("dry run into %s: %v", missing, err)
			}
			if _, err := os.Stat(missing); !os.IsNotExist(err) {
				t.Errorf("the dry run made %s: %v", missing, err)
			}
		})
	}
}

// dirState describes every file of dir: name, mode, size, time and bytes.
func dirState(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	state := make(map[string]string)
	for _, e := range entries {
		info, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(readFile(t, filepath.Join(dir, e.Name())))
		state[e.Name()] = fmt.Sprintf("%v %d %v %x", info.Mode(), info.Size(), info.ModTime().UnixNano(), sum)
	}
	return state
}

func TestImportFailureKeepsCatalogue(t *testing.T) {
	injected := errors.New("disk full")
	for _, tt := range []struct {
		name  string
		ctx   func() context.Context
		cfg   Config
		check func(t *testing.T, err error)
	}{
		{
			name: "Invalid",
			cfg:  Config{Inputs: []string{filepath.Join("testdata", "several-problems.json")}},
			check: func(t *testing.T, err error) {
				asValidationError(t, err)
			},
		},
		{
			name: "WriteFails",
			cfg: Config{Inputs: []string{filepath.Join("testdata", "valid.json")}, afterCard: func(n int64) error {
				if n == 5 {
					return injected
				}
				return nil
			}},
			check: func(t *testing.T, err error) {
				var ve *ValidationError
				if !errors.Is(err, injected) || errors.As(err, &ve) {
					t.Errorf("err = %v, want the write failure", err)
				}
			},
		},
		{
			name: "Cancelled",
			ctx: func() context.Context {
				ctx, cancel := context.WithCancel(context.Background())
				cancel()
				return ctx
			},
			cfg: Config{Inputs: []string{filepath.Join("testdata", "valid.json")}},
			check: func(t *testing.T, err error) {
				if !errors.Is(err, context.Canceled) {
					t.Errorf("err = %v, want context.Canceled", err)
				}
			},
		},
		{
			name: "MissingInput",
			cfg:  Config{Inputs: []string{filepath.Join("testdata", "valid.json"), filepath.Join("testdata", "no-such-file.json")}},
			check: func(t *testing.T, err error) {
				if !errors.Is(err, os.ErrNotExist) {
					t.Errorf("err = %v, want one wrapping os.ErrNotExist", err)
				}
			},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			dbPath := filepath.Join(dir, "catalog.db")
			mustImport(t, Config{DB: dbPath, Inputs: []string{filepath.Join("testdata", "valid-edge.json")}})
			before := snapshotFile(t, dbPath)
			ctx := context.Background()
			if tt.ctx != nil {
				ctx = tt.ctx()
			}
			cfg := tt.cfg
			cfg.DB = dbPath
			res, err := Import(ctx, cfg)
			if err == nil {
				t.Fatalf("import succeeded: %+v", res)
			}
			tt.check(t, err)
			before.assertUnchanged(t)
			assertDirHolds(t, dir, "catalog.db", "catalog.db.lock")
		})
	}
}

// A later import replaces the catalogue as a whole: nothing of the previous
// one survives.
func TestImportReplacesCatalogue(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "catalog.db")
	mustImport(t, Config{DB: dbPath, Inputs: []string{filepath.Join("testdata", "valid-edge.json")}})
	first := mustOpen(t, dbPath).Info().Generation
	mustImport(t, Config{DB: dbPath, Inputs: []string{filepath.Join("testdata", "valid.json")}})
	db := mustOpen(t, dbPath)
	if got := db.Info(); got.Generation == first || !slices.Equal(got.Zones, validCounts) {
		t.Errorf("generation %q (first %q), counts %+v, want a new generation with %+v", got.Generation, first, got.Zones, validCounts)
	}
	if _, err := db.AppendCard(nil, "intl-edge-1"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("card of the previous catalogue: err = %v, want ErrNotFound", err)
	}
}

func mustImport(t *testing.T, cfg Config) Result {
	t.Helper()
	res, err := Import(context.Background(), cfg)
	if err != nil {
		t.Fatalf("import %v: %v", cfg.Inputs, err)
	}
	return res
}

func mustOpen(tb testing.TB, path string) *store.DB {
	tb.Helper()
	db, err := store.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}

// assertHoldsSnapshot checks that every record of a snapshot is in db as it
// was written, a missing variant aside.
func assertHoldsSnapshot(t *testing.T, db *store.DB, snapshot []byte) {
	t.Helper()
	var snap struct{ Sets, Cards []json.RawMessage }
	if err := json.Unmarshal(snapshot, &snap); err != nil {
		t.Fatal(err)
	}
	for _, raw := range snap.Sets {
		var want catalog.Set
		if err := json.Unmarshal(raw, &want); err != nil {
			t.Fatal(err)
		}
		got, err := db.Set(want.ID)
		if err != nil || got != want {
			t.Errorf("set %q: got %+v (%v), want %+v", want.ID, got, err, want)
		}
	}
	for _, raw := range snap.Cards {
		var want catalog.Card
		if err := json.Unmarshal(raw, &want); err != nil {
			t.Fatal(err)
		}
		if want.Variant == "" {
			want.Variant = catalog.DefaultVariant
		}
		if got := getCard(t, db, want.ID); got != want {
			t.Errorf("card %q:\n got %+v\nwant %+v", want.ID, got, want)
		}
	}
}

func getCard(t *testing.T, db *store.DB, id string) catalog.Card {
	t.Helper()
	raw, err := db.AppendCard(nil, id)
	if err != nil {
		t.Fatalf("card %q: %v", id, err)
	}
	var c catalog.Card
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatalf("card %q: %v", id, err)
	}
	return c
}

// fileState is a file's bytes and identity, to prove it was neither
// rewritten nor replaced.
type fileState struct {
	path string
	data []byte
	info os.FileInfo
}

func snapshotFile(t *testing.T, path string) fileState {
	t.Helper()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fileState{path, readFile(t, path), info}
}

func (f fileState) assertUnchanged(t *testing.T) {
	t.Helper()
	info, err := os.Stat(f.path)
	if err != nil {
		t.Fatal(err)
	}
	if !os.SameFile(info, f.info) || !info.ModTime().Equal(f.info.ModTime()) {
		t.Errorf("%s was replaced or touched", f.path)
	}
	if !bytes.Equal(readFile(t, f.path), f.data) {
		t.Errorf("%s changed", f.path)
	}
}

// assertDirHolds checks that dir holds exactly the files named: the lock
// file stays, since removing it would let two imports lock different files;
// temporary files must not.
func assertDirHolds(t *testing.T, dir string, names ...string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	slices.Sort(names)
	if !slices.Equal(got, names) {
		t.Errorf("%s holds %q, want %q", dir, got, names)
	}
}

func readFile(tb testing.TB, path string) []byte {
	tb.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return data
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func gzipBytes(tb testing.TB, data []byte) []byte {
	tb.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if _, err := zw.Write(data); err != nil {
		tb.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		tb.Fatal(err)
	}
	return b.Bytes()
}

// The longest ids, codes and numbers the rules allow make the longest keys
// of the catalogue file: four-byte characters, and a number of the
// character NFKC expands most (U+FDFA, to 18 characters), with digits
// between them. Such a catalogue imports and answers; one character more
// is a problem that names its record and field, not a failed write.
func TestImportLongestKeys(t *testing.T) {
	long := strings.Repeat("𠀀", catalog.MaxKeyLength)
	number := strings.Repeat("ﷺ1", catalog.MaxNumberLength/2)
	snapshot := func(id, code, number string) string {
		set, _ := json.Marshal(catalog.Set{ID: id, Code: code, Name: "Long", Zone: "jp", CardCount: 1})
		card, _ := json.Marshal(catalog.Card{ID: id, Name: "Long", SetName: "Long", SetCode: code, Number: number, Language: "ja", Variant: catalog.DefaultVariant, Zone: "jp"})
		return `{"sets":[` + string(set) + `],"cards":[` + string(card) + `]}`
	}
	dir := t.TempDir()
	file, dbPath := filepath.Join(dir, "long.json"), filepath.Join(dir, "catalog.db")
	writeFile(t, file, snapshot(long, long, number))
	mustImport(t, Config{DB: dbPath, Inputs: []string{file}})
	db := mustOpen(t, dbPath)
	assertHoldsSnapshot(t, db, readFile(t, file))
	total, err := db.SetCards(long, 1, 10, func([]byte) {})
	if err != nil || total != 1 {
		t.Errorf("cards of the set: %d, %v; want 1", total, err)
	}

	for field, snap := range map[string]string{
		"sets[0] id":      snapshot(long+"x", "c", "1"),
		"sets[0] code":    snapshot("s", long+"x", "1"),
		"cards[0] number": snapshot("s", "c", number+"1"),
	} {
		writeFile(t, file, snap)
		_, err := Import(context.Background(), Config{DB: filepath.Join(dir, "other.db"), Inputs: []string{file}})
		record, name, _ := strings.Cut(field, " ")
		want := "at most " + strconv.Itoa(catalog.MaxKeyLength) + " characters"
		if name == "number" {
			want = "at most " + strconv.Itoa(catalog.MaxNumberLength) + " characters"
		}
		if err == nil || !strings.Contains(err.Error(), record) || !strings.Contains(err.Error(), name+": expected a string of "+want) {
			t.Errorf("%s one character too long: err = %v, want a problem naming the field", field, err)
		}
		if len(err.Error()) > 2048 {
			t.Errorf("%s: the message holds the whole value (%d bytes)", field, len(err.Error()))
		}
	}
}

// TestGenerationsFollowInOrder imports three times into one file at one
// instant, then once with the clock set back two minutes: each
// generation's name sorts after the one it replaced, as a replica that
// has not switched yet tells a newer generation by (docs/CONTRACT.md,
// Changes), and each import's changes are kept from the one before. So
// without a history, which reads the catalogue replaced for its name
// alone.
func TestGenerationsFollowInOrder(t *testing.T) {
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for _, history := range []int{30, 0} {
		dbPath := filepath.Join(t.TempDir(), "catalog.db")
		var gens []string
		for i, now := range []time.Time{at, at, at.Add(500 * time.Millisecond), at.Add(-2 * time.Minute)} {
			res := mustImport(t, Config{DB: dbPath, Inputs: []string{filepath.Join("testdata", "valid.json")}, History: history, Now: func() time.Time { return now }})
			gen := res.Info.Generation
			if i > 0 && gen <= gens[i-1] {
				t.Errorf("history %d, import %d at %s: generation %s does not sort after %s", history, i, now.Format(time.TimeOnly), gen, gens[i-1])
			}
			gens = append(gens, gen)
		}
		if history == 0 {
			gens = gens[len(gens)-1:]
		}
		if got := mustOpen(t, dbPath).SyncGenerations(); !slices.Equal(got, gens) {
			t.Errorf("history %d: generations a sync starts from: %v, want %v", history, got, gens)
		}
	}
}

// TestImportFollowsTheFormatBefore: a catalogue of the format before this
// one, whose records are stored alike, is followed, so that an upgrade
// keeps partners' sync; one of an older format starts a history of its
// own, and says why.
func TestImportFollowsTheFormatBefore(t *testing.T) {
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		format  string
		follows bool
	}{{"catalogd/16", true}, {"catalogd/15", false}} {
		t.Run(c.format, func(t *testing.T) {
			dbPath := filepath.Join(t.TempDir(), "catalog.db")
			cfg := Config{DB: dbPath, Inputs: []string{filepath.Join("testdata", "valid.json")}, History: 30, Now: func() time.Time { return at }}
			first := mustImport(t, cfg).Info.Generation
			setFormat(t, dbPath, c.format)
			cfg.Now = func() time.Time { return at.Add(time.Hour) }
			res := mustImport(t, cfg)
			gens := mustOpen(t, dbPath).SyncGenerations()
			switch {
			case c.follows && (res.Unfollowed != nil || !slices.Equal(gens, []string{first, res.Info.Generation})):
				t.Errorf("over %s: unfollowed %v, a sync starts from %v; want %s and %s", c.format, res.Unfollowed, gens, first, res.Info.Generation)
			case !c.follows && (res.Unfollowed == nil || !strings.Contains(res.Unfollowed.Error(), c.format) || !slices.Equal(gens, []string{res.Info.Generation})):
				t.Errorf("over %s: unfollowed %v, a sync starts from %v; want a history of its own, and why", c.format, res.Unfollowed, gens)
			}
		})
	}
}

// setFormat writes format as the catalogue's at path, as an earlier
// catalogd wrote it.
func setFormat(t *testing.T, path, format string) {
	t.Helper()
	db, err := bolt.Open(path, 0o644, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Update(func(tx *bolt.Tx) error { return tx.Bucket([]byte("meta")).Put([]byte("format"), []byte(format)) }); err != nil {
		t.Fatal(err)
	}
}
