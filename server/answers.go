package server

import (
	"hash/maphash"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/catalogd/catalogd/catalog/store"
	"github.com/prometheus/client_golang/prometheus"
)

// answerCache keeps recent 200 answers of the routes handleOp is told to
// keep (routes.go: listSetCards, search, autocompleteNames and listChanges)
// from the catalogue being served, and their compressed bodies
// once a client has asked for one. It makes a repeated page of cards or
// search many times cheaper (hot spots); getCard, which it barely sped up,
// does not use it. docs/BENCHMARKS.md, "Caches", has the figures. A
// catalogue generation never changes, so an answer stays right for as long
// as its catalogue is served and needs no expiry: the cache belongs to one
// catalogue and is dropped whole when another replaces it. It is bounded in
// bytes; when an answer would pass the bound, everything cached is dropped
// and the cache fills again with what is asked for next, which keeps the
// bookkeeping to a map lookup and costs little when traffic has hot spots
// (popular cards, first pages, common names), as partner traffic does.
//
// A long tail (a mirror job reading every page, a search box's distinct
// queries) asks for most answers once, or again only after many others: by
// then they would be gone. Keeping each would cost a copy and, once the
// cache is full, drop the answers that are asked for often. So once the
// cache has filled, an answer is kept only when it is asked for a second
// time while still remembered as asked (see askedLately).
type answerCache struct {
	max    int64
	live   *store.Live // only its current catalogue's requests use the cache
	hits   prometheus.Counter
	misses prometheus.Counter
}

// answerSet is the cache of one catalogue, kept with it (Server.state).
type answerSet struct {
	max     int64
	mu      sync.RWMutex
	answers map[string]*cachedAnswer
	bytes   int64
	filled  atomic.Bool // the bound has been reached: answers asked once are no longer kept
	asked   *askedLately
}

// cachedAnswer is a body and its validators, neither ever modified, and
// its compressed body once a client has asked for it.
type cachedAnswer struct {
	set   *answerSet
	key   string
	valid validators
	body  []byte
	gzip  atomic.Pointer[[]byte]
}

// write writes a as the answer to r.
func (a *cachedAnswer) write(w http.ResponseWriter, r *http.Request) {
	writeAnswer(w, r, &a.valid, a.gzipped, a.body)
}

// gzipped returns a's compressed body, compressing it on the first call
// and counting it in a's set. Two first calls at once may both compress,
// to the same bytes, and one result is kept.
func (a *cachedAnswer) gzipped() []byte {
	if z := a.gzip.Load(); z != nil {
		return *z
	}
	z := gzipBytes(a.body)
	if !a.gzip.CompareAndSwap(nil, &z) {
		return *a.gzip.Load()
	}
	a.set.grew(a, len(z)+len(a.valid.tag())+len(gzipETagSuffix))
	return z
}

// cached returns the cached answer to r from db, nil when there is none.
// A cached answer was built for the same path and query, so its parameters
// were checked then: a hit checks nothing again.
func (s *Server) cached(db *store.DB, r *http.Request) *cachedAnswer {
	if s.answers == nil {
		return nil
	}
	var kb [256]byte // on the stack for all but outsized requests
	return s.answers.get(db, s.state(db).answers, answerKey(kb[:0], r))
}

// writeAndKeep writes body as the answer to r from db, and keeps it in
// the answer cache when it can.
func (s *Server) writeAndKeep(w http.ResponseWriter, r *http.Request, db *store.DB, body []byte) {
	var kb [256]byte // on the stack for all but outsized requests
	key := answerKey(kb[:0], r)
	valid := validatorsOf(db, key)
	if s.answers != nil {
		if a := s.answers.put(db, s.state(db).answers, key, valid, body); a != nil {
			a.write(w, r)
			return
		}
	}
	writeAnswer(w, r, valid, nil, body)
}

// answerOverhead approximates the bytes an entry costs beyond its key,
// tag and body: the map slot, the entry and the slice headers.
const answerOverhead = 96

// newAnswerCache returns a cache of at most max bytes, or nil when max is
// zero or less: a nil cache caches nothing.
func newAnswerCache(max int64, live *store.Live, m *Metrics) *answerCache {
	if max <= 0 {
		return nil
	}
	return &answerCache{max: max, live: live, hits: m.answerCache.WithLabelValues("hit"), misses: m.answerCache.WithLabelValues("miss")}
}

// newSet returns an empty cache for one catalogue; nil when there is no
// answer cache.
func (c *answerCache) newSet() *answerSet {
	if c == nil {
		return nil
	}
	return &answerSet{max: c.max, answers: make(map[string]*cachedAnswer), asked: newAskedLately(c.max)}
}

// serves reports whether requests on db use the cache: a request still
// answering from a replaced catalogue neither finds nor caches anything,
// so a replaced catalogue's cache stops growing.
func (c *answerCache) serves(db *store.DB, set *answerSet) bool {
	return set != nil && db == c.live.Current()
}

// get returns the answer to the request key, if cached in set, db's cache;
// nil when not.
func (c *answerCache) get(db *store.DB, set *answerSet, key []byte) *cachedAnswer {
	if !c.serves(db, set) {
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
// from db in set, db's cache, and returns the cached answer; nil when it is
// not cached.
func (c *answerCache) put(db *store.DB, set *answerSet, key []byte, valid *validators, body []byte) *cachedAnswer {
	if !c.serves(db, set) {
		return nil
	}
	size := answerSize(len(key), valid.tag(), body)
	if size > c.max/16 {
		return nil // one answer may not push out everything else
	}
	if set.filled.Load() && !set.asked.askedBefore(key, size) {
		return nil // asked once, as far as the cache can tell
	}
	k := string(key)
	a := &cachedAnswer{set: set, key: k, valid: *valid, body: append([]byte(nil), body...)}
	set.mu.Lock()
	defer set.mu.Unlock()
	if cached, ok := set.answers[k]; ok {
		return cached
	}
	if set.bytes+size > set.max {
		set.filled.Store(true)
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
	set.filled.Store(true)
	clear(set.answers)
	set.answers[a.key] = a
	set.bytes = answerSize(len(a.key), a.valid.tag(), a.body) + int64(n)
}

// answerSize approximates the bytes a cached plain answer takes.
func answerSize(keyLen int, tag string, body []byte) int64 {
	return int64(keyLen+len(tag)+len(body)) + answerOverhead
}

// askedLately remembers the answers asked for and not kept, for up to as
// many bytes of other such answers as the cache holds: an answer asked for
// again later than that would have been dropped from the cache before it
// came back. It is a Bloom filter of 16 bits a key, 2 of them set by the
// key's hash, emptied whole when that many bytes, or as many keys as its
// bits are sized for, have been remembered, so a key remembered just before
// is forgotten sooner. When full it takes an answer asked for once as asked
// before about one time in seventy, which costs one copy.
type askedLately struct {
	seed     maphash.Seed
	bits     []atomic.Uint64
	maxBytes int64
	maxKeys  int64
	bytes    atomic.Int64 // remembered since the filter was last emptied
	keys     atomic.Int64
	emptying atomic.Bool
}

const (
	// bytesPerKey is the answer size the filter is sized for, one key for
	// each KiB of the cache's bound: smaller answers fill it sooner.
	bytesPerKey = 1 << 10
	// mostKeys bounds the filter at 2 MiB, for caches of a GiB or more,
	// whose answers are then remembered for fewer bytes than they hold.
	mostKeys   = 1 << 20
	bitsPerKey = 16
)

func newAskedLately(bound int64) *askedLately {
	keys := min(max(64, bound/bytesPerKey), mostKeys)
	return &askedLately{seed: maphash.MakeSeed(), bits: make([]atomic.Uint64, keys*bitsPerKey/64), maxBytes: bound, maxKeys: keys}
}

// askedBefore reports whether key, an answer of size bytes, is remembered
// as asked, and remembers it when not. Requests at once may set bits while
// the filter is emptied: at worst a key is forgotten early.
func (a *askedLately) askedBefore(key []byte, size int64) bool {
	h := maphash.Bytes(a.seed, key)
	n := uint64(len(a.bits)) * 64
	b1, b2 := h%n, (h>>32)%n
	w1, m1 := &a.bits[b1/64], uint64(1)<<(b1%64)
	w2, m2 := &a.bits[b2/64], uint64(1)<<(b2%64)
	if w1.Load()&m1 != 0 && w2.Load()&m2 != 0 {
		return true
	}
	full := a.bytes.Add(size) > a.maxBytes || a.keys.Add(1) > a.maxKeys
	if full && a.emptying.CompareAndSwap(false, true) {
		for i := range a.bits {
			a.bits[i].Store(0)
		}
		a.bytes.Store(size)
		a.keys.Store(1)
		a.emptying.Store(false)
	}
	w1.Or(m1)
	w2.Or(m2)
	return false
}
