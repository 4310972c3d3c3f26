package server

import (
	"bytes"
	"testing"
)

// TestInPieces: the pieces an answer is written in over HTTP/2 are the
// answer, none longer than h2Piece.
func TestInPieces(t *testing.T) {
	parts := [][]byte{bytes.Repeat([]byte("a"), 5000), []byte("b"), bytes.Repeat([]byte("c"), h2Piece)}
	pieces := inPieces(parts)
	if !bytes.Equal(bytes.Join(pieces, nil), bytes.Join(parts, nil)) || len(pieces) != 5 {
		t.Fatalf("%d pieces, same bytes %v", len(pieces), bytes.Equal(bytes.Join(pieces, nil), bytes.Join(parts, nil)))
	}
	for _, p := range pieces {
		if len(p) > h2Piece {
			t.Errorf("a piece of %d bytes", len(p))
		}
	}
}
