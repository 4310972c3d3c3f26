package importer

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// replaceable says why the file at path, which --db names, may not be
// replaced by a catalogue, if it may not: a device or anything else that is
// not a file, one of the snapshots the import reads (arguments given the
// wrong way round), or text or gzip, which no catalogue is, damaged or not
// (a snapshot, a note). A catalogue, however damaged, an empty file and no
// file at all may be replaced: importing again is how a damaged catalogue
// is mended (docs/OPERATIONS.md).
func replaceable(path, db string, inputs []string) error {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("import: --db %s: %w", db, err)
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("import: --db %s is not a file but %s: give the path of a catalogue file", db, describeMode(fi.Mode()))
	}
	for _, in := range inputs {
		if in == "-" {
			continue
		}
		if ifi, err := os.Stat(in); err == nil && os.SameFile(fi, ifi) {
			return fmt.Errorf("import: --db %s is the snapshot %s, which the import reads: give the catalogue's path with --db and the snapshots after it", db, in)
		}
	}
	kind, err := notCatalogue(path)
	if err != nil {
		return fmt.Errorf("import: --db %s: %w", db, err)
	}
	if kind != "" {
		return fmt.Errorf("import: --db %s holds %s, not a catalogue, and the import would replace it: give another --db, or remove the file first", db, kind)
	}
	return nil
}

// notCatalogue returns what the file holds when that is something no
// catalogue holds, damaged or not, and "" otherwise. A catalogue is a bbolt
// file: bbolt's magic number starts either of its two meta pages, and its
// first page starts with the page's id, 0, in eight bytes. A file with
// neither is text when its first 512 bytes hold no NUL byte, gzip when it
// starts as gzip does (a compressed snapshot); anything else may be a
// catalogue damaged in both meta pages, which importing again mends.
func notCatalogue(path string) (string, error) {
	ok, head, err := boltHeader(path)
	switch {
	case err != nil || ok:
		return "", err
	case len(head) >= 2 && head[0] == 0x1f && head[1] == 0x8b:
		return "gzip", nil
	case len(head) > 0 && !bytes.Contains(head, []byte{0}):
		return "text", nil
	}
	return "", nil
}

// describeMode names the kind of file of a mode that is not a regular file.
func describeMode(m fs.FileMode) string {
	switch {
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m.IsDir():
		return "a directory"
	}
	return "not a regular file"
}

// boltMagic is the number that starts the meta pages of a bbolt file (its
// page header is 16 bytes, the magic number the meta's first field).
const boltMagic = 0xED0CDAED

// boltHeader reports whether either of the file's two meta pages, the
// first two pages, starts with bbolt's magic number (a catalogue damaged in
// one of them still has the other), and returns the file's first 512
// bytes. The second page is sought at each page size bbolt may have
// written the file with.
func boltHeader(path string) (bool, []byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, nil, err
	}
	defer f.Close()
	head := make([]byte, 512)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return false, nil, err
	}
	head = head[:n]
	var b [4]byte
	magicAt := func(off int64) bool {
		if _, err := f.ReadAt(b[:], off+16); err != nil {
			return false
		}
		return binary.LittleEndian.Uint32(b[:]) == boltMagic || binary.BigEndian.Uint32(b[:]) == boltMagic
	}
	if magicAt(0) {
		return true, head, nil
	}
	for size := int64(1 << 10); size <= 1<<16; size <<= 1 {
		if magicAt(size) {
			return true, head, nil
		}
	}
	return false, head, nil
}

// catalogueFile returns the absolute path of the file the import replaces:
// --db itself, or the file it links to, which need not exist yet. An
// operator who keeps the catalogue on another disk and links to it from
// --db wants that file replaced, on that disk, and the link kept.
func catalogueFile(db string) (string, error) {
	abs, err := filepath.Abs(db)
	if err != nil {
		return "", fmt.Errorf("import: catalogue path %s: %w", db, err)
	}
	path := abs
	for hops := 0; ; hops++ {
		fi, err := os.Lstat(path)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			break
		}
		if hops == 40 {
			return "", fmt.Errorf("import: --db %s: too many levels of symbolic links", db)
		}
		target, err := os.Readlink(path)
		if err != nil {
			return "", fmt.Errorf("import: --db %s: %w", db, err)
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(path), target)
		}
		path = target
	}
	if _, err := os.Stat(filepath.Dir(path)); err != nil && path != abs {
		return "", fmt.Errorf("import: --db %s is a symbolic link to %s, whose directory cannot be used: %w", db, path, err)
	}
	return path, nil
}
