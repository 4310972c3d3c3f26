package store

import (
	"os"
	"syscall"
	"testing"
	"unsafe"
)

// TestReadAhead walks blocks along a mapped region as a list's walk loads
// them: the kernel is asked for nothing until readAheadAfter blocks came
// in order, then for readAheadBytes from the page that holds the block,
// again once the walk passes them.
func TestReadAhead(t *testing.T) {
	page := os.Getpagesize()
	region, err := syscall.Mmap(-1, 0, 4*readAheadBytes, syscall.PROT_READ, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(region)
	var l storedList
	asked := 0
	const blockLen = 2000
	for at := 100; at+blockLen <= len(region); at += blockLen {
		block := region[at : at+blockLen]
		from := l.readFrom
		l.readAhead(block)
		addr := uintptr(unsafe.Pointer(&block[0]))
		if l.inOrder < readAheadAfter {
			if l.readTo != 0 {
				t.Fatalf("block %d in order: the kernel was asked to read ahead", l.inOrder)
			}
			continue
		}
		if l.readFrom%uintptr(page) != 0 || l.readFrom > addr || addr+blockLen > l.readTo || l.readTo != l.readFrom+readAheadBytes {
			t.Fatalf("a block at %#x read ahead as [%#x, %#x)", addr, l.readFrom, l.readTo)
		}
		if l.readFrom != from {
			asked++
		}
	}
	// From the eighth block to the end of four times readAheadBytes.
	if asked < 3 || asked > 5 {
		t.Errorf("asked %d times to read ahead over %d bytes", asked, len(region))
	}
}
