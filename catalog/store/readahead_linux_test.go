package store

import (
	"fmt"
	"os"
	"syscall"
	"testing"
	"unsafe"

	"github.com/catalogd/catalogd/catalog"
	"github.com/catalogd/catalogd/catalog/store/build"
)

// watchReadAhead records the ranges the kernel is asked to read ahead
// until the test ends.
func watchReadAhead(t *testing.T) *[][2]uintptr {
	var asked [][2]uintptr
	was := willNeed
	willNeed = func(p unsafe.Pointer, n uintptr) {
		asked = append(asked, [2]uintptr{uintptr(p), uintptr(p) + n})
		was(p, n)
	}
	t.Cleanup(func() { willNeed = was })
	return &asked
}

// TestReadAhead walks blocks along a mapped region as a list's walk loads
// them: the kernel is asked for nothing before the readAheadAfter'th
// block in order, then for readAheadFirst bytes from the page that holds
// the block, and once the walk passes them, for twice as many from the
// page of the block that did, up to readAheadMost.
func TestReadAhead(t *testing.T) {
	asked := watchReadAhead(t)
	page := uintptr(os.Getpagesize())
	region, err := syscall.Mmap(-1, 0, 4*readAheadMost, syscall.PROT_READ, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(region)
	var l storedList
	const blockLen = 2000
	for i, at := 1, 100; at+blockLen <= len(region); i, at = i+1, at+blockLen {
		block := region[at : at+blockLen]
		before := len(*asked)
		l.readAhead(block)
		addr := uintptr(unsafe.Pointer(&block[0]))
		if i < readAheadAfter {
			if len(*asked) > 0 {
				t.Fatalf("block %d in order: the kernel was asked to read ahead", i)
			}
			continue
		}
		last := (*asked)[len(*asked)-1]
		if last[0]%page != 0 || last[0] > addr || addr+blockLen > last[1] {
			t.Fatalf("block %d at %#x: the last range asked for is [%#x, %#x)", i, addr, last[0], last[1])
		}
		if len(*asked) == before {
			continue
		}
		want := uintptr(readAheadFirst)
		if len(*asked) > 1 {
			prev := (*asked)[len(*asked)-2]
			want = min(2*(prev[1]-prev[0]), readAheadMost)
		}
		if last[1]-last[0] != want {
			t.Fatalf("ask %d: %d bytes, want %d", len(*asked), last[1]-last[0], want)
		}
	}
	// 32, 64, 128, 256 and 512 KiB, then 512 KiB at a time to the end of
	// 2 MiB: about eight asks.
	if n := len(*asked); n < 6 || n > 9 {
		t.Errorf("asked %d times to read ahead over %d bytes", n, len(region))
	}
}

// TestReadAheadOnAWalk searches a term whose list is a dozen blocks of
// deltas, every one of its cards wanted: the walk reads them in order,
// asks the kernel to read ahead of the mapping, and finds every card.
func TestReadAheadOnAWalk(t *testing.T) {
	sets := []catalog.Set{{ID: "intl-W", Code: "W", Name: "Words", Zone: catalog.ZoneIntl}}
	var cards []catalog.Card
	want := 0
	for i := range 50_000 {
		c := card(fmt.Sprint(i), catalog.ZoneIntl, "W", "Words", fmt.Sprint(i))
		if i%33 == 0 { // too sparse for bitmaps: blocks of deltas
			c.Name += " zqxw"
			want++
		}
		cards = append(cards, *c)
	}
	db := openCatalogue(t, writeCatalogue(t, sets, cards, build.DefaultLimits(), nil))
	asked := watchReadAhead(t)
	got := 0
	if err := db.Search(SearchQuery{Q: "zqxw", Limit: want + 1}, func([]byte) { got++ }); err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Fatalf("found %d cards, want %d", got, want)
	}
	if len(*asked) == 0 {
		t.Fatalf("a walk of %d blocks in order asked for nothing to be read ahead", want/128)
	}
}
