package importer

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/catalogd/catalogd/catalog/store"
)

// These tests make the file system fail under an import with real faults:
// a directory that cannot be written, a file that cannot grow (as on a full
// disk), a rename that cannot happen. Each asserts a clear error, the
// previous catalogue byte-identical and no temporary file left behind.

// TestTargetDirectoryNotWritable: the directory of --db cannot be written.
// Where chmod does not stop this process (root), the directory of --db is
// made impossible another way: its parent is the catalogue file itself.
func TestTargetDirectoryNotWritable(t *testing.T) {
	c := newCatalogueDir(t)
	if err := os.Chmod(c.dir, 0o500); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(c.dir, 0o700) })
	probe := filepath.Join(c.dir, ".probe")
	chmodBinds := os.WriteFile(probe, nil, 0o600) != nil
	if !chmodBinds {
		os.Remove(probe)
	}

	if chmodBinds {
		t.Run("ExistingCatalogue", func(t *testing.T) {
			_, err := Import(context.Background(), Config{DB: c.db, Inputs: []string{filepath.Join("testdata", "valid.json")}})
			if !errors.Is(err, fs.ErrPermission) || !strings.Contains(err.Error(), c.dir) {
				t.Fatalf("error %v, want permission denied naming %s", err, c.dir)
			}
			c.assertKept(t)
		})
		t.Run("FirstImport", func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "ro")
			if err := os.Mkdir(dir, 0o500); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.Chmod(dir, 0o700) })
			db := filepath.Join(dir, "catalog.db")
			_, err := Import(context.Background(), Config{DB: db, Inputs: []string{filepath.Join("testdata", "valid.json")}})
			if !errors.Is(err, fs.ErrPermission) || !strings.Contains(err.Error(), db) {
				t.Fatalf("error %v, want permission denied naming %s", err, db)
			}
			assertDirHolds(t, dir)
		})
		return
	}

	t.Logf("chmod 0500 does not stop this process from writing %s; the catalogue path is put under a regular file instead", c.dir)
	os.Chmod(c.dir, 0o700)
	db := filepath.Join(c.db, "catalog.db")
	_, err := Import(context.Background(), Config{DB: db, Inputs: []string{filepath.Join("testdata", "valid.json")}})
	if !errors.Is(err, syscall.ENOTDIR) || !strings.Contains(err.Error(), db) {
		t.Fatalf("error %v, want not a directory naming %s", err, db)
	}
	c.assertKept(t)
}

// importUnderLimit imports inputs into db in a child process whose largest
// file is limit bytes (RLIMIT_FSIZE): past it, writes and truncations fail
// with EFBIG, at the point where a full disk fails them with ENOSPC. A
// child, for the limit is a whole process's: in this one it would also fail
// the test framework's own writes. It returns the import's error.
func importUnderLimit(t *testing.T, limit uint64, db string, inputs ...string) error {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), fileSizeLimitChild+"="+strconv.FormatUint(limit, 10), "IMPORT_DB="+db, "IMPORT_INPUTS="+strings.Join(inputs, "\n"))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("import under a file size limit of %d: %v", limit, err)
	}
	if msg := strings.TrimSpace(string(out)); msg != "" {
		return errors.New(msg)
	}
	return nil
}

// fileSizeLimitChild names the variable that makes the test binary the
// child of importUnderLimit.
const fileSizeLimitChild = "IMPORTER_TEST_FILE_SIZE_LIMIT"

func TestMain(m *testing.M) {
	if limit := os.Getenv(fileSizeLimitChild); limit != "" {
		os.Exit(importWithFileSizeLimit(limit))
	}
	os.Exit(m.Run())
}

// importWithFileSizeLimit is the child of importUnderLimit: it prints the
// import's error, if any, and says by its exit status whether it could run.
func importWithFileSizeLimit(limit string) int {
	n, err := strconv.ParseUint(limit, 10, 64)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old); err != nil || n > old.Max {
		fmt.Fprintf(os.Stderr, "limit %d: hard limit %d, %v\n", n, old.Max, err)
		return 2
	}
	// Go ignores the SIGXFSZ that comes with EFBIG.
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: n, Max: old.Max}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	_, err = Import(context.Background(), Config{DB: os.Getenv("IMPORT_DB"), Inputs: strings.Split(os.Getenv("IMPORT_INPUTS"), "\n")})
	if err != nil {
		fmt.Println(err)
	}
	return 0
}

// TestDiskFull stops the new catalogue from growing past N bytes, for N
// from nothing (the file cannot even be initialised) to one byte short of
// its full size (the last write fails), importing the built-in sample.
func TestDiskFull(t *testing.T) {
	sample := filepath.Join("..", "data", "sample.json")

	// The size the new catalogue reaches when nothing stops it, and proof
	// that the limit stops nothing else: an import under a limit above it
	// succeeds.
	full := filepath.Join(t.TempDir(), "catalog.db")
	mustImport(t, Config{DB: full, Inputs: []string{sample}})
	st, err := os.Stat(full)
	if err != nil {
		t.Fatal(err)
	}
	size := uint64(st.Size())
	if err := importUnderLimit(t, size+1<<20, full, sample); err != nil {
		t.Fatalf("import under a limit above the catalogue's size: %v", err)
	}

	c := newCatalogueDir(t)
	for _, limit := range []uint64{0, 4 << 10, 32 << 10, size / 4, size / 2, size - 4<<10, size - 1} {
		err := importUnderLimit(t, limit, c.db, sample)
		if err == nil {
			t.Fatalf("limit %d of %d bytes: the import succeeded", limit, size)
		}
		if msg := err.Error(); !strings.Contains(msg, syscall.EFBIG.Error()) || !strings.Contains(msg, c.dir) {
			t.Errorf("limit %d of %d bytes: error %q, want one naming the catalogue being written and saying %q", limit, size, msg, syscall.EFBIG.Error())
		}
		c.assertKept(t)
	}
}

// TestRenameFails: the new catalogue is complete but cannot take the place
// of --db, which became a directory while the import ran (a directory at
// the start is refused before anything is read).
func TestRenameFails(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "catalog.db")
	inside := filepath.Join(db, "keep")
	var before fileState
	becomeDir := func() {
		if err := os.Mkdir(db, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(inside, []byte("kept"), 0o644); err != nil {
			t.Fatal(err)
		}
		before = snapshotFile(t, inside)
	}
	_, err := Import(context.Background(), Config{DB: db, Inputs: []string{filepath.Join("testdata", "valid.json")}, finished: becomeDir})
	if err == nil || !strings.Contains(err.Error(), "replace "+db) {
		t.Fatalf("error %v, want one about replacing %s", err, db)
	}
	var le *os.LinkError
	if !errors.As(err, &le) || le.Op != "rename" {
		t.Errorf("error %v, want the rename's", err)
	}
	before.assertUnchanged(t)
	assertDirHolds(t, dir, "catalog.db", "catalog.db.lock")
	assertDirHolds(t, db, "keep")
}

// TestImportThroughASymlink imports into a --db that links to a file on
// another directory, as an operator who keeps the catalogue on a larger
// disk does: the file linked to is replaced there, and the link stays a
// link. A link to nothing is an error that changes nothing.
func TestImportThroughASymlink(t *testing.T) {
	data, conf := t.TempDir(), t.TempDir()
	target := filepath.Join(data, "catalog-2026.db")
	link := filepath.Join(conf, "catalog.db")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	for range 2 { // the first import creates the file linked to, the second replaces it
		res, err := Import(context.Background(), Config{DB: link, Inputs: []string{filepath.Join("testdata", "valid.json")}})
		if err != nil {
			t.Fatal(err)
		}
		if res.Path != target {
			t.Errorf("imported into %s, want %s", res.Path, target)
		}
		if got, err := os.Readlink(link); err != nil || got != target {
			t.Fatalf("--db after the import: link to %q, %v; want a link to %s", got, err, target)
		}
		db, err := store.Open(link)
		if err != nil {
			t.Fatalf("open the catalogue through the link: %v", err)
		}
		gen := db.Generation()
		db.Close()
		if gen != res.Info.Generation {
			t.Errorf("the link opens generation %s, want the import's %s", gen, res.Info.Generation)
		}
		assertDirHolds(t, data, "catalog-2026.db", "catalog-2026.db.lock")
		assertDirHolds(t, conf, "catalog.db")
	}

	dangling := filepath.Join(conf, "dangling.db")
	if err := os.Symlink(filepath.Join(data, "no-such-dir", "c.db"), dangling); err != nil {
		t.Fatal(err)
	}
	_, err := Import(context.Background(), Config{DB: dangling, Inputs: []string{filepath.Join("testdata", "valid.json")}})
	if err == nil || !strings.Contains(err.Error(), "symbolic link") || !strings.Contains(err.Error(), dangling) {
		t.Fatalf("import into a link to nothing: %v, want an error naming the link", err)
	}
	assertDirHolds(t, data, "catalog-2026.db", "catalog-2026.db.lock")
	assertDirHolds(t, conf, "catalog.db", "dangling.db")
}
