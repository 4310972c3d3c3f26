package auth

import (
	"testing"
	"time"
)

func TestTokenCache(t *testing.T) {
	now := time.Unix(1_900_000_000, 0)
	key := func(i int) tokenKey { return hashToken(string(rune(i))) }
	p := Principal{ClientID: "c"}

	t.Run("Lifetime", func(t *testing.T) {
		c := newTokenCache(10)
		c.put(key(1), p, now.Add(time.Minute), now)
		if _, _, ok := c.get(key(1), now.Add(59*time.Second)); !ok {
			t.Error("miss before until")
		}
		if _, _, ok := c.get(key(1), now.Add(time.Minute)); ok {
			t.Error("hit at until")
		}
		if _, _, ok := c.get(key(2), now); ok {
			t.Error("hit on an unknown key")
		}
	})

	t.Run("BoundedWhenFullOfLiveEntries", func(t *testing.T) {
		c := newTokenCache(100)
		for i := range 1000 {
			c.put(key(i), p, now.Add(time.Hour), now)
			if n := c.len(); n > 100 {
				t.Fatalf("after %d inserts the cache holds %d entries, max 100", i+1, n)
			}
		}
		if _, _, ok := c.get(key(999), now); !ok {
			t.Error("the newest entry was evicted")
		}
	})

	t.Run("StaleEntriesGoFirst", func(t *testing.T) {
		c := newTokenCache(100)
		for i := range 50 {
			c.put(key(i), p, now.Add(time.Hour), now)
		}
		for i := 50; i < 100; i++ {
			c.put(key(i), p, now.Add(time.Second), now)
		}
		later := now.Add(time.Minute)
		c.put(key(100), p, later.Add(time.Hour), later)
		if n := c.len(); n != 51 {
			t.Fatalf("cache holds %d entries after evicting 50 stale ones, want 51", n)
		}
		for i := range 50 {
			if _, _, ok := c.get(key(i), later); !ok {
				t.Fatalf("live entry %d evicted while stale ones were available", i)
			}
		}
	})

	t.Run("ReplaceDoesNotEvict", func(t *testing.T) {
		c := newTokenCache(2)
		c.put(key(1), p, now.Add(time.Hour), now)
		c.put(key(2), p, now.Add(time.Hour), now)
		c.put(key(2), p, now.Add(2*time.Hour), now)
		if n := c.len(); n != 2 {
			t.Fatalf("len = %d, want 2", n)
		}
	})
}

// len is how many verifications the cache holds.
func (c *tokenCache) len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.entries)
}
