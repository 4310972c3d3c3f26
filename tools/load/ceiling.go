package main

import (
	"bufio"
	"encoding/gob"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/catalogd/catalogd/server"
)

// The ceiling is the least a net/http server can do to give the same
// answers: look the request target up in a map and write the bytes catalogd
// wrote, header fields and body. No routing, no token check, no catalogue,
// no negotiation, no logging. Its server has catalogd's timeouts and header
// limit, so that both pay for the same connection handling; it writes the
// same header fields (ETag, Cache-Control, X-Request-Id, ...), so that both
// pay net/http for the same response. A bare ceiling (-bare-ceiling) writes
// only Content-Type, Content-Encoding, and Content-Length over 2 KB.

// bareFields are the header fields a bare ceiling writes.
var bareFields = []string{"Content-Type", "Content-Encoding"}

// storedAnswer is a request target and its answer, as the ceiling replays
// it.
type storedAnswer struct {
	URI    string
	Header http.Header
	Body   []byte
}

// writeBodies stores every request target of routes with its answer, for
// the ceiling: their number, then each as a storedAnswer, in gob. With bare,
// only bareFields are stored.
func writeBodies(path string, routes []route, bare bool) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	enc := gob.NewEncoder(w)
	n := 0
	for _, r := range routes {
		n += len(r.targets)
	}
	err = enc.Encode(n)
	for _, r := range routes {
		for _, t := range r.targets {
			h := t.header
			if bare {
				h = h.Clone()
				maps.DeleteFunc(h, func(k string, _ []string) bool { return !slices.Contains(bareFields, k) })
			}
			// One value at a time: gob buffers a whole value before
			// writing it.
			if err == nil {
				err = enc.Encode(storedAnswer{t.uri, h, t.body})
			}
		}
	}
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// answer is one stored answer, with its header values ready to assign.
type answer struct {
	body   []byte
	header []headerValues // Content-Length only when net/http does not write it
}

// headerValues are the values of one header field, as a handler assigns
// them to the header map.
type headerValues struct {
	key    string
	values []string
}

// readBodies reads what writeBodies wrote. A file cut short is an error,
// not a partial table.
func readBodies(path string) (map[string]answer, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	dec := gob.NewDecoder(bufio.NewReader(f))
	var n int
	if err := dec.Decode(&n); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	out := map[string]answer{}
	for i := range n {
		var a storedAnswer
		if err := dec.Decode(&a); err != nil {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return nil, fmt.Errorf("%s: answer %d of %d: %w", path, i+1, n, err)
		}
		var header []headerValues
		for _, k := range slices.Sorted(maps.Keys(a.Header)) {
			header = append(header, headerValues{k, a.Header[k]})
		}
		// net/http writes the length of shorter bodies itself, for both
		// servers (see server.AutoLengthMax).
		if len(a.Body) > server.AutoLengthMax {
			header = append(header, headerValues{"Content-Length", []string{strconv.Itoa(len(a.Body))}})
		}
		out[a.URI] = answer{body: a.Body, header: header}
	}
	return out, nil
}

// runCeiling serves the stored answers until it is killed.
func runCeiling(args []string) error {
	fs := flag.NewFlagSet("ceiling", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:0", "address to listen on")
	bodies := fs.String("bodies", "", "file of stored answers")
	if err := fs.Parse(args); err != nil {
		return err
	}
	answers, err := readBodies(*bodies)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	answers["/readyz"] = answer{body: []byte(`{"status":"ok"}`), header: []headerValues{{"Content-Type", []string{"application/json"}}}}
	srv := &http.Server{
		Handler:           ceilingHandler(answers),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       15 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    16 << 10,
	}
	return srv.Serve(ln)
}

// ceilingHandler answers each stored request target with its answer.
func ceilingHandler(answers map[string]answer) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a, ok := answers[r.RequestURI]
		if !ok {
			http.NotFound(w, r)
			return
		}
		h := w.Header()
		for _, f := range a.header {
			h[f.key] = f.values
		}
		w.WriteHeader(http.StatusOK)
		w.Write(a.body)
	})
}
