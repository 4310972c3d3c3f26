package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

func TestWriteCore(t *testing.T) {
	path := filepath.Join(t.TempDir(), "core.json")
	c, err := writeCore(path, 500, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.cards) != 500 {
		t.Fatalf("%d cards read back, want 500", len(c.cards))
	}
	// Each set's count against the snapshot itself, decoded whole: the
	// generator writes every card its sets count.
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var snap struct {
		Sets []struct {
			ID        string `json:"id"`
			CardCount int    `json:"cardCount"`
		} `json:"sets"`
	}
	if err := json.Unmarshal(raw, &snap); err != nil {
		t.Fatal(err)
	}
	if len(snap.Sets) != len(c.sets) {
		t.Fatalf("%d sets read back, the snapshot has %d", len(c.sets), len(snap.Sets))
	}
	for i, s := range snap.Sets {
		if c.sets[i].id != s.ID || c.sets[i].cards != s.CardCount {
			t.Errorf("set %d: %s with %d cards, the snapshot says %s with %d", i, c.sets[i].id, c.sets[i].cards, s.ID, s.CardCount)
		}
	}
}
