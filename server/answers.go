package server

import (
	"sync"
	"sync/atomic"

	"github.com/catalogd/catalogd/catalog"
	"github.com/prometheus/client_golang/prometheus"
)

// answerCache keeps recent 200 answers of the catalogue being served. A
// catalogue generation never changes, so an answer stays right for as long
// as its catalogue is served and needs no expiry: the cache belongs to one
// catalogue and is dropped whole when another replaces it. It is bounded in
// bytes; when an answer would pass the bound, everything cached is dropped
// and the cache fills again with what is asked for next, which keeps the
// bookkeeping to a map lookup and costs little when traffic has hot spots
// (popular cards, first pages, common names), as partner traffic does.
type answerCache struct {
	max     int64
	live    *catalog.Live // whose current catalogue alone may start a set
	hits    prometheus.Counter
	misses  prometheus.Counter
	current atomic.Pointer[answerSet]
}

// answerSet is the cache of one catalogue, known by its generation: a
// catalogue replaced and closed is not kept reachable through its cache.
type answerSet struct {
	generation string
	max        int64
	mu         sync.RWMutex
	answers    map[string]*cachedAnswer
	bytes      int64
}

// cachedAnswer is a body and its validators, neither ever modified, and
// its compressed representation once a client has asked for it.
type cachedAnswer struct {
	set   *answerSet
	key   string
	valid validators
	body  []byte
	gzip  atomic.Pointer[encodedAnswer]
}

// gzipped returns a's compressed representation, compressing it on the
// first call and counting it in a's set. Two first calls at once may both
// compress, to the same bytes, and one result is kept.
func (a *cachedAnswer) gzipped() *encodedAnswer {
	if z := a.gzip.Load(); z != nil {
		return z
	}
	z := encodeGzip(a.valid.tag(), a.body)
	if !a.gzip.CompareAndSwap(nil, z) {
		return a.gzip.Load()
	}
	a.set.grew(a, len(z.body)+len(z.etag[0]))
	return z
}

// answerOverhead approximates the bytes an entry costs beyond its key,
// tag and body: the map slot, the entry and the slice headers.
const answerOverhead = 96

// newAnswerCache returns a cache of at most max bytes, or nil when max is
// zero or less: a nil cache caches nothing.
func newAnswerCache(max int64, live *catalog.Live, m *Metrics) *answerCache {
	if max <= 0 {
		return nil
	}
	return &answerCache{max: max, live: live, hits: m.answerCache.WithLabelValues("hit"), misses: m.answerCache.WithLabelValues("miss")}
}

// set returns the cache of db, starting a new one when db is the
// catalogue being served and the cache was filled from another; nil when db
// is not the one being served: a request still answering from a replaced
// catalogue caches nothing, rather than put its set in place of the
// current one's.
func (c *answerCache) set(db *catalog.DB) *answerSet {
	if cur := c.current.Load(); cur != nil && cur.generation == db.Generation() {
		return cur
	}
	if db != c.live.Current() {
		return nil
	}
	fresh := &answerSet{generation: db.Generation(), max: c.max, answers: make(map[string]*cachedAnswer)}
	for {
		cur := c.current.Load()
		if cur != nil && cur.generation == fresh.generation {
			return cur
		}
		if c.current.CompareAndSwap(cur, fresh) {
			return fresh
		}
	}
}

// get returns the answer to the request key, if cached for db; nil when not.
func (c *answerCache) get(db *catalog.DB, key []byte) *cachedAnswer {
	if c == nil {
		return nil
	}
	set := c.set(db)
	if set == nil {
		return nil
	}
	set.mu.RLock()
	a := set.answers[string(key)]
	set.mu.RUnlock()
	if a != nil {
		c.hits.Inc()
	} else {
		c.misses.Inc()
	}
	return a
}

// put caches a copy of body, with its validators, as the answer to key
// from db, and returns the cached answer; nil when it is not cached.
func (c *answerCache) put(db *catalog.DB, key []byte, valid *validators, body []byte) *cachedAnswer {
	if c == nil {
		return nil
	}
	size := answerSize(len(key), valid.tag(), body)
	if size > c.max/16 {
		return nil // one answer may not push out everything else
	}
	set := c.set(db)
	if set == nil {
		return nil
	}
	k := string(key)
	a := &cachedAnswer{set: set, key: k, valid: *valid, body: append([]byte(nil), body...)}
	set.mu.Lock()
	defer set.mu.Unlock()
	if cached, ok := set.answers[k]; ok {
		return cached
	}
	if set.bytes+size > set.max {
		clear(set.answers)
		set.bytes = 0
	}
	set.answers[k] = a
	set.bytes += size
	return a
}

// grew counts the n bytes of a's compressed body. When that passes the
// bound, everything else cached is dropped, as in put, and a kept: it is
// being asked for.
func (set *answerSet) grew(a *cachedAnswer, n int) {
	set.mu.Lock()
	defer set.mu.Unlock()
	if set.answers[a.key] != a {
		return // dropped since it was found
	}
	if set.bytes+int64(n) <= set.max {
		set.bytes += int64(n)
		return
	}
	clear(set.answers)
	set.answers[a.key] = a
	set.bytes = answerSize(len(a.key), a.valid.tag(), a.body) + int64(n)
}

// answerSize approximates the bytes a cached plain answer takes.
func answerSize(keyLen int, tag string, body []byte) int64 {
	return int64(keyLen+len(tag)+len(body)) + answerOverhead
}

// answerKey appends the cache key of r's answer: its escaped path (which
// dispatch leaves in r.URL.Path) and raw query, which is also what its ETag
// is made from.
func answerKey(b []byte, escapedPath, rawQuery string) []byte {
	b = append(b, escapedPath...)
	b = append(b, '?')
	return append(b, rawQuery...)
}
