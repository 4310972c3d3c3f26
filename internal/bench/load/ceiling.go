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
	"strconv"
	"time"
)

// The ceiling is the least a net/http server can do to give the same
// answers: look the request target up in a map and write the bytes catalogd
// wrote, with Content-Type, Content-Length and, for compressed answers,
// Content-Encoding. No routing, no token check, no catalogue, no
// negotiation, no logging. Its server has catalogd's timeouts and header
// limit, so that both pay for the same connection handling.

// writeBodies stores every request target of routes with its answer, for
// the ceiling: for each, the target, the answer's Content-Encoding ("" when
// plain) and the answer, each preceded by its length as a uvarint.
func writeBodies(path string, routes []route) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	var n [binary.MaxVarintLen64]byte
	field := func(b []byte) {
		w.Write(n[:binary.PutUvarint(n[:], uint64(len(b)))])
		w.Write(b)
	}
	for _, r := range routes {
		for _, t := range r.targets {
			field([]byte(t.uri))
			field([]byte(t.encoding))
			field(t.body)
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
	body     []byte
	length   []string // nil when net/http writes the length itself
	encoding []string // nil when the body is not compressed
}

// autoLengthMax is catalogd's (server.autoLengthMax): net/http writes the
// length of answers up to it itself, more cheaply than from the header map.
const autoLengthMax = 2048

// newAnswer stores body, compressed with encoding unless that is "". Like
// catalogd, the ceiling declares the length of answers over autoLengthMax
// only.
func newAnswer(body []byte, encoding string) answer {
	a := answer{body: body}
	if len(body) > autoLengthMax {
		a.length = []string{strconv.Itoa(len(body))}
	}
	if encoding != "" {
		a.encoding = []string{encoding}
	}
	return a
}

func readBodies(path string) (map[string]answer, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := bufio.NewReader(f)
	out := map[string]answer{}
	next := func() ([]byte, error) {
		n, err := binary.ReadUvarint(r)
		if err != nil {
			return nil, err
		}
		b := make([]byte, n)
		if _, err = io.ReadFull(r, b); errors.Is(err, io.EOF) {
			// The length was there, the bytes are not.
			err = io.ErrUnexpectedEOF
		}
		return b, err
	}
	// rest reads a field after a record's target: the end of the file there
	// means the file was cut short.
	rest := func() ([]byte, error) {
		b, err := next()
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return b, nil
	}
	for {
		uri, err := next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		encoding, err := rest()
		if err != nil {
			return nil, err
		}
		body, err := rest()
		if err != nil {
			return nil, err
		}
		out[string(uri)] = newAnswer(body, string(encoding))
	}
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
	contentType := []string{"application/json"}
	answers["/readyz"] = newAnswer([]byte(`{"status":"ok"}`), "")
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			a, ok := answers[r.RequestURI]
			if !ok {
				http.NotFound(w, r)
				return
			}
			h := w.Header()
			h["Content-Type"] = contentType
			if a.length != nil {
				h["Content-Length"] = a.length
			}
			if a.encoding != nil {
				h["Content-Encoding"] = a.encoding
			}
			w.WriteHeader(http.StatusOK)
			w.Write(a.body)
		}),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       15 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    16 << 10,
	}
	return srv.Serve(ln)
}
