package store

import (
	"errors"
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

// TestFileCutShortWhileOpen cuts the file short or writes over it while
// it is open, as a copy over the served catalogue (which empties it
// first), a truncate or a bad write does: a read of a page the file no
// longer holds faults (SIGBUS), and is an ErrDamaged that says so, not the
// end of the process; no transaction begins on such a file, for bbolt
// would hold a lock for good (a fault, or a panic on meta pages that are
// not whole); every read is an ErrDamaged from then on, and the catalogue
// still closes.
func TestFileCutShortWhileOpen(t *testing.T) {
	page := int64(os.Getpagesize())
	for _, c := range []struct {
		name   string
		damage func(path string) error
		faults bool // a read with the idle reader faults
	}{
		{"nothing-left", func(path string) error { return os.Truncate(path, 0) }, true},
		{"meta-pages-only", func(path string) error { return os.Truncate(path, 2*page) }, true},
		{"another-catalogue-over-it", func(path string) error {
			// A catalogue as large or larger, with valid meta pages of
			// its own: a write transaction moves them on.
			other := writeTestCatalogue(t, "g2")
			bdb, err := bolt.Open(other, 0o600, nil)
			if err != nil {
				return err
			}
			err = bdb.Update(func(tx *bolt.Tx) error { return tx.Bucket(layout.BucketMeta).Put([]byte("x"), []byte("y")) })
			if cerr := bdb.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
			b, err := os.ReadFile(other)
			if err != nil {
				return err
			}
			return os.WriteFile(path, b, 0o600)
		}, false},
		{"meta-pages-zeroed", func(path string) error {
			f, err := os.OpenFile(path, os.O_WRONLY, 0)
			if err != nil {
				return err
			}
			defer f.Close()
			_, err = f.WriteAt(make([]byte, 2*page), 0)
			return err
		}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := writeTestCatalogue(t, "g1")
			db, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			search := func() error { return db.Search(SearchQuery{Q: "jay", Limit: 10}, func([]byte) {}) }
			// A reader in the pool, as a server that has answered holds.
			if err := search(); err != nil {
				t.Fatal(err)
			}
			if err := c.damage(path); err != nil {
				t.Fatal(err)
			}
			done := make(chan struct{})
			go func() {
				defer close(done)
				if err := search(); c.faults && (!errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), "could not be read at memory address")) {
					t.Errorf("a search with the idle reader: %v; want ErrDamaged of a fault", err)
				}
				// Check begins a transaction of its own, which finds the
				// damage when the idle reader did not meet it.
				reads := []struct {
					name string
					read func() error
				}{
					{"Check", db.Check},
					{"a card", func() error { _, err := db.AppendCard(nil, "jp-X-10"); return err }},
					{"a search", search},
				}
				for round := range 2 {
					for _, r := range reads {
						if err := r.read(); !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), "cut short or written over after it was opened") {
							t.Errorf("%s, round %d: %v; want ErrDamaged saying so", r.name, round+1, err)
						}
					}
				}
				if err := db.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
			}()
			select {
			case <-done:
			case <-time.After(time.Minute): // a lock held for good: the reads would wait
				t.Fatal("reads of a damaged file did not end")
			}
		})
	}
}
