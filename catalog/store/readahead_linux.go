package store

import (
	"syscall"
	"unsafe"
)

// bbolt maps the file for random reads (MADV_RANDOM): the kernel reads
// the one page a fault needs, which suits the descents of a tree. A walk
// along a long list is not one: its blocks lie in pages in a row, and
// read a page a fault from a cold file they cost a read from disk each
// (docs/BENCHMARKS.md, "The cards of a near word", cold). So once a walk
// has loaded readAheadAfter blocks in order, each the next, the kernel is
// asked (MADV_WILLNEED) to read the readAheadBytes from the block's page
// on, and again once the walk passes them. A walk of a few blocks, which
// most searches are, asks for nothing.
const (
	readAheadBytes = 256 << 10
	readAheadAfter = 8
)

// readAhead is told of each block of the list loaded as the next of the
// one before.
func (l *storedList) readAhead(block []byte) {
	if l.inOrder++; l.inOrder < readAheadAfter || len(block) == 0 {
		return
	}
	p := unsafe.Pointer(unsafe.SliceData(block))
	at := uintptr(p)
	if at >= l.readFrom && at+uintptr(len(block)) <= l.readTo {
		return
	}
	// The page's start is in the mapping, as the block is; a range past
	// its end is refused (ENOMEM) after the part within is read, and a
	// refusal only leaves the reads to the faults.
	start := unsafe.Add(p, -int(at%uintptr(syscall.Getpagesize())))
	l.readFrom = uintptr(start)
	l.readTo = l.readFrom + readAheadBytes
	_ = syscall.Madvise(unsafe.Slice((*byte)(start), readAheadBytes), syscall.MADV_WILLNEED)
}
