package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestBodiesRoundTrip checks that the ceiling reads back every answer the
// harness stored, with its encoding, and declares the length of long ones.
func TestBodiesRoundTrip(t *testing.T) {
	long := bytes.Repeat([]byte("x"), 5000)
	routes := []route{
		{name: routeGetCard, targets: []request{
			{uri: "/api/v1/catalog/cards/a", body: []byte(`{"id":"a"}`)},
			{uri: "/api/v1/catalog/cards/b%2Fc", body: long, encoding: "gzip"},
		}},
		{name: routeListSets, targets: []request{{uri: "/api/v1/catalog/sets", body: []byte{}}}},
	}
	path := filepath.Join(t.TempDir(), "bodies.bin")
	if err := writeBodies(path, routes); err != nil {
		t.Fatal(err)
	}
	got, err := readBodies(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("read %d answers, want 3", len(got))
	}
	for _, r := range routes {
		for _, want := range r.targets {
			a, ok := got[want.uri]
			switch {
			case !ok:
				t.Errorf("%s: not read back", want.uri)
			case !bytes.Equal(a.body, want.body):
				t.Errorf("%s: body of %d bytes, want %d", want.uri, len(a.body), len(want.body))
			case want.encoding == "" && a.encoding != nil:
				t.Errorf("%s: Content-Encoding %q for a plain answer", want.uri, a.encoding)
			case want.encoding != "" && !slices.Equal(a.encoding, []string{want.encoding}):
				t.Errorf("%s: Content-Encoding %q, want %q", want.uri, a.encoding, want.encoding)
			case len(want.body) > autoLengthMax && !slices.Equal(a.length, []string{"5000"}):
				t.Errorf("%s: Content-Length %q, want 5000", want.uri, a.length)
			case len(want.body) <= autoLengthMax && a.length != nil:
				t.Errorf("%s: Content-Length %q set for a short answer", want.uri, a.length)
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
