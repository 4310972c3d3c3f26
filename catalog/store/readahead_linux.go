package store

import (
	"syscall"
	"unsafe"
)

// bbolt maps the file for random reads (MADV_RANDOM): the kernel reads
// the one page a fault needs, which suits the descents of a tree. A walk
// along a long list is not one: its blocks lie in pages in a row, and
// read a page a fault from a cold file they cost a read from disk each
// (docs/BENCHMARKS.md, "The cards of a near word", cold). So from the
// readAheadAfter'th block a walk loads in order, each the next of the
// one before, the kernel is asked (MADV_WILLNEED) to read ahead from the
// block's page on, and again once the walk passes what it asked for:
// first readAheadFirst bytes, then twice as many each time, up to
// readAheadMost, as the kernel's own read-ahead grows, so that a walk
// that soon stops has had little read for nothing. A walk of a few
// blocks, which most searches are, asks for nothing.
const (
	readAheadAfter = 8
	readAheadFirst = 32 << 10
	readAheadMost  = 512 << 10
)

// willNeed asks the kernel to read the n bytes of the file's mapping from
// p, a page's start. A range past the mapping's end is refused (ENOMEM)
// once the part within is read, and a refusal only leaves the reads to
// the faults; so the error is not looked at. Tests watch the calls.
var willNeed = func(p unsafe.Pointer, n uintptr) {
	_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, uintptr(p), n, syscall.MADV_WILLNEED)
}

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
	// The mapping starts at a page, so the block's page is in it.
	start := unsafe.Add(p, -int(at%uintptr(syscall.Getpagesize())))
	n := readAheadFirst
	if l.readTo > 0 {
		n = min(2*int(l.readTo-l.readFrom), readAheadMost)
	}
	l.readFrom = uintptr(start)
	l.readTo = l.readFrom + uintptr(n)
	willNeed(start, uintptr(n))
}
