package auth

import (
	"sync"
	"time"
)

const (
	// defaultCacheSize bounds memory: an entry is a few hundred bytes, so a
	// full cache stays around a few MiB even on the smallest VM.
	defaultCacheSize = 10_000
	// cacheTTL is how long a verification is trusted. It bounds how late a
	// key removed from the JWKS stops being honoured for tokens already seen.
	cacheTTL = 5 * time.Minute
)

// tokenKey is the SHA-256 of a token: the cache never holds a usable token.
type tokenKey [32]byte

type cacheEntry struct {
	principal Principal
	// until is min(exp, verified+cacheTTL); never later than exp.
	until time.Time
}

// tokenCache maps verified tokens to their principal. Reads take only the
// read lock so that concurrent requests with cached tokens do not contend.
type tokenCache struct {
	mu      sync.RWMutex
	entries map[tokenKey]cacheEntry
	max     int
}

func newTokenCache(max int) *tokenCache {
	return &tokenCache{entries: make(map[tokenKey]cacheEntry), max: max}
}

// get returns the principal of a token verified before, and until when
// that verification holds, if it still holds at now.
func (c *tokenCache) get(k tokenKey, now time.Time) (Principal, time.Time, bool) {
	c.mu.RLock()
	e, ok := c.entries[k]
	c.mu.RUnlock()
	if !ok || !now.Before(e.until) {
		return Principal{}, time.Time{}, false
	}
	return e.principal, e.until, true
}

func (c *tokenCache) put(k tokenKey, p Principal, until, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.entries[k]; !ok && len(c.entries) >= c.max {
		c.evict(now)
	}
	c.entries[k] = cacheEntry{principal: p, until: until}
}

// evict drops stale entries and, if that is not enough, arbitrary live ones
// (map iteration order is unspecified, close enough to random) until a tenth
// of the capacity is free. Freeing a tenth at once keeps the cost of this
// full scan amortised over many inserts. Losing a live entry only costs one
// more signature check.
func (c *tokenCache) evict(now time.Time) {
	for k, e := range c.entries {
		if !now.Before(e.until) {
			delete(c.entries, k)
		}
	}
	target := c.max - c.max/10
	if target >= c.max {
		target = c.max - 1
	}
	for k := range c.entries {
		if len(c.entries) <= target {
			break
		}
		delete(c.entries, k)
	}
}
