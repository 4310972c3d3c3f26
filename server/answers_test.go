package server

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/catalogd/catalogd/catalog/store"
	"github.com/catalogd/catalogd/data"
	"github.com/catalogd/catalogd/importer"
	dto "github.com/prometheus/client_model/go"
)

// cachedTargets are requests of the routes whose answers are cached;
// getCard's are not (docs/BENCHMARKS.md, "Caches").
var cachedTargets = []string{
	"/catalog/sets/SV1a/cards?pageSize=5&page=2",
	"/catalog/search?q=ar&limit=7",
}

// TestAnswerCacheGivesTheSameAnswers asks each cacheable route twice: the
// second answer comes from the cache, with the same bytes, headers and
// revalidation as the first.
func TestAnswerCacheGivesTheSameAnswers(t *testing.T) {
	f := newFixture(t)
	cacheHits := func() float64 {
		var m dto.Metric
		if err := f.srv.answers.hits.Write(&m); err != nil {
			t.Fatal(err)
		}
		return m.GetCounter().GetValue()
	}
	for _, target := range cachedTargets {
		hits := cacheHits()
		first := f.do(http.MethodGet, target, "Accept-Encoding", "identity")
		first.wantStatus(t, http.StatusOK)
		second := f.do(http.MethodGet, target, "Accept-Encoding", "identity")
		second.wantStatus(t, http.StatusOK)
		if now := cacheHits(); now != hits+1 {
			t.Fatalf("%s: %v cache hits after asking twice, want 1", target, now-hits)
		}
		if !bytes.Equal(first.body, second.body) {
			t.Errorf("%s: the cached body differs:\n%s\n%s", target, first.body, second.body)
		}
		for _, h := range []string{"ETag", "Content-Type", "Content-Length", "Cache-Control", GenerationHeader} {
			if first.header.Get(h) != second.header.Get(h) {
				t.Errorf("%s: %s %q, cached %q", target, h, first.header.Get(h), second.header.Get(h))
			}
		}
		nm := f.do(http.MethodGet, target, "If-None-Match", first.header.Get("ETag"), "Accept-Encoding", "identity")
		if nm.status != http.StatusNotModified {
			t.Errorf("%s: If-None-Match on a cached answer: %d, want 304", target, nm.status)
		}
		zipped := gzipGet(t, f, target)
		if zipped.status != http.StatusOK || !bytes.Equal(maybeGunzip(t, zipped), first.body) {
			t.Errorf("%s: a gzip request for a cached answer: %d", target, zipped.status)
		}
	}
	// Errors are never cached: a missing card is looked for each time.
	before := cacheHits()
	for range 2 {
		f.do(http.MethodGet, "/catalog/cards/no-such-card").wantStatus(t, http.StatusNotFound)
	}
	if hits := cacheHits(); hits != before {
		t.Errorf("a 404 was answered from the cache")
	}
}

func maybeGunzip(t *testing.T, r *response) []byte {
	t.Helper()
	if r.header.Get("Content-Encoding") == "gzip" {
		return gunzip(t, r.body)
	}
	return r.body
}

// TestAnswerCacheFollowsTheCatalogue swaps in a new import of the same
// snapshot: the answers must name the new generation at once.
func TestAnswerCacheFollowsTheCatalogue(t *testing.T) {
	f := newFixture(t)
	before := map[string]*response{}
	for _, target := range cachedTargets {
		f.do(http.MethodGet, target).wantStatus(t, http.StatusOK)
		before[target] = f.do(http.MethodGet, target)
	}

	db := importSampleDB(t, "testdata/odd.json")
	f.live.Swap(db)

	for _, target := range cachedTargets {
		after := f.do(http.MethodGet, target)
		after.wantStatus(t, http.StatusOK)
		old := before[target]
		if after.header.Get(GenerationHeader) != db.Generation() || after.header.Get("ETag") == old.header.Get("ETag") {
			t.Errorf("%s after the swap: generation %q ETag %q, want generation %q and a new tag (was %q)", target,
				after.header.Get(GenerationHeader), after.header.Get("ETag"), db.Generation(), old.header.Get("ETag"))
		}
		if !bytes.Equal(after.body, old.body) {
			t.Errorf("%s: the same snapshot gave another body", target)
		}
	}
}

// TestAnswerCacheKeepsTheNewCatalogue: after a swap, requests still
// answering from the old catalogue neither find the new one's answers nor
// put the old catalogue's cache back in its place.
func TestAnswerCacheKeepsTheNewCatalogue(t *testing.T) {
	f := newFixture(t)
	c := f.srv.answers
	key := []byte("/api/v1/catalog/cards/x?")
	other := []byte("/api/v1/catalog/cards/y?")
	// Requests that hold the first catalogue and then the second through
	// two swaps, as requests in flight across reloads do.
	first, releaseFirst := f.live.Acquire()
	defer releaseFirst()
	c.put(first, f.srv.state(first).answers, key, validatorsOf(first, key), []byte("first"))
	f.live.Swap(importSampleDB(t))
	second, releaseSecond := f.live.Acquire()
	defer releaseSecond()
	if a := c.put(second, f.srv.state(second).answers, key, validatorsOf(second, key), []byte("second")); a == nil {
		t.Fatal("the second catalogue's answer was not cached")
	}
	if a := c.get(first, f.srv.state(first).answers, key); a != nil {
		t.Errorf("a request on the first catalogue got %q", a.body)
	}
	if a := c.put(first, f.srv.state(first).answers, other, validatorsOf(first, other), []byte("first")); a != nil {
		t.Error("a request on the first catalogue cached an answer")
	}
	if a := c.get(second, f.srv.state(second).answers, key); a == nil || string(a.body) != "second" {
		t.Fatalf("after requests on the first catalogue, the second one's answer is %v", a)
	}

	f.live.Swap(importSampleDB(t))
	third := f.live.Current()
	if a := c.put(third, f.srv.state(third).answers, key, validatorsOf(third, key), []byte("third")); a == nil {
		t.Fatal("the third catalogue's answer was not cached")
	}
	// Stragglers on both replaced catalogues: neither caches, and neither
	// stops the catalogue being served from caching.
	for _, old := range []*store.DB{first, second} {
		if a := c.put(old, f.srv.state(old).answers, other, validatorsOf(old, other), []byte("old")); a != nil {
			t.Errorf("a request on a replaced catalogue cached %q", a.body)
		}
	}
	if a := c.put(third, f.srv.state(third).answers, other, validatorsOf(third, other), []byte("third")); a == nil {
		t.Fatal("after requests on replaced catalogues, the current one caches nothing")
	}
	if a := c.get(third, f.srv.state(third).answers, key); a == nil || string(a.body) != "third" {
		t.Fatalf("the third catalogue's first answer is %v", a)
	}
}

// importSampleDB imports the built-in sample, and more snapshots when
// given, into a new catalogue file: a catalogue other than the fixture's.
func importSampleDB(t *testing.T, more ...string) *store.DB {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "catalog.db")
	snapshot := filepath.Join(dir, data.SampleName)
	if err := os.WriteFile(snapshot, data.Sample(), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := importer.Import(context.Background(), importer.Config{DB: path, Inputs: append([]string{snapshot}, more...)}); err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// TestListSetsGzipFollowsTheCatalogue: the list of sets is compressed once
// per catalogue, so a new catalogue must get its own.
func TestListSetsGzipFollowsTheCatalogue(t *testing.T) {
	f := newFixture(t)
	before := gzipGet(t, f, "/catalog/sets")
	before.wantStatus(t, http.StatusOK)
	if !bytes.Contains(gunzip(t, before.body), []byte("変なID")) {
		t.Fatal("the fixture's catalogue has no set 変なID")
	}

	f.live.Swap(importSampleDB(t))

	plain := f.do(http.MethodGet, "/catalog/sets", "Accept-Encoding", "identity")
	after := gzipGet(t, f, "/catalog/sets")
	if after.header.Get("Content-Encoding") != "gzip" || !bytes.Equal(gunzip(t, after.body), plain.body) ||
		bytes.Contains(plain.body, []byte("変なID")) {
		t.Errorf("the compressed list of sets after the swap is not the new catalogue's (Content-Encoding %q)", after.header.Get("Content-Encoding"))
	}
}

// TestAnswerCacheBound fills a small cache past its bound and checks it
// never holds more than the bound, and that a cache of 0 bytes is none.
func TestAnswerCacheBound(t *testing.T) {
	const max = 64 << 10
	f := newFixtureWith(t, func(c *Config) { c.AnswerCache = max })
	held := func() int64 {
		set := f.srv.state(f.live.Current()).answers
		set.mu.RLock()
		defer set.mu.RUnlock()
		return set.bytes
	}
	// A compressed answer counts too. Its plain body is over gzipMinSize
	// and under a sixteenth of the bound, the most one answer may take.
	big := "/catalog/sets/SV1a/cards?pageSize=8"
	f.do(http.MethodGet, big, "Accept-Encoding", "identity").wantStatus(t, http.StatusOK)
	before := held()
	zipped := gzipGet(t, f, big)
	if zipped.header.Get("Content-Encoding") != "gzip" || held() < before+int64(len(zipped.body)) {
		t.Fatalf("a compressed answer (%s, %d bytes) took the cache from %d to %d bytes", zipped.header.Get("Content-Encoding"), len(zipped.body), before, held())
	}

	for i := range 300 {
		f.do(http.MethodGet, fmt.Sprintf("/catalog/search?q=ar&limit=%d", 1+i%100)).wantStatus(t, http.StatusOK)
		f.do(http.MethodGet, fmt.Sprintf("/catalog/sets/SV1a/cards?page=%d&pageSize=1", 1+i%50)).wantStatus(t, http.StatusOK)
		gzipGet(t, f, fmt.Sprintf("/catalog/sets/SV1a/cards?page=%d&pageSize=%d", 1+i%5, 3+i%8)).wantStatus(t, http.StatusOK)
		set := f.srv.state(f.live.Current()).answers
		set.mu.RLock()
		held, n := set.bytes, len(set.answers)
		set.mu.RUnlock()
		if held > max || n == 0 {
			t.Fatalf("after %d requests the cache holds %d answers, %d bytes; bound %d", 2*(i+1), n, held, max)
		}
	}

	off := newFixtureWith(t, func(c *Config) { c.AnswerCache = -1 })
	off.do(http.MethodGet, cachedTargets[0]).wantStatus(t, http.StatusOK)
	if off.srv.answers != nil {
		t.Fatal("a negative AnswerCache made a cache")
	}
}

// TestAnswerCacheKeepsHotSpotsThroughALongTail: once the cache has filled,
// a long tail of answers asked for once each is not kept (but for the
// askedLately filter's rare mistakes), and so does not drop the answer
// asked for often; an answer asked for twice in a row is kept.
func TestAnswerCacheKeepsHotSpotsThroughALongTail(t *testing.T) {
	const bound = 64 << 10
	f := newFixtureWith(t, func(c *Config) { c.AnswerCache = bound })
	answers := f.srv.state(f.live.Current()).answers
	cached := func(target string) bool {
		answers.mu.RLock()
		defer answers.mu.RUnlock()
		return answers.answers["/api/v1"+target] != nil
	}
	// Pages of one card: each a distinct answer of about 500 bytes.
	var pages []string
	for _, s := range []struct {
		id    string
		cards int
	}{{"intl-swshp", 305}, {"jp-SV-P", 288}} {
		for p := range s.cards {
			pages = append(pages, fmt.Sprintf("/catalog/sets/%s/cards?page=%d&pageSize=1", s.id, p+1))
		}
	}
	next := 0
	for !answers.filled.Load() {
		if next == len(pages) {
			t.Fatalf("%d distinct answers did not fill a cache of %d bytes", next, bound)
		}
		f.do(http.MethodGet, pages[next], "Accept-Encoding", "identity").wantStatus(t, http.StatusOK)
		next++
	}

	hot := "/catalog/search?q=ar&limit=3"
	for range 2 {
		f.do(http.MethodGet, hot, "Accept-Encoding", "identity").wantStatus(t, http.StatusOK)
	}
	tail := pages[next:]
	if len(tail) < 400 {
		t.Fatalf("only %d pages left for the long tail", len(tail))
	}
	kept := 0
	for i, target := range tail {
		if i%10 == 0 {
			if !cached(hot) {
				t.Fatalf("%d answers asked for once dropped %s, asked for often", i, hot)
			}
			f.do(http.MethodGet, hot, "Accept-Encoding", "identity").wantStatus(t, http.StatusOK)
		}
		f.do(http.MethodGet, target, "Accept-Encoding", "identity").wantStatus(t, http.StatusOK)
		if cached(target) {
			kept++
		}
	}
	if kept > len(tail)/20 {
		t.Errorf("%d of %d answers asked for once after the cache filled were kept", kept, len(tail))
	}
	again := tail[len(tail)-1]
	f.do(http.MethodGet, again, "Accept-Encoding", "identity").wantStatus(t, http.StatusOK)
	if !cached(again) {
		t.Errorf("%s, asked for twice in a row, is not cached", again)
	}
}

// TestAskedLatelyForgets: a key is remembered until as many bytes as the
// cache holds, or as many keys as the filter is sized for, have been
// remembered after it.
func TestAskedLatelyForgets(t *testing.T) {
	const bound = 256 << 10
	for _, size := range []int64{100 << 10, 100} { // large answers fill the bytes first, small ones the keys
		a := newAskedLately(bound)
		key := []byte("/api/v1/catalog/search?q=pika")
		if a.askedBefore(key, size) {
			t.Fatal("a key never asked is remembered")
		}
		if !a.askedBefore(key, size) {
			t.Fatal("a key asked once is forgotten at once")
		}
		// Count only the other keys the filter took as new: one it mistakes
		// for remembered is not remembered again.
		others := 0
		for i := 0; i < 10_000; i++ {
			if !a.askedBefore(fmt.Appendf(nil, "/api/v1/catalog/search?q=%d", i), size) {
				others++
			}
			if !a.askedBefore(key, 0) {
				break
			}
		}
		if want := min(bound/size, a.maxKeys); int64(others) < want-1 || int64(others) > want {
			t.Errorf("answers of %d bytes: forgotten after %d others, want %d", size, others, want)
		}
	}
}

// TestAskedLatelyIsBounded: the filter's size has a bound, whatever the
// cache's.
func TestAskedLatelyIsBounded(t *testing.T) {
	for _, bound := range []int64{1, 16 << 20, 1 << 40, math.MaxInt64} {
		a := newAskedLately(bound)
		if words := len(a.bits); words < 16 || words > mostKeys*bitsPerKey/64 {
			t.Errorf("a cache of %d bytes: a filter of %d words", bound, words)
		}
		a.askedBefore([]byte("/api/v1/catalog/search?q=x"), 1)
	}
}
