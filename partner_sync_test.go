package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestPartnerSyncLoop runs the partner's loop of docs/CONTRACT.md, as a partner
// copies it (bash, curl and jq), against catalogd serve: the export once,
// then the changes after an import that renames a set, removes cards and
// changes one. The copy the loop keeps, the export and the changes applied
// in order, must then be the new export record for record; and a
// generation older than the history makes the loop exit 2 without moving
// its generation on.
//
// The loop runs twice: against serve, and against serve behind a proxy
// that takes meta.nextSince out of its changes, as a release before it
// answered during an upgrade; the loop then keeps its since until the
// last page, and takes the first page's to.
func TestPartnerSyncLoop(t *testing.T) {
	for _, withoutNextSince := range []bool{false, true} {
		t.Run(fmt.Sprint("without nextSince: ", withoutNextSince), func(t *testing.T) {
			t.Parallel()
			testPartnerSyncLoop(t, withoutNextSince)
		})
	}
}

func testPartnerSyncLoop(t *testing.T, withoutNextSince bool) {
	once, schedule := partnerSyncLoop(t)
	// Apply by appending, and page seven changes at a time, so that the
	// loop follows meta.next.
	schedule = strings.Replace(schedule, "apply-to-my-copy", "cat >> applied.jsonl", 1)
	schedule = strings.Replace(schedule, "limit=1000", "limit=7", 1)

	dir := t.TempDir()
	db := filepath.Join(dir, "catalog.db")
	first, _ := sampleVariant(t, dir, 0)
	importInto(t, db, first)
	p := startServe(t, "--db", db)
	api := p.api
	if withoutNextSince {
		api = withoutNextSinceProxy(t, p.api)
	}
	work := t.TempDir()
	loopAt := func(api, script string) (int, string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "bash", "-c", script)
		cmd.Dir = work
		cmd.Env = append(os.Environ(), "API="+api, "TOKEN="+p.token)
		out, err := cmd.CombinedOutput()
		if exit, ok := err.(*exec.ExitError); ok {
			return exit.ExitCode(), string(out)
		} else if err != nil {
			t.Fatalf("bash: %v", err)
		}
		return 0, string(out)
	}
	loop := func(script string) (int, string) {
		t.Helper()
		return loopAt(api, script)
	}
	readSince := func() string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(work, "since.txt"))
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(b))
	}
	served := func() string {
		t.Helper()
		_, gen, _, err := p.get(http.DefaultClient, "/catalog/sets")
		if err != nil {
			t.Fatal(err)
		}
		return gen
	}

	if code, out := loop(once + schedule); code != 0 {
		t.Fatalf("the loop's first run exited %d:\n%s", code, out)
	}
	oldGen := served()
	if since := readSince(); since != oldGen {
		t.Fatalf("since.txt holds %q after the first run, want the export's generation %q", since, oldGen)
	}

	if out, err := catalogdCommand(t, "import", "--db", db, changedSample(t, dir)).CombinedOutput(); err != nil {
		t.Fatalf("import: %v\n%s", err, out)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		if served() != oldGen {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("serve did not take the new catalogue in 5 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	newGen := served()

	// A run stopped by a 503 on its second page, a replica not switched
	// yet, keeps the since its first page gave: the old generation and the
	// one the page came from, or, from a server without nextSince, the
	// old generation.
	code, out := loopAt(failingChangesProxy(t, api, 2), schedule)
	halfWay := oldGen + "~" + newGen
	if withoutNextSince {
		halfWay = oldGen
	}
	if since := readSince(); code != 1 || since != halfWay {
		t.Fatalf("a run stopped by a 503 on its second page exited %d, since.txt %q; want 1 and %q:\n%s", code, since, halfWay, out)
	}
	// A run whose copy fails to apply its page, one page of every change
	// whose nextSince is the new generation, stops there, its since as it
	// was.
	failing := "apply-fails() { cat > /dev/null; return 1; }\n" + strings.Replace(strings.Replace(schedule, "cat >> applied.jsonl", "apply-fails", 1), "limit=7", "limit=1000", 1)
	if code, out := loop(failing); code != 1 || readSince() != halfWay {
		t.Fatalf("a run whose copy failed to apply its page exited %d, since.txt %q; want 1 and %q:\n%s", code, readSince(), halfWay, out)
	}
	if code, out := loop(schedule); code != 0 {
		t.Fatalf("the loop's scheduled run exited %d:\n%s", code, out)
	}
	if since := readSince(); since != newGen {
		t.Errorf("since.txt holds %q after the sync, want the new generation %q", since, newGen)
	}

	// The copy: the first export, then every change in order.
	raw, err := os.ReadFile(filepath.Join(work, "catalogue.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	copied := snapshotRecords(t, zr)
	applied, err := os.ReadFile(filepath.Join(work, "applied.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	changes := 0
	dec := json.NewDecoder(bytes.NewReader(applied))
	for dec.More() {
		var c struct {
			Kind, ID, Op string
			Record       json.RawMessage
		}
		if err := dec.Decode(&c); err != nil {
			t.Fatal(err)
		}
		switch c.Op {
		case "upsert":
			copied[c.Kind+" "+c.ID] = string(c.Record)
		case "remove":
			delete(copied, c.Kind+" "+c.ID)
		default:
			t.Fatalf("change of op %q", c.Op)
		}
		changes++
	}
	resp, err := http.DefaultClient.Do(authorized(t, p, "/catalog/export"))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	want := snapshotRecords(t, resp.Body)
	t.Logf("%d changes applied, %d records", changes, len(want))
	if changes < 8 || len(copied) != len(want) {
		t.Fatalf("%d changes applied; the copy holds %d records, the new export %d", changes, len(copied), len(want))
	}
	for k, v := range want {
		if copied[k] != v {
			t.Errorf("%s: the copy holds %.80q, the export %.80q", k, copied[k], v)
		}
	}

	// A generation the catalogue keeps no changes from.
	if err := os.WriteFile(filepath.Join(work, "since.txt"), []byte("19990101T000000Z-00000000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out := loop(schedule); code != 2 || !strings.Contains(out, "download the export again") {
		t.Errorf("the loop from a generation outside the history exited %d:\n%s", code, out)
	}
	if since := readSince(); since != "19990101T000000Z-00000000" {
		t.Errorf("since.txt moved to %q on a 410", since)
	}
}

// changesProxy serves api through a reverse proxy, but for the lists of
// changes, which serve answers, with the proxy at hand; it returns the
// proxy's base URL.
func changesProxy(t *testing.T, api string, serve func(w http.ResponseWriter, r *http.Request, proxy http.Handler)) string {
	t.Helper()
	target, err := url.Parse(api)
	if err != nil {
		t.Fatal(err)
	}
	proxy := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(&url.URL{Scheme: target.Scheme, Host: target.Host})
	}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/catalog/changes") {
			serve(w, r, proxy)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + target.Path
}

// withoutNextSinceProxy serves api with meta.nextSince taken out of every
// list of changes, as a release before it answered.
func withoutNextSinceProxy(t *testing.T, api string) string {
	return changesProxy(t, api, func(w http.ResponseWriter, r *http.Request, proxy http.Handler) {
		r.Header.Del("Accept-Encoding") // plain JSON, to rewrite
		rec := httptest.NewRecorder()
		proxy.ServeHTTP(rec, r)
		b := rec.Body.Bytes()
		if rec.Code == http.StatusOK {
			var page, meta map[string]json.RawMessage
			if json.Unmarshal(b, &page) != nil || json.Unmarshal(page["meta"], &meta) != nil || meta["nextSince"] == nil {
				t.Errorf("a list of changes without meta.nextSince: %s", b)
			} else {
				delete(meta, "nextSince")
				page["meta"], _ = json.Marshal(meta)
				b, _ = json.Marshal(page)
			}
		}
		w.Header().Set("Content-Type", rec.Header().Get("Content-Type"))
		w.WriteHeader(rec.Code)
		w.Write(b)
	})
}

// failingChangesProxy serves api, but answers the nth list of changes
// asked 503, as a replica not switched yet would.
func failingChangesProxy(t *testing.T, api string, nth int32) string {
	var n atomic.Int32
	return changesProxy(t, api, func(w http.ResponseWriter, r *http.Request, proxy http.Handler) {
		if n.Add(1) == nth {
			w.Header().Set("Retry-After", "2")
			http.Error(w, "not switched yet", http.StatusServiceUnavailable)
			return
		}
		proxy.ServeHTTP(w, r)
	})
}

// partnerSyncLoop returns the partner's loop of docs/CONTRACT.md, Keeping
// a copy, in its two parts: the export, run once, and the changes, run on a
// schedule.
func partnerSyncLoop(t *testing.T) (once, schedule string) {
	t.Helper()
	b, err := os.ReadFile("docs/CONTRACT.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n### Keeping a copy\n")
	_, block, ok2 := strings.Cut(section, "\n```sh\n")
	block, _, ok3 := strings.Cut(block, "\n```\n")
	once, schedule, ok4 := strings.Cut(block, "\n# On a schedule")
	if !ok || !ok2 || !ok3 || !ok4 || !strings.Contains(schedule, "apply-to-my-copy") {
		t.Fatal("docs/CONTRACT.md, Keeping a copy, no longer has its loop in one sh block, export first, then \"# On a schedule\"")
	}
	return once + "\n", "# On a schedule" + schedule + "\n"
}

// changedSample writes the sample with its Base Set renamed, the set's
// first two cards removed and another card's rarity changed.
func changedSample(t *testing.T, dir string) string {
	t.Helper()
	path, _ := sampleVariant(t, dir, 1)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var snap struct {
		Sets  []json.RawMessage `json:"sets"`
		Cards []json.RawMessage `json:"cards"`
	}
	if err := json.Unmarshal(b, &snap); err != nil {
		t.Fatal(err)
	}
	snap.Cards = snap.Cards[2:]
	snap.Cards[0] = bytes.Replace(snap.Cards[0], []byte(`"rarity":"`), []byte(`"rarity":"Changed `), 1)
	out, err := json.Marshal(snap)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, out, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// snapshotRecords reads an export into its records by kind and id.
func snapshotRecords(t *testing.T, r interface{ Read([]byte) (int, error) }) map[string]string {
	t.Helper()
	var snap struct{ Sets, Cards []json.RawMessage }
	if err := json.NewDecoder(r).Decode(&snap); err != nil {
		t.Fatal(err)
	}
	records := map[string]string{}
	for kind, list := range map[string][]json.RawMessage{"set": snap.Sets, "card": snap.Cards} {
		for _, rec := range list {
			var id struct{ ID string }
			if err := json.Unmarshal(rec, &id); err != nil || id.ID == "" {
				t.Fatalf("a %s without an id: %.80s", kind, rec)
			}
			records[kind+" "+id.ID] = string(rec)
		}
	}
	return records
}

// authorized is a GET of path with the dev banner's token.
func authorized(t *testing.T, p *serveProcess, path string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, p.api+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+p.token)
	return req
}

// TestPartnerExportRetriesABusyServer runs the partner loop's first download
// against a serve already sending all the downloads it sends at once: the
// export is answered 503, curl retries after Retry-After, and since.txt
// holds the one generation of the export it got.
func TestPartnerExportRetriesABusyServer(t *testing.T) {
	t.Parallel()
	once, _ := partnerSyncLoop(t)
	db := filepath.Join(t.TempDir(), "catalog.db")
	importRealCatalogue(t, db)
	p := startServe(t, "--db", db, "--max-downloads", "1")
	// The one slot, held by a client that reads nothing of 14 MB and goes
	// away once the partner's download has been refused (or after 30 s,
	// so that a download that never asks does not hang the test).
	work := t.TempDir()
	conn, u := p.dial(t)
	conn.(*net.TCPConn).SetReadBuffer(4096)
	fmt.Fprintf(conn, "GET %s/catalog/export HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nAccept-Encoding: identity\r\n\r\n", u.Path, u.Host, p.token)
	if status, err := bufio.NewReader(conn).ReadString('\n'); err != nil || !strings.Contains(status, " 200 ") {
		t.Fatalf("held download: %q, %v", status, err)
	}
	go func() {
		defer conn.Close()
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if h, _ := os.ReadFile(filepath.Join(work, "headers.txt")); bytes.Contains(h, []byte(" 503 ")) {
				return
			}
		}
	}()

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", "set -o pipefail\n"+once)
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "API="+p.api, "TOKEN="+p.token)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the partner loop's download: %v\n%s", err, out)
	}
	headers, err := os.ReadFile(filepath.Join(work, "headers.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(headers, []byte(" 503 ")) || !bytes.Contains(headers, []byte(" 200 ")) {
		t.Fatalf("headers.txt shows no 503 then 200:\n%s", headers)
	}
	since, err := os.ReadFile(filepath.Join(work, "since.txt"))
	if err != nil {
		t.Fatal(err)
	}
	_, gen, _, err := p.get(http.DefaultClient, "/catalog/sets")
	if err != nil {
		t.Fatal(err)
	}
	if string(since) != gen+"\n" {
		t.Errorf("since.txt holds %q, want the generation %q alone", since, gen)
	}
}
