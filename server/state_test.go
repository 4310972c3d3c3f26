package server

import (
	"sync"
	"testing"
)

// TestStateFollowsTheCatalogue: the server keeps one state for the
// catalogue being served, made once even by concurrent first requests; a
// catalogue swapped in gets its own, and a request still on the replaced
// one gets a state nothing keeps.
func TestStateFollowsTheCatalogue(t *testing.T) {
	f := newFixture(t)
	first := f.live.Current()
	got := make([]*generation, 8)
	var wg sync.WaitGroup
	for i := range got {
		wg.Go(func() { got[i] = f.srv.state(first) })
	}
	wg.Wait()
	for i, g := range got {
		if g != got[0] {
			t.Fatalf("concurrent first call %d got another state", i)
		}
	}
	if f.srv.state(first) != got[0] {
		t.Fatal("a later call got another state")
	}

	f.live.Swap(importSampleDB(t))
	second := f.live.Current()
	now := f.srv.state(second)
	if now == got[0] || now.db != second {
		t.Fatal("the catalogue swapped in shares the replaced one's state")
	}
	if old := f.srv.state(first); old == got[0] || old == now {
		t.Fatal("a request on the replaced catalogue got a kept state")
	}
	if f.srv.state(second) != now {
		t.Fatal("the replaced catalogue's request displaced the current state")
	}
}
