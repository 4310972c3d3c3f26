package main

import (
	"bytes"
	"encoding/gob"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/catalogd/catalogd/server"
)

// TestBodiesRoundTrip checks that the ceiling answers every target the
// harness stored with the stored body and header fields, the length of long
// ones declared, and that a bare ceiling keeps only bareFields.
func TestBodiesRoundTrip(t *testing.T) {
	long := bytes.Repeat([]byte("x"), 5000)
	card := replayable(http.Header{
		"Content-Type":       {"application/json"},
		"Etag":               {`"g1.abc"`},
		"Cache-Control":      {"private"},
		"Catalog-Generation": {"g1"},
		"X-Request-Id":       {"f00-1"},
		"Date":               {"Mon, 02 Jan 2006 15:04:05 GMT"},
		"Content-Length":     {"10"},
	})
	wantCard := http.Header{
		"Cache-Control":      {"private"},
		"Catalog-Generation": {"g1"},
		"Content-Type":       {"application/json"},
		"Etag":               {`"g1.abc"`},
		"X-Request-Id":       {"f00-1"},
	}
	if !reflect.DeepEqual(card, wantCard) {
		t.Fatalf("replayable:\n%v\nwant (without Date and Content-Length)\n%v", card, wantCard)
	}
	compressed := http.Header{
		"Content-Type":     {"application/json"},
		"Content-Encoding": {"gzip"},
		"Vary":             {"Origin", "Accept-Encoding"},
	}
	routes := []route{
		{name: routeGetCard, targets: []request{
			{uri: "/api/v1/catalog/cards/a", body: []byte(`{"id":"a"}`), header: card},
			{uri: "/api/v1/catalog/cards/b%2Fc", body: long, header: compressed},
		}},
		{name: routeListSets, targets: []request{{uri: "/api/v1/catalog/sets", body: []byte{}, header: card}}},
	}
	// want is the header a ceiling must write for t: every replayed field,
	// or only bareFields, and the length of a long body.
	want := func(t request, bare bool) http.Header {
		h := t.header.Clone()
		if bare {
			maps.DeleteFunc(h, func(k string, _ []string) bool { return !slices.Contains(bareFields, k) })
		}
		if len(t.body) > server.AutoLengthMax {
			h.Set("Content-Length", strconv.Itoa(len(t.body)))
		}
		return h
	}
	path := filepath.Join(t.TempDir(), "bodies.bin")
	for _, bare := range []bool{false, true} {
		if err := writeBodies(path, routes, bare); err != nil {
			t.Fatal(err)
		}
		got, err := readBodies(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 3 {
			t.Fatalf("bare %v: read %d answers, want 3", bare, len(got))
		}
		h := ceilingHandler(got)
		for _, r := range routes {
			for _, target := range r.targets {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target.uri, nil))
				if rec.Code != http.StatusOK || !bytes.Equal(rec.Body.Bytes(), target.body) {
					t.Errorf("bare %v: %s: status %d, body of %d bytes, want 200 and %d", bare, target.uri, rec.Code, rec.Body.Len(), len(target.body))
				}
				if w := want(target, bare); !reflect.DeepEqual(rec.Header(), w) {
					t.Errorf("bare %v: %s: header\n%v\nwant\n%v", bare, target.uri, rec.Header(), w)
				}
			}
		}
	}

	// A file cut short is an error, not a partial table: cut inside an
	// answer, right after the first target's URI, and right after its
	// length. Shortest last: truncating can only shorten.
	for _, size := range []int64{100, int64(1 + len(routes[0].targets[0].uri)), 1} {
		if err := os.Truncate(path, size); err != nil {
			t.Fatal(err)
		}
		if _, err := readBodies(path); err == nil || !strings.Contains(err.Error(), "unexpected EOF") {
			t.Fatalf("file cut to %d bytes: err %v, want unexpected EOF", size, err)
		}
	}
}

// TestCorruptBodiesFile checks that a bodies file with impossible counts or
// lengths is an error, not a panic or a huge allocation.
func TestCorruptBodiesFile(t *testing.T) {
	// file is what writeBodies would write, with a count of its own.
	file := func(count int, answers ...storedAnswer) []byte {
		var b bytes.Buffer
		enc := gob.NewEncoder(&b)
		enc.Encode(count)
		for _, a := range answers {
			enc.Encode(a)
		}
		return b.Bytes()
	}
	one := storedAnswer{URI: "/", Body: []byte("{}")}
	for name, data := range map[string][]byte{
		"huge count":         file(1 << 50),
		"fewer than counted": file(2, one),
		"not gob":            bytes.Repeat([]byte{0xff}, 64),
		"garbage for answer": append(file(1), bytes.Repeat([]byte{0xff}, 16)...),
	} {
		path := filepath.Join(t.TempDir(), "bodies.bin")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := readBodies(path); err == nil {
			t.Errorf("%s: read without error", name)
		}
	}
}

// TestCeilingSendsWhatTheOriginSent fetches answers from an origin the way
// the harness fetches catalogd's, stores them, and checks that the ceiling
// then sends each response byte for byte as the origin did, Date apart:
// status line, every header field in its order, the length (written by
// net/http up to server.AutoLengthMax bytes, declared above) and the body.
func TestCeilingSendsWhatTheOriginSent(t *testing.T) {
	bodies := map[string][]byte{
		"/short": []byte(`{"id":"a"}`),
		"/edge":  bytes.Repeat([]byte("x"), server.AutoLengthMax),
		"/long":  bytes.Repeat([]byte("y"), server.AutoLengthMax+1),
	}
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body := bodies[r.URL.Path]
		h := w.Header()
		h["Content-Type"] = []string{"application/json"}
		h["Etag"] = []string{`"g1.abc"`}
		h["Cache-Control"] = []string{"private"}
		h["Catalog-Generation"] = []string{"g1"}
		h["X-Request-Id"] = []string{"f00-1"}
		h["Vary"] = []string{"Origin", "Accept-Encoding"}
		if len(body) > server.AutoLengthMax {
			h["Content-Length"] = []string{strconv.Itoa(len(body))}
		}
		w.WriteHeader(http.StatusOK)
		w.Write(body)
	}))
	defer origin.Close()

	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	var fetched route
	for uri := range bodies {
		a, err := fetchAnswer(t.Context(), client, origin.URL, uri, "token", false)
		if err != nil {
			t.Fatal(err)
		}
		fetched.targets = append(fetched.targets, a)
	}
	path := filepath.Join(t.TempDir(), "bodies.bin")
	if err := writeBodies(path, []route{fetched}, false); err != nil {
		t.Fatal(err)
	}
	answers, err := readBodies(path)
	if err != nil {
		t.Fatal(err)
	}
	ceiling := httptest.NewServer(ceilingHandler(answers))
	defer ceiling.Close()

	for uri := range bodies {
		want := rawGet(t, origin.Listener.Addr().String(), uri)
		if got := rawGet(t, ceiling.Listener.Addr().String(), uri); got != want {
			t.Errorf("%s: the ceiling sent\n%.600q\nthe origin\n%.600q", uri, got, want)
		}
	}
}

// dateField matches the Date header field of a response.
var dateField = regexp.MustCompile("(?m)^Date: [^\r\n]*\r\n")

// rawGet returns the bytes of the response to a GET of uri from addr,
// without its Date field.
func rawGet(t *testing.T, addr, uri string) string {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, "GET "+uri+" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(conn)
	if err != nil {
		t.Fatal(err)
	}
	return dateField.ReplaceAllString(string(b), "")
}
