package main

import (
	"bufio"
	"encoding/binary"
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

// writeBodies stores every request target of routes with its answer, for
// the ceiling: for each, the target, the number of header names, each name
// with the number of its values and the values, and the body; every string
// is preceded by its length as a uvarint. With bare, only bareFields are
// stored.
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
			keys := slices.Sorted(maps.Keys(t.header))
			if bare {
				keys = slices.DeleteFunc(keys, func(k string) bool { return !slices.Contains(bareFields, k) })
			}
			uvarint(len(keys))
			for _, k := range keys {
				str(k)
				uvarint(len(t.header[k]))
				for _, v := range t.header[k] {
					str(v)
				}
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

// lengthField declares the length of body when catalogd does (see
// server.AutoLengthMax): net/http writes it for shorter bodies, for both.
func lengthField(body []byte) []headerValues {
	if len(body) <= server.AutoLengthMax {
		return nil
	}
	return []headerValues{{"Content-Length", []string{strconv.Itoa(len(body))}}}
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
	// count reads a number of names or values; no count is larger than
	// maxFields.
	count := func() (int, error) {
		n, err := binary.ReadUvarint(r)
		if err == nil && n > maxFields {
			err = fmt.Errorf("%d header fields or values, at most %d", n, maxFields)
		}
		return int(n), err
	}
	str := func() (string, error) {
		n, err := binary.ReadUvarint(r)
		if err != nil {
			return "", err
		}
		if n > uint64(fi.Size()) {
			// Cut short or corrupt: the file cannot hold the string, so
			// do not allocate for it.
			return "", fmt.Errorf("a string of %d bytes in a file of %d: %w", n, fi.Size(), io.ErrUnexpectedEOF)
		}
		b := make([]byte, n)
		if _, err = io.ReadFull(r, b); errors.Is(err, io.EOF) {
			// The length was there, the bytes are not.
			err = io.ErrUnexpectedEOF
		}
		return string(b), err
	}
	// record reads what follows a target: its header and body.
	record := func() (answer, error) {
		var a answer
		names, err := count()
		if err != nil {
			return a, err
		}
		for range names {
			var h headerValues
			if h.key, err = str(); err != nil {
				return a, err
			}
			values, err := count()
			if err != nil {
				return a, err
			}
			h.values = make([]string, values)
			for i := range h.values {
				if h.values[i], err = str(); err != nil {
					return a, err
				}
			}
			a.header = append(a.header, h)
		}
		body, err := str()
		a.body = []byte(body)
		a.header = append(a.header, lengthField(a.body)...)
		return a, err
	}
	out := map[string]answer{}
	for {
		uri, err := str()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err == nil {
			out[uri], err = record()
			if errors.Is(err, io.EOF) {
				// The file ends inside a record: it was cut short.
				err = io.ErrUnexpectedEOF
			}
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
}

// maxFields bounds the header names, and the values of one name, of a
// stored answer, so that a corrupt count is an error rather than a huge
// allocation.
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
