package build

import (
	"strings"
	"testing"
	"unsafe"

	"github.com/catalogd/catalogd/catalog"
)

// The cache of names' search texts keeps copies. A name that folds to a part of
// itself (already folded, not plain ASCII, with a space around it) was
// cached as that part: in the importer, a name is a part of the record's
// whole text, which the cache then kept, uncounted.
func TestFoldCacheKeepsCopies(t *testing.T) {
	for _, name := range []string{"皮卡丘 ", " ピカチュウ", "pikachu", "Pikachu", "pikachu "} {
		record := name + strings.Repeat("x", 1<<20) // the rest of the record's text
		w := &Writer{folded: map[string]catalog.IndexText{}}
		w.searchText(record[:len(name)], "ja")
		start := uintptr(unsafe.Pointer(unsafe.StringData(record)))
		for k, v := range w.folded {
			for _, s := range []string{k, v.Text} {
				if p := uintptr(unsafe.Pointer(unsafe.StringData(s))); p >= start && p < start+uintptr(len(record)) {
					t.Errorf("fold of %q: the cache keeps %q, a part of the record's text", name, s)
				}
			}
		}
	}
}
