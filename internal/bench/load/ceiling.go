package main

import (
	"bufio"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
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

// writeBodies stores every request target of routes with its answer, for
// the ceiling: for each, the target, the number of header fields, each
// field's name and value, and the body, each string preceded by its length
// as a uvarint. With bare, only bareFields are stored.
func writeBodies(path string, routes []route, bare bool) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	var n [binary.MaxVarintLen64]byte
	uvarint := func(v int) { w.Write(n[:binary.PutUvarint(n[:], uint64(v))]) }
	str := func(s string) {
		uvarint(len(s))
		w.WriteString(s)
	}
	for _, r := range routes {
		for _, t := range r.targets {
			str(t.uri)
			fields := t.header
			if bare {
				fields = slices.DeleteFunc(slices.Clone(fields), func(f field) bool { return !slices.Contains(bareFields, f.key) })
			}
			uvarint(len(fields))
			for _, f := range fields {
				str(f.key)
				str(f.value)
			}
			str(string(t.body))
		}
	}
	err = w.Flush()
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

// autoLengthMax is catalogd's (server.autoLengthMax): net/http writes the
// length of answers up to it itself, more cheaply than from the header map.
const autoLengthMax = 2048

// newAnswer stores body with its header fields, whose names are canonical
// and sorted. Like catalogd, the ceiling declares the length of answers
// over autoLengthMax only.
func newAnswer(body []byte, fields []field) answer {
	a := answer{body: body}
	for _, f := range fields {
		if n := len(a.header); n > 0 && a.header[n-1].key == f.key {
			a.header[n-1].values = append(a.header[n-1].values, f.value)
			continue
		}
		a.header = append(a.header, headerValues{f.key, []string{f.value}})
	}
	if len(body) > autoLengthMax {
		a.header = append(a.header, headerValues{"Content-Length", []string{strconv.Itoa(len(body))}})
	}
	return a
}

func readBodies(path string) (map[string]answer, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	r := bufio.NewReader(f)
	out := map[string]answer{}
	next := func() ([]byte, error) {
		n, err := binary.ReadUvarint(r)
		if err != nil {
			return nil, err
		}
		if n > uint64(fi.Size()) {
			// Cut short or corrupt: the file cannot hold the string, so
			// do not allocate for it.
			return nil, fmt.Errorf("a string of %d bytes in a file of %d: %w", n, fi.Size(), io.ErrUnexpectedEOF)
		}
		b := make([]byte, n)
		if _, err = io.ReadFull(r, b); errors.Is(err, io.EOF) {
			// The length was there, the bytes are not.
			err = io.ErrUnexpectedEOF
		}
		return b, err
	}
	// cut reports the end of the file inside a record: the file was cut
	// short.
	cut := func(err error) error {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return fmt.Errorf("%s: %w", path, err)
	}
	for {
		uri, err := next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		count, err := binary.ReadUvarint(r)
		if err != nil {
			return nil, cut(err)
		}
		if count > maxFields {
			return nil, fmt.Errorf("%s: %s: %d header fields, at most %d", path, uri, count, maxFields)
		}
		fields := make([]field, count)
		for i := range fields {
			k, err := next()
			if err != nil {
				return nil, cut(err)
			}
			v, err := next()
			if err != nil {
				return nil, cut(err)
			}
			fields[i] = field{http.CanonicalHeaderKey(string(k)), string(v)}
		}
		slices.SortStableFunc(fields, func(a, b field) int { return strings.Compare(a.key, b.key) })
		body, err := next()
		if err != nil {
			return nil, cut(err)
		}
		out[string(uri)] = newAnswer(body, fields)
	}
}

// maxFields bounds the header fields of one stored answer, so that a
// corrupt count is an error rather than a huge allocation.
const maxFields = 64

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
	answers["/readyz"] = newAnswer([]byte(`{"status":"ok"}`), []field{{"Content-Type", "application/json"}})
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
