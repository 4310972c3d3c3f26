package server

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"testing"
)

// The compressed bytes of the same plain ones, pinned: a strong ETag
// promises the same bytes under the same tag, and the compressed export's
// ranges are resumed across replicas (docs/CONTRACT.md, Export). A new
// compression library, level or chunk size that changes them fails this
// test; then gzipETagSuffix changes too (-gzip2), so that two versions
// of catalogd never give different bytes under one tag, and the hashes
// below are updated.
const (
	pinnedAnswerGzip = "0e0331d3"
	pinnedExportGzip = "8137f5a7"
)

func TestCompressedBytesArePinned(t *testing.T) {
	var plain bytes.Buffer
	for i := range 30000 { // 1.4 MB: three chunks of the export
		fmt.Fprintf(&plain, `{"id":"jp-SV%d-%03d","name":"ピカチュウ","number":"%03d"},`, i%40, i%300, i%300)
	}
	answer := sha256.Sum256(gzipBytes(plain.Bytes()[:20000]))
	stream := &gzipStream{plain: bytes.NewReader(plain.Bytes()), size: int64(plain.Len())}
	h := sha256.New()
	if _, err := io.Copy(h, stream); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ what, got, want string }{
		{"a compressed answer", hex.EncodeToString(answer[:4]), pinnedAnswerGzip},
		{"the compressed export", hex.EncodeToString(h.Sum(nil)[:4]), pinnedExportGzip},
	} {
		if c.got != c.want {
			t.Errorf("%s is %s, pinned at %s: the compressed bytes changed; change gzipETagSuffix, then the hash", c.what, c.got, c.want)
		}
	}
}
