package store

import (
	"bytes"
	"sync/atomic"
	"unsafe"

	bolt "go.etcd.io/bbolt"
)

// A batch of cards is found a level of the cards' tree at a time, rather
// than key after key: each key takes one step down, then every page of the
// next level is read through, one byte a cache line, back to back. Those
// reads do not wait on one another, so the processor has their misses in
// flight together, where a seek after a seek waits for every miss in turn;
// in a large catalogue the tree's lower levels are mostly misses
// (docs/BENCHMARKS.md, Many cards a level at a time). bbolt's cursor takes
// one key down at a time, so the descent reads bbolt's pages itself, in
// bbolt's own layout: the page format of its files (version 2), in the
// machine's byte order, which bbolt keeps across its releases. A page
// that is not as bbolt writes it ends the batch, and the caller asks
// bbolt, which says how the file is damaged.

// pageHeader, branchElement and leafElement are bbolt's page header and
// the elements of its branch and leaf pages.
type pageHeader struct {
	id       uint64
	flags    uint16
	count    uint16
	overflow uint32
}

type branchElement struct {
	pos   uint32 // from the element to its key
	ksize uint32
	child uint64
}

type leafElement struct {
	flags uint32 // 1: the value is a bucket
	pos   uint32 // from the element to its key, followed by its value
	ksize uint32
	vsize uint32
}

const (
	branchPageFlag = 0x01
	leafPageFlag   = 0x02
	pageHeaderSize = int(unsafe.Sizeof(pageHeader{}))
	elementSize    = int(unsafe.Sizeof(leafElement{}))
	// cacheLine is the stride of touch: 64 bytes on amd64 and most arm64;
	// where a line is longer, touch reads some lines twice.
	cacheLine = 64
	// mostLevels bounds a descent: bbolt's trees are balanced, so a
	// deeper one is a damaged file whose branches loop.
	mostLevels = 32
)

// treePages is a view of the pages of an open bbolt file, as bbolt maps
// it. The file is opened read-only and never remapped, and bbolt unmaps it
// only once every transaction is closed: the view is valid while the
// transaction it was taken in is open.
type treePages struct {
	base     unsafe.Pointer // the file's first byte
	pages    uint64         // in the file, as its transaction sees it
	pageSize int
}

func treePagesOf(db *bolt.DB, tx *bolt.Tx) treePages {
	info := db.Info() // Data is the address of bbolt's mapping
	return treePages{
		base:     *(*unsafe.Pointer)(unsafe.Pointer(&info.Data)),
		pages:    uint64(tx.Size()) / uint64(info.PageSize),
		pageSize: info.PageSize,
	}
}

// page returns the bytes of page id with its overflow, or nil unless it
// is a branch or leaf page that lies in the file and names itself.
func (t treePages) page(id uint64) []byte {
	if id == 0 || id >= t.pages {
		return nil
	}
	at := unsafe.Add(t.base, uintptr(id)*uintptr(t.pageSize))
	h := (*pageHeader)(at)
	if h.id != id || (h.flags != branchPageFlag && h.flags != leafPageFlag) || uint64(h.overflow) >= t.pages-id {
		return nil
	}
	n := (1 + int(h.overflow)) * t.pageSize
	if pageHeaderSize+int(h.count)*elementSize > n {
		return nil
	}
	return unsafe.Slice((*byte)(at), n)
}

// findAll sets vals[i] to the value of keys[i] in the tree whose root is
// page root, or to nil where the tree has no such key or keys[i] is nil,
// descending the keys a level at a time; at is scratch, as long as keys.
// It reports false, vals then undefined, when a page is not as bbolt
// writes it.
func (t treePages) findAll(root uint64, keys, vals [][]byte, at []uint64) bool {
	left := 0
	for i, key := range keys {
		vals[i], at[i] = nil, 0
		if key != nil {
			at[i], left = root, left+1
		}
	}
	for level := 0; left > 0; level++ {
		if level == mostLevels {
			return false
		}
		for i, key := range keys {
			if at[i] == 0 {
				continue
			}
			page := t.page(at[i])
			if page == nil {
				return false
			}
			next, val, ok := step(page, key)
			if !ok {
				return false
			}
			if at[i] = next; next == 0 {
				vals[i], left = val, left-1
			}
		}
		t.touch(at)
	}
	return true
}

// step searches one page for key, as bbolt's cursor does: in a branch the
// last child whose first key is at most key (the first child if none is),
// in a leaf the element of key itself. It returns the child, or 0 and the
// key's value (nil if the leaf has no such key); ok is false when the page
// is not as bbolt writes it.
func step(page, key []byte) (child uint64, val []byte, ok bool) {
	h := (*pageHeader)(unsafe.Pointer(&page[0]))
	branch := h.flags == branchPageFlag
	lo, hi := 0, int(h.count)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		k, _, ok := element(page, m)
		if !ok {
			return 0, nil, false
		}
		if c := bytes.Compare(k, key); c < 0 || branch && c == 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if branch {
		// lo is the first child whose key is greater than key.
		e := (*branchElement)(unsafe.Pointer(&page[pageHeaderSize+max(lo-1, 0)*elementSize]))
		if h.count == 0 || e.child == 0 {
			return 0, nil, false
		}
		return e.child, nil, true
	}
	if lo == int(h.count) {
		return 0, nil, true
	}
	k, v, ok := element(page, lo)
	switch {
	case !ok || (*leafElement)(unsafe.Pointer(&page[pageHeaderSize+lo*elementSize])).flags != 0:
		return 0, nil, false // a bucket where a card should be
	case !bytes.Equal(k, key):
		return 0, nil, true
	}
	return 0, v, true
}

// element returns the key and, in a leaf, the value of element i of page,
// with ok false if they do not lie in the page.
func element(page []byte, i int) (key, val []byte, ok bool) {
	at := pageHeaderSize + i*elementSize
	var pos, ksize, vsize uint64
	if (*pageHeader)(unsafe.Pointer(&page[0])).flags == branchPageFlag {
		e := (*branchElement)(unsafe.Pointer(&page[at]))
		pos, ksize = uint64(e.pos), uint64(e.ksize)
	} else {
		e := (*leafElement)(unsafe.Pointer(&page[at]))
		pos, ksize, vsize = uint64(e.pos), uint64(e.ksize), uint64(e.vsize)
	}
	lo := uint64(at) + pos
	if lo+ksize+vsize > uint64(len(page)) {
		return nil, nil, false
	}
	k := page[lo : lo+ksize : lo+ksize]
	v := page[lo+ksize : lo+ksize+vsize : lo+ksize+vsize]
	return k, v, true
}

// touched keeps what touch reads, so that the reads are not left out.
var touched atomic.Uint32

// touch reads a byte of every cache line of the first page of each id
// that lies in the file, back to back (see the top of this file). An id
// that repeats the one before is read once: the upper levels are shared.
func (t treePages) touch(ids []uint64) {
	var sum byte
	last := uint64(0)
	for _, id := range ids {
		if id == 0 || id == last || id >= t.pages {
			continue
		}
		last = id
		page := unsafe.Slice((*byte)(unsafe.Add(t.base, uintptr(id)*uintptr(t.pageSize))), t.pageSize)
		for l := 0; l < len(page); l += cacheLine {
			sum += page[l]
		}
	}
	touched.Store(uint32(sum))
}
