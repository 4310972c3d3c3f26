package store

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/catalogd/catalogd/catalog/store/internal/layout"
	bolt "go.etcd.io/bbolt"
)

// damagef returns an error that says what is damaged and is ErrDamaged.
func damagef(format string, args ...any) error {
	return &damageError{fmt.Sprintf(format, args...)}
}

type damageError struct{ msg string }

func (e *damageError) Error() string        { return e.msg }
func (e *damageError) Is(target error) bool { return target == layout.ErrDamaged }

// recoverDamage turns a panic of bbolt's, which is how it meets a page
// that is not a page, into an ErrDamaged in *err; and so a fault in the
// memory the file is mapped in, which reads run with panics on faults
// (readsMap). A panic of any other origin, a fault elsewhere among them,
// is a bug, not damage, and goes on.
func (db *DB) recoverDamage(err *error) {
	v := recover()
	if v == nil {
		return
	}
	if fault, ok := v.(interface{ Addr() uintptr }); ok {
		if !db.mapHolds(fault.Addr()) {
			panic(v)
		}
		// A page of the map that the file no longer holds: it was cut
		// short or written over in place after it was opened, or the
		// disk failed to read it.
		*err = damagef("the catalogue file could not be read at memory address %#x: it was changed on disk after it was opened, or the disk failed; import the catalogue again", fault.Addr())
		return
	}
	if !panickedInBbolt() {
		panic(v)
	}
	*err = damagef("the catalogue file is damaged: %v; import the catalogue again", v)
}

// mapHolds reports whether addr may lie in the file's map: bbolt maps at
// least the file, in steps that double up to 1 GiB and then grow by 1
// GiB.
func (db *DB) mapHolds(addr uintptr) bool {
	return addr >= db.mapStart && addr-db.mapStart < uintptr(2*db.size+1<<30)
}

// readsMap makes a fault of the calling goroutine a panic, which
// recoverDamage recovers, rather than the end of the process, and returns
// the setting to put back when the read is done. A read of a page of the
// map beyond the end of the file (one cut short, or copied over, while it
// was served) or one the disk cannot read raises SIGBUS, which would
// otherwise end serve on the spot (runtime/debug.SetPanicOnFault).
func readsMap() bool { return debug.SetPanicOnFault(true) }

// begin starts a read transaction. bbolt reads the meta page while it
// holds its meta lock, and panics there when neither meta page is valid;
// a panic there, or a fault turned into one, would leave the lock held and
// every later transaction waiting on it. So a transaction begins with
// faults left to end the process, and not at all on a file shorter than
// its pages or whose meta pages are not those it was opened with
// (cutShort), as reading the file rather than its map tells first. Only a
// request that finds no idle reader begins one. A file changed between
// that look and the transaction's start still ends the process
// (docs/RELIABILITY.md).
func (db *DB) begin() (*bolt.Tx, error) {
	if db.cutShort() {
		return nil, errCutShort
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(false))
	return db.db.Begin(false)
}

// Damaged reports whether every read of db fails, for its file was found
// cut short or written over after it was opened: a reload replaces it
// even with a file of the same generation.
func (db *DB) Damaged() bool { return db.cut.Load() }

// errCutShort is the error of every read of a file found cut short.
var errCutShort = damagef("the catalogue file was cut short or written over after it was opened; import the catalogue again")

// cutShort reports whether the file mapped no longer holds what was
// opened: its last page's last byte is gone, or its meta pages are not
// those it was opened with (it was cut short, or written over, by another
// catalogue as well). Once so, it stays so for this DB, which a reload
// replaces. A read of the file that fails otherwise (an I/O error) fails
// this look alone. It reads the file, not the map, so it faults nowhere.
func (db *DB) cutShort() bool {
	if db.cut.Load() {
		return true
	}
	var last [1]byte
	_, err := db.file.ReadAt(last[:], db.size-1)
	var metas metaPages
	if err == nil {
		metas, err = readMetaPages(db.file, db.pageSize)
	}
	switch {
	case err == nil && metas == db.metas:
		return false
	case err == nil || errors.Is(err, io.EOF):
		db.cut.Store(true)
	}
	return true
}

// metaPages are the first bytes of a catalogue file's two meta pages:
// each page's header and bbolt's meta, its root, its page count and its
// checksum among them. A file served never changes them; bbolt reads
// them, and panics on them, holding its meta lock.
type metaPages [2][boltMetaBytes]byte

// boltMetaBytes covers a meta page's header (16 bytes) and bbolt's meta
// (64 bytes, its checksum last).
const boltMetaBytes = 16 + 64

// readMetaPages reads the meta pages of the file f of pages of pageSize
// bytes.
func readMetaPages(f *os.File, pageSize int64) (metaPages, error) {
	var m metaPages
	for i := range m {
		if _, err := f.ReadAt(m[i][:], int64(i)*pageSize); err != nil {
			return m, err
		}
	}
	return m, nil
}

// panickedInBbolt reports whether the panic being recovered was raised
// in bbolt: whether the function that called panic, or that faulted, is
// bbolt's.
func panickedInBbolt() bool {
	var pcs [32]uintptr
	n := runtime.Callers(3, pcs[:]) // above panickedInBbolt and recoverDamage
	frames := runtime.CallersFrames(pcs[:n])
	afterPanic := false
	for {
		f, more := frames.Next()
		switch {
		case f.Function == "runtime.gopanic" || f.Function == "runtime.panicmem" || strings.HasPrefix(f.Function, "runtime.panicIndex") || strings.HasPrefix(f.Function, "runtime.goPanic"):
			afterPanic = true
		case afterPanic && strings.HasPrefix(f.Function, "runtime."):
		case afterPanic:
			return strings.HasPrefix(f.Function, "go.etcd.io/bbolt")
		}
		if !more {
			return false
		}
	}
}

// view runs fn in a read transaction of its own, a damaged page an error.
func (db *DB) view(fn func(tx *bolt.Tx) error) (err error) {
	tx, err := db.begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	defer db.recoverDamage(&err)
	defer debug.SetPanicOnFault(readsMap())
	return fn(tx)
}

// View is view for the import of the next catalogue, which compares its
// records with this one's (build.Previous): only the packages of
// catalog/store can name the transaction it lends.
func (db *DB) View(fn func(tx layout.ReadTx) error) error {
	return db.view(func(tx *bolt.Tx) error { return fn(layout.ReadTx{Tx: tx}) })
}

// Check walks the tree of every bucket of the file, as a search or a
// listing would, and returns an ErrDamaged for the first page that is not
// a page. It checks the file's structure, page headers and keys, not the
// bytes of its records: bbolt keeps no checksums. Open reads only the
// pages it needs, so a file damaged elsewhere opens; serve checks a new
// file before it serves it (a reload), which walks the whole file once.
func (db *DB) Check() error {
	err := db.view(func(tx *bolt.Tx) error {
		return tx.ForEach(func(name []byte, b *bolt.Bucket) error {
			c := b.Cursor()
			for k, _ := c.First(); k != nil; k, _ = c.Next() {
			}
			return nil
		})
	})
	if err != nil {
		return fmt.Errorf("check catalogue %s: %w", db.path, err)
	}
	return nil
}
