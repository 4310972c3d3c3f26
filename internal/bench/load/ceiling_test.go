package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
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
	compressed := replayable(http.Header{
		"Content-Type":     {"application/json"},
		"Content-Encoding": {"gzip"},
		"Vary":             {"Accept-Encoding", "Origin"},
	})
	for _, f := range card {
		if f.key == "Date" || f.key == "Content-Length" {
			t.Fatalf("replayable kept %s, which net/http writes itself", f.key)
		}
	}
	routes := []route{
		{name: routeGetCard, targets: []request{
			{uri: "/api/v1/catalog/cards/a", body: []byte(`{"id":"a"}`), header: card},
			{uri: "/api/v1/catalog/cards/b%2Fc", body: long, encoding: "gzip", header: compressed},
		}},
		{name: routeListSets, targets: []request{{uri: "/api/v1/catalog/sets", body: []byte{}, header: card}}},
	}
	// want is the header a ceiling must write for t: every replayed field,
	// or only bareFields, and the length of a long body.
	want := func(t request, bare bool) http.Header {
		h := http.Header{}
		for _, f := range t.header {
			if !bare || slices.Contains(bareFields, f.key) {
				h.Add(f.key, f.value)
			}
		}
		if len(t.body) > autoLengthMax {
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
