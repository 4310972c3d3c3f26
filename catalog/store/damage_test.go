package store

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/catalogd/catalogd/catalog/store/internal/layout"
	bolt "go.etcd.io/bbolt"
)

// TestDamageIsToldAsDamage removes or breaks a record that another one
// names, one at a time, and reads through it: each read fails with
// ErrDamaged, which serve tells as a damaged file (and which does not put
// the reader back in its pool), never as a plain error.
func TestDamageIsToldAsDamage(t *testing.T) {
	for _, damage := range []struct {
		name   string
		bucket []byte
		key    []byte
		value  []byte // nil deletes the key
		read   func(db *DB) error
		says   string
	}{
		{
			name: "a block of the search index is missing", bucket: layout.BucketNumbers, key: []byte{0, 0, 0, 0},
			read: func(db *DB) error { return db.Search(SearchQuery{Q: "card", Limit: 10}, func([]byte) {}) },
			says: "index entry 0 is missing",
		},
		{
			name: "an entry of the search index is out of bounds", bucket: layout.BucketNumbers, key: []byte{0, 0, 0, 0},
			value: []byte{2, 0, 0, 0, 9, 0, 0, 0, 1},
			read:  func(db *DB) error { return db.Search(SearchQuery{Q: "card", Limit: 10}, func([]byte) {}) },
			says:  "malformed search index entry",
		},
		{
			name: "a set of a code is missing", bucket: layout.BucketSets, key: []byte("jp-X"),
			read: func(db *DB) error { _, err := db.Set("X"); return err },
			says: `set "jp-X" of code "X" is missing`,
		},
		{
			name: "a set's record is malformed", bucket: layout.BucketSets, key: []byte("jp-X"), value: []byte{1},
			read: func(db *DB) error { _, err := db.Set("X"); return err },
			says: `set "jp-X"`,
		},
		{
			name: "a list of sets is missing", bucket: layout.BucketSetLists, key: []byte{0, 0, 0, 0, 0},
			read: func(db *DB) error { _, err := db.SetList(""); return err },
			says: "the list of sets is missing",
		},
		{
			name: "a set of the export's list is missing", bucket: layout.BucketSets, key: []byte("chn-X"),
			read: func(db *DB) error { _, err := db.Export(""); return err },
			says: `set "chn-X" of the list of sets is missing`,
		},
	} {
		t.Run(damage.name, func(t *testing.T) {
			path := writeTestCatalogue(t, "g1")
			db := damageFile(t, path, func(tx *bolt.Tx) error {
				b := tx.Bucket(damage.bucket)
				if b.Get(damage.key) == nil {
					return errors.New("no such key to damage")
				}
				if damage.value == nil {
					return b.Delete(damage.key)
				}
				return b.Put(damage.key, damage.value)
			})
			if err := damage.read(db); !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), damage.says) {
				t.Fatalf("read: %v; want ErrDamaged saying %q", err, damage.says)
			}
		})
	}
}

// damageFile changes the catalogue file at path with damage, in a write
// transaction of bbolt's, and opens it.
func damageFile(t *testing.T, path string, damage func(*bolt.Tx) error) *DB {
	t.Helper()
	bdb, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = bdb.Update(damage)
	if cerr := bdb.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	return openCatalogue(t, path)
}

// TestFileCutShortWhileOpen cuts the file short while it is open, as a
// copy over the served catalogue (which empties it first) or a truncate
// does: a read of a page the file no longer holds faults (SIGBUS), and is
// an ErrDamaged that says what happened, not the end of the process nor a
// lock left held; every read after it is an ErrDamaged too, and the
// catalogue still closes.
func TestFileCutShortWhileOpen(t *testing.T) {
	for _, pages := range []int64{0, 2} { // nothing left; the meta pages only
		t.Run(fmt.Sprintf("%d-pages", pages), func(t *testing.T) {
			path := writeTestCatalogue(t, "g1")
			db, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			// A reader in the pool, as a server that has answered holds.
			if err := db.Search(SearchQuery{Q: "jay", Limit: 10}, func([]byte) {}); err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(path, pages*int64(os.Getpagesize())); err != nil {
				t.Fatal(err)
			}
			reads := map[string]func() error{
				"a card":   func() error { _, err := db.AppendCard(nil, "jp-X-10"); return err },
				"a search": func() error { return db.Search(SearchQuery{Q: "jay", Limit: 10}, func([]byte) {}) },
				"Check":    db.Check,
			}
			done := make(chan struct{})
			go func() {
				defer close(done)
				// A page still in memory may be read once more; a fault is
				// damage, and so is every read once one was met.
				if err := db.Check(); !errors.Is(err, ErrDamaged) {
					t.Errorf("Check of a file cut short: %v; want ErrDamaged", err)
				}
				for name, read := range reads {
					if err := read(); !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), "cut short or written over after it was opened") {
						t.Errorf("%s in a file cut short, after a fault: %v; want ErrDamaged saying so", name, err)
					}
				}
				if err := db.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
			}()
			select {
			case <-done:
			case <-time.After(time.Minute): // a lock held by a fault: the reads would wait for good
				t.Fatal("reads of a file cut short did not end")
			}
		})
	}
}
