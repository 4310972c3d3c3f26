package main

import (
	"path/filepath"
	"testing"
)

func TestWriteCore(t *testing.T) {
	c, err := writeCore(filepath.Join(t.TempDir(), "core.json"), 500, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.cards) != 500 {
		t.Fatalf("%d cards read back, want 500", len(c.cards))
	}
	n := 0
	for _, s := range c.sets {
		n += s.cards
	}
	if n != len(c.cards) {
		t.Fatalf("the sets hold %d cards, want %d", n, len(c.cards))
	}
}
