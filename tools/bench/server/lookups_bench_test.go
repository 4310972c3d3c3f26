package serverbench

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/catalogd/catalogd/catalog/store"
	"github.com/catalogd/catalogd/importer"
	"github.com/catalogd/catalogd/server"
	"github.com/catalogd/catalogd/tools/gen"
)

var lookupCards = flag.Int("lookup-cards", 100_000, "cards in the generated catalogue of BenchmarkLookups")

// BenchmarkLookups prices getCards and getSetCardsByNumber on long-tail
// traffic over a generated catalogue of -lookup-cards cards, next to
// getCard:
//
//	go test -C tools ./bench/server -run '^$' -bench Lookups -benchtime 20000x -args -lookup-cards=1000000
//
// Every request asks for cards drawn at random from the whole catalogue
// (ids, or set and printed-number pairs written as printed), so that what
// the caches of the machine hold is what a partner's long tail leaves
// there. "catalog" prices the lookups alone (store.DB); "server" each
// request through the whole Server, as BenchmarkTraffic does; "http" over
// a real connection, one request at a time: a batch of 100 against a
// hundred requests of getCard, 100 × http/getCard; "http-rtt-1ms" the
// same with every answer a millisecond late, as over a network. Every
// figure is per request; the cards/s metric is what a client gets.
func BenchmarkLookups(b *testing.B) {
	dir := b.TempDir()
	snapshot := filepath.Join(dir, "snapshot.json")
	if _, err := gen.WriteFile(snapshot, gen.Options{Cards: *lookupCards, Seed: 1}); err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(dir, "catalog.db")
	if _, err := importer.Import(context.Background(), importer.Config{DB: path, Inputs: []string{snapshot}}); err != nil {
		b.Fatal(err)
	}
	logs := &accessLog{}
	f := newFixture(b, path, func(c *server.Config) { c.AccessLog, c.AnswerCache = logs, -1 })
	db := f.live.Current()
	cards := lookupTargets(b, db)
	rng := rand.New(rand.NewPCG(1, 2))
	rng.Shuffle(len(cards), func(i, j int) { cards[i], cards[j] = cards[j], cards[i] })
	next := 0
	draw := func(n int) []lookupCard {
		if next+n > len(cards) {
			next = 0
		}
		next += n
		return cards[next-n : next]
	}

	// Every card looked up once by id, as a server that has run a while
	// has: the first figure would otherwise pay for the page faults of
	// all of them.
	for i := 0; i < len(cards); i += 100 {
		ids := make([]string, 0, 100)
		for _, c := range cards[i:min(i+100, len(cards))] {
			ids = append(ids, c.id)
		}
		if err := db.Cards(ids, func([]byte) {}, func(id string) { b.Fatalf("%s not found", id) }); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("catalog/getCard", func(b *testing.B) {
		var buf []byte
		for b.Loop() {
			var err error
			if buf, err = db.AppendCard(buf[:0], draw(1)[0].id); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "cards/s")
	})
	for _, n := range []int{1, 25, 100} {
		b.Run(fmt.Sprintf("catalog/getCards/%d", n), func(b *testing.B) {
			ids := make([]string, n)
			found := 0
			for b.Loop() {
				for i, c := range draw(n) {
					ids[i] = c.id
				}
				if err := db.Cards(ids, func([]byte) { found++ }, func(id string) { b.Fatalf("%s not found", id) }); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(found)/b.Elapsed().Seconds(), "cards/s")
		})
	}
	b.Run("catalog/getSetCardsByNumber", func(b *testing.B) {
		found := 0
		for b.Loop() {
			c := draw(1)[0]
			if err := db.SetCardsByNumber(c.setID, c.number, func([]byte) { found++ }); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(found)/b.Elapsed().Seconds(), "cards/s")
	})

	targets := map[string]func() (string, int){
		"getCard": func() (string, int) { return "/catalog/cards/" + url.PathEscape(draw(1)[0].id), 1 },
		"getSetCardsByNumber": func() (string, int) {
			c := draw(1)[0]
			return "/catalog/sets/" + url.PathEscape(c.setID) + "/cards/" + url.PathEscape(c.number), 1
		},
	}
	for _, n := range []int{1, 25, 100} {
		targets[fmt.Sprintf("getCards/%d", n)] = func() (string, int) {
			var q strings.Builder
			for i, c := range draw(n) {
				if i > 0 {
					q.WriteByte('&')
				}
				q.WriteString("id=" + url.QueryEscape(c.id))
			}
			return "/catalog/cards?" + q.String(), n
		}
	}
	for _, name := range []string{"getCard", "getCards/1", "getCards/25", "getCards/100", "getSetCardsByNumber"} {
		target := targets[name]
		b.Run("server/"+name, func(b *testing.B) {
			w := &discardWriter{header: http.Header{}}
			reqs := make([]*http.Request, 4096)
			cards := 0
			for i := range reqs {
				t, n := target()
				reqs[i] = httptest.NewRequest(http.MethodGet, f.base+t, nil)
				reqs[i].Header.Set("Authorization", "Bearer "+f.token)
				cards += n
			}
			i := 0
			b.ReportAllocs()
			for b.Loop() {
				clear(w.header)
				w.status, w.bytes = 0, 0
				f.srv.ServeHTTP(w, reqs[i%len(reqs)])
				if w.status != http.StatusOK {
					b.Fatalf("%s: status %d", reqs[i%len(reqs)].URL, w.status)
				}
				i++
			}
			b.ReportMetric(float64(b.N)*float64(cards)/float64(len(reqs))/b.Elapsed().Seconds(), "cards/s")
		})
	}

	// Over HTTP, one connection, one request at a time, as a partner's
	// client reading a deck list would. The targets are written before
	// the timing starts, every card in one of them (the client's escaping
	// of a hundred ids is some 40 µs, not the server's), and sent in turn.
	// "http" is this machine's loopback; "http-rtt-1ms" a client whose
	// every answer comes a millisecond later, as over a network with
	// that round trip (getCard and 100 ids only: each request takes it).
	for _, c := range []struct {
		name  string
		rtt   time.Duration
		names []string
	}{
		{"http", 0, []string{"getCard", "getCards/1", "getCards/25", "getCards/100", "getSetCardsByNumber"}},
		{"http-rtt-1ms", time.Millisecond, []string{"getCard", "getCards/100"}},
	} {
		client := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 1, MaxIdleConnsPerHost: 1, DisableCompression: true, DialContext: dialWithRoundTrip(c.rtt)}}
		b.Cleanup(client.CloseIdleConnections)
		for _, name := range c.names {
			b.Run(c.name+"/"+name, func(b *testing.B) { benchmarkOverHTTP(b, client, f, targets[name], len(cards)) })
		}
	}
}

// benchmarkOverHTTP sends the targets of target, every card in one of
// them, one request at a time.
func benchmarkOverHTTP(b *testing.B, client *http.Client, f *fixture, target func() (string, int), cards int) {
	var urls []string
	counts := 0
	for counts < cards {
		t, k := target()
		urls = append(urls, f.base+t)
		counts += k
	}
	header := http.Header{"Authorization": {"Bearer " + f.token}}
	perRequest := float64(counts) / float64(len(urls))
	cardsSent, i := 0.0, 0
	for b.Loop() {
		req, err := http.NewRequest(http.MethodGet, urls[i%len(urls)], nil)
		if err != nil {
			b.Fatal(err)
		}
		req.Header = header
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("%s: status %d", req.URL, resp.StatusCode)
		}
		cardsSent += perRequest
		i++
	}
	b.ReportMetric(cardsSent/b.Elapsed().Seconds(), "cards/s")
}

// dialWithRoundTrip dials connections whose first bytes of each answer
// arrive rtt late, as a network with that round trip would deliver them;
// nil, net/http's own dialing, when rtt is 0.
func dialWithRoundTrip(rtt time.Duration) func(ctx context.Context, network, addr string) (net.Conn, error) {
	if rtt == 0 {
		return nil
	}
	var d net.Dialer
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &lateConn{Conn: conn, rtt: rtt}, nil
	}
}

// lateConn delays the first read that returns bytes after a write.
type lateConn struct {
	net.Conn
	rtt   time.Duration
	wrote atomic.Bool
}

func (c *lateConn) Write(p []byte) (int, error) {
	c.wrote.Store(true)
	return c.Conn.Write(p)
}

func (c *lateConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 && c.wrote.Swap(false) {
		time.Sleep(c.rtt)
	}
	return n, err
}

// lookupCard is one card of the catalogue, as a lookup names it: its id,
// and its set's id with its printed number as printed.
type lookupCard struct{ id, setID, number string }

// lookupTargets reads every card of db, set by set.
func lookupTargets(b *testing.B, db *store.DB) []lookupCard {
	raw, err := db.SetsJSON("")
	if err != nil {
		b.Fatal(err)
	}
	var sets []struct{ ID string }
	if err := json.Unmarshal(raw, &sets); err != nil {
		b.Fatal(err)
	}
	var cards []lookupCard
	for _, s := range sets {
		for page := int64(1); ; page++ {
			n := 0
			_, err := db.SetCards(s.ID, page, 1000, func(card []byte) {
				var c struct{ ID, Number string }
				if err := json.Unmarshal(card, &c); err != nil {
					b.Fatal(err)
				}
				cards = append(cards, lookupCard{c.ID, s.ID, c.Number})
				n++
			})
			if err != nil {
				b.Fatal(err)
			}
			if n < 1000 {
				break
			}
		}
	}
	return cards
}
