package server

import (
	"bytes"
	"net/http/httptest"
	"testing"
)

// writesRecorder records the length of each write.
type writesRecorder struct {
	*httptest.ResponseRecorder
	writes []int
}

func (w *writesRecorder) Write(b []byte) (int, error) {
	w.writes = append(w.writes, len(b))
	return w.ResponseRecorder.Write(b)
}

// TestWriteBodyInPieces: over HTTP/2 an answer is written in pieces no
// longer than h2Piece, which are the answer; otherwise a part at a time.
func TestWriteBodyInPieces(t *testing.T) {
	parts := [][]byte{bytes.Repeat([]byte("a"), 5000), []byte("b"), bytes.Repeat([]byte("c"), h2Piece)}
	whole := bytes.Join(parts, nil)
	for _, c := range []struct {
		inPieces bool
		writes   int
	}{{true, 5}, {false, 3}} {
		w := &writesRecorder{ResponseRecorder: httptest.NewRecorder()}
		writeBody(w, len(whole), c.inPieces, parts...)
		if !bytes.Equal(w.Body.Bytes(), whole) || len(w.writes) != c.writes {
			t.Errorf("in pieces %v: %d writes, same bytes %v; want %d", c.inPieces, len(w.writes), bytes.Equal(w.Body.Bytes(), whole), c.writes)
		}
		for _, n := range w.writes {
			if c.inPieces && n > h2Piece {
				t.Errorf("a write of %d bytes over HTTP/2", n)
			}
		}
	}
}
