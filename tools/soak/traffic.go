package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// requestTimeout bounds one request; an answer slower than that is a failure.
const requestTimeout = 15 * time.Second

// maxBehind is how far the sender may fall behind its schedule before
// requests are dropped (and counted as failures) rather than queued.
const maxBehind = 10 * time.Second

// job is a request due at a time.
type job struct {
	seq int64
	due time.Time
}

// traffic sends the mix to the API on schedule and tallies the answers.
type traffic struct {
	api, token string
	roots      *x509.CertPool // that trust the server's certificate
	runID      string
	picker     *picker
	tally      *tally
	conns      *connLog
	clients    []*http.Client
}

// run sends rate requests a second from start until end over conns
// connections and returns when every answer is in. The connections stay
// open until closeConns.
func (t *traffic) run(ctx context.Context, start, end time.Time, rate float64, conns int, seed uint64) {
	t.conns = &connLog{start: start}
	jobs := make(chan job, max(1, int(rate*maxBehind.Seconds())))
	var wg sync.WaitGroup
	for i := range conns {
		// One transport per worker: one keep-alive connection each, HTTP/2
		// for half of them, HTTP/1.1 for the others.
		client := &http.Client{Timeout: requestTimeout, Transport: newTransport(t.roots, i%2 == 1, t.conns.dial)}
		t.clients = append(t.clients, client)
		r := rand.New(rand.NewPCG(seed, uint64(i)))
		wg.Go(func() {
			for j := range jobs {
				t.do(client, r, j)
			}
		})
	}
	interval := time.Duration(float64(time.Second) / rate)
	for seq := int64(0); ; seq++ {
		due := start.Add(time.Duration(seq) * interval)
		if !due.Before(end) {
			break
		}
		if d := time.Until(due); d > 0 {
			select {
			case <-time.After(d):
			case <-ctx.Done():
			}
		}
		if ctx.Err() != nil {
			break
		}
		select {
		case jobs <- job{seq: seq, due: due}:
		default:
			t.tally.dropped()
		}
	}
	close(jobs)
	wg.Wait()
}

// closeConns closes the connections run opened.
func (t *traffic) closeConns() {
	for _, c := range t.clients {
		c.CloseIdleConnections()
	}
}

// answer is what the tally keeps of one request.
type answer struct {
	req        request
	due        time.Time
	latency    time.Duration
	status     int
	generation string
	proto      string // of the answer: HTTP/2.0 or HTTP/1.1
	connClose  bool   // the server asked to close the connection
	mark       int    // of a card answer: the import its set name says it is from; else -1
	problem    string // why the answer is a failure; "" for a good one
	body       string // of a failure, the start of the body
	requestID  string
}

func (t *traffic) do(client *http.Client, r *rand.Rand, j job) {
	req := t.picker.pick(r)
	id := t.runID + "-" + strconv.FormatInt(j.seq, 10)
	a := answer{req: req, due: j.due, requestID: id, mark: -1}
	defer func() {
		a.latency = time.Since(j.due)
		t.tally.add(a)
	}()

	hr, err := http.NewRequest(http.MethodGet, t.api+req.path, nil)
	if err != nil {
		a.problem = err.Error()
		return
	}
	gzipped := j.seq%2 == 0
	hr.Header.Set("Authorization", "Bearer "+t.token)
	hr.Header.Set("X-Request-Id", id)
	if gzipped {
		hr.Header.Set("Accept-Encoding", "gzip")
	} else {
		hr.Header.Set("Accept-Encoding", "identity")
	}
	if req.ifNoneMatch != "" {
		hr.Header.Set("If-None-Match", req.ifNoneMatch)
	}
	resp, err := client.Do(hr)
	if err != nil {
		a.problem = "no answer: " + err.Error()
		return
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	a.status, a.proto = resp.StatusCode, resp.Proto
	a.connClose = resp.Close
	a.generation = resp.Header.Get("Catalog-Generation")
	if err != nil {
		a.problem = "reading the body: " + err.Error()
		return
	}
	a.problem, a.mark, body = check(req, resp, body, id, gzipped)
	if a.problem != "" {
		a.body = string(body[:min(len(body), 300)])
		return
	}
	if resp.StatusCode == http.StatusOK && r.IntN(4) == 0 {
		t.picker.remember(request{kind: req.kind, path: req.path, cardID: req.cardID}, resp.Header.Get("ETag"), a.generation)
	}
}

// check says what is wrong with an answer, "" when nothing is, and returns
// the import mark of a card answer (-1 for other answers) and the body,
// decompressed.
func check(req request, resp *http.Response, body []byte, id string, gzipped bool) (problem string, mark int, _ []byte) {
	mark = -1
	if resp.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err == nil {
			body, err = io.ReadAll(zr)
		}
		if err != nil {
			return "gzip body: " + err.Error(), mark, body
		}
		if !gzipped {
			return "gzip answer to Accept-Encoding: identity", mark, body
		}
	}
	if got := resp.Header.Get("X-Request-Id"); got != id {
		return fmt.Sprintf("X-Request-Id %q, sent %q", got, id), mark, body
	}
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusNotModified:
		if req.ifNoneMatch == "" {
			return "304 to a request without If-None-Match", mark, body
		}
		if g := resp.Header.Get("Catalog-Generation"); g != req.tagGeneration {
			return fmt.Sprintf("304 from generation %s to an ETag of generation %s", g, req.tagGeneration), mark, body
		}
		return "", mark, body
	default:
		return "status " + strconv.Itoa(resp.StatusCode), mark, body
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		return "Content-Type " + ct, mark, body
	}
	if resp.Header.Get("ETag") == "" || resp.Header.Get("Catalog-Generation") == "" {
		return "no ETag or Catalog-Generation", mark, body
	}
	if !json.Valid(body) {
		return "body is not valid JSON", mark, body
	}
	if req.kind != getCard {
		return "", mark, body
	}
	var card struct {
		Data struct {
			ID      string `json:"id"`
			SetName string `json:"setName"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &card); err != nil {
		return "card answer: " + err.Error(), mark, body
	}
	if card.Data.ID != req.cardID {
		return fmt.Sprintf("card answer for %q, asked for %q", card.Data.ID, req.cardID), mark, body
	}
	i := strings.LastIndex(card.Data.SetName, nameMark)
	if i >= 0 {
		mark, _ = strconv.Atoi(card.Data.SetName[i+len(nameMark):])
	}
	if i < 0 || mark < 0 {
		return fmt.Sprintf("card answer with set name %q, without an import's mark", card.Data.SetName), -1, body
	}
	return "", mark, body
}

// tally counts the answers, over the whole run and since the last sample.
type tally struct {
	mu       sync.Mutex
	interval counts
	total    counts
	byKind   [kinds]int
	// latencies of each kind's answers, and the answers by protocol.
	kindLatencies [kinds][]time.Duration
	protos        map[string]int
	// Repeats with If-None-Match: answered 304, answered 200 by a newer
	// generation, answered 200 by the generation of the tag.
	cond304, condNewer, condSame int
	generations                  map[string]int
	// marks counts the card answers of each generation by the import
	// their set names say they are from.
	marks      map[string]map[int]int
	failures   []answer // the first few
	failedBy   map[string]int
	connCloses int // answers with Connection: close
}

// counts are the answers of a stretch of time.
type counts struct {
	requests, ok, notModified, failed int
	dropped                           int             // never sent: the sender was too far behind
	latencies                         []time.Duration // of the answers, in the order they came
}

func newTally() *tally {
	return &tally{generations: map[string]int{}, marks: map[string]map[int]int{}, failedBy: map[string]int{}, protos: map[string]int{}}
}

func (t *tally) add(a answer) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, c := range []*counts{&t.interval, &t.total} {
		c.requests++
		switch {
		case a.problem != "":
			c.failed++
		case a.status == http.StatusNotModified:
			c.notModified++
		default:
			c.ok++
		}
		c.latencies = append(c.latencies, a.latency)
	}
	if a.connClose {
		t.connCloses++
	}
	t.byKind[a.req.kind]++
	t.kindLatencies[a.req.kind] = append(t.kindLatencies[a.req.kind], a.latency)
	if a.proto != "" {
		t.protos[a.proto]++
	}
	if a.generation != "" {
		t.generations[a.generation]++
	}
	if a.mark >= 0 {
		m := t.marks[a.generation]
		if m == nil {
			m = map[int]int{}
			t.marks[a.generation] = m
		}
		m[a.mark]++
	}
	if a.req.ifNoneMatch != "" && a.problem == "" {
		switch {
		case a.status == http.StatusNotModified:
			t.cond304++
		case a.generation != a.req.tagGeneration:
			t.condNewer++
		default:
			t.condSame++
		}
	}
	if a.problem != "" {
		kind := a.problem
		if k, _, ok := strings.Cut(kind, ": "); ok {
			kind = k
		}
		t.failedBy[kind]++
		if len(t.failures) < keepLines {
			t.failures = append(t.failures, a)
		}
	}
}

func (t *tally) dropped() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.interval.dropped++
	t.total.dropped++
	t.failedBy["dropped, the sender more than "+maxBehind.String()+" behind"]++
}

// take returns the counts since the last call and starts new ones.
func (t *tally) take() counts {
	t.mu.Lock()
	defer t.mu.Unlock()
	c := t.interval
	t.interval = counts{}
	return c
}
