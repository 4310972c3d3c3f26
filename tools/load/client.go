package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"
)

// client is one keep-alive HTTP/1.1 connection that sends prepared requests
// and reads the answers without allocating: the load generator must cost
// far less per request than the servers it measures, which net/http's
// client does not (it allocates a request, a response and their headers
// each time).
type client struct {
	addr     string
	deadline time.Time // of every read and write, so that a stuck server ends the run
	conn     net.Conn
	br       *bufio.Reader
}

// clientBuffer holds a response's headers and chunk lines; a body streams
// through it, so a large one (the list of sets is a megabyte on a million
// cards) takes few reads.
const clientBuffer = 256 << 10

func (c *client) dial() error {
	conn, err := net.DialTimeout("tcp", c.addr, 5*time.Second)
	if err != nil {
		return err
	}
	conn.SetDeadline(c.deadline)
	c.conn = conn
	if c.br == nil {
		c.br = bufio.NewReaderSize(conn, clientBuffer)
	} else {
		c.br.Reset(conn)
	}
	return nil
}

func (c *client) close() {
	if c.conn != nil {
		c.conn.Close()
		c.conn = nil
	}
}

// do sends one request and reads its answer to the end; an answer other
// than a 200 of the expected length is an error. A connection that failed or that the server closes is dialled
// again by the next call.
func (c *client) do(t *preparedTarget) error {
	if c.conn == nil {
		if err := c.dial(); err != nil {
			return err
		}
	}
	if _, err := c.conn.Write(t.raw); err != nil {
		c.close()
		return err
	}
	status, n, keep, err := readResponse(c.br)
	if err != nil {
		c.close()
		return err
	}
	if !keep {
		c.close()
	}
	switch {
	case status != 200:
		return fmt.Errorf("status %d", status)
	case n != t.want:
		return fmt.Errorf("body of %d bytes, want %d", n, t.want)
	}
	return nil
}

var (
	hdrContentLength    = []byte("content-length")
	hdrTransferEncoding = []byte("transfer-encoding")
	hdrConnection       = []byte("connection")
	valChunked          = []byte("chunked")
	valClose            = []byte("close")

	errMalformed = errors.New("malformed HTTP response")
)

// readResponse reads one HTTP/1.1 response, discarding its body, and
// returns its status, the body's length and whether the connection stays
// open. It understands Content-Length, chunked bodies and Connection: close,
// all a Go server sends to a GET.
func readResponse(br *bufio.Reader) (status int, n int64, keep bool, err error) {
	line, err := br.ReadSlice('\n')
	if err != nil {
		return 0, 0, false, err
	}
	// HTTP/1.1 200 OK
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) || line[8] != ' ' {
		return 0, 0, false, errMalformed
	}
	// strconv copies what it puts in an error, so string(b) does not
	// allocate here.
	code, err := strconv.ParseUint(string(line[9:12]), 10, 16)
	if err != nil {
		return 0, 0, false, errMalformed
	}
	status, keep = int(code), line[7] == '1'
	length, chunked := int64(-1), false
	for {
		line, err = br.ReadSlice('\n')
		if err != nil {
			return status, 0, false, err
		}
		line = trimCRLF(line)
		if len(line) == 0 {
			break
		}
		colon := bytes.IndexByte(line, ':')
		if colon < 0 {
			return status, 0, false, errMalformed
		}
		name, value := line[:colon], bytes.TrimSpace(line[colon+1:])
		switch {
		case bytes.EqualFold(name, hdrContentLength):
			l, err := strconv.ParseUint(string(value), 10, 63)
			if err != nil {
				return status, 0, false, errMalformed
			}
			length = int64(l)
		case bytes.EqualFold(name, hdrTransferEncoding):
			chunked = bytes.EqualFold(value, valChunked)
		case bytes.EqualFold(name, hdrConnection):
			if bytes.EqualFold(value, valClose) {
				keep = false
			}
		}
	}
	switch {
	case chunked:
		n, err = discardChunked(br)
		return status, n, keep, err
	case length >= 0:
		d, err := br.Discard(int(length))
		return status, int64(d), keep, err
	case status == 204 || status == 304 || status < 200:
		return status, 0, keep, nil
	}
	// No length: the body runs to the end of the connection.
	for {
		d, err := br.Discard(clientBuffer)
		n += int64(d)
		if err != nil {
			return status, n, false, nil
		}
	}
}

func discardChunked(br *bufio.Reader) (int64, error) {
	var n int64
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return n, err
		}
		line = trimCRLF(line)
		if i := bytes.IndexByte(line, ';'); i >= 0 {
			line = line[:i]
		}
		size, err := strconv.ParseUint(string(bytes.TrimSpace(line)), 16, 63)
		if err != nil {
			return n, errMalformed
		}
		if size == 0 {
			// Trailers, up to an empty line.
			for {
				line, err := br.ReadSlice('\n')
				if err != nil {
					return n, err
				}
				if len(trimCRLF(line)) == 0 {
					return n, nil
				}
			}
		}
		d, err := br.Discard(int(size))
		n += int64(d)
		if err != nil {
			return n, err
		}
		if line, err := br.ReadSlice('\n'); err != nil {
			return n, err
		} else if len(trimCRLF(line)) != 0 {
			return n, errMalformed
		}
	}
}

func trimCRLF(b []byte) []byte {
	b = bytes.TrimSuffix(b, []byte("\n"))
	return bytes.TrimSuffix(b, []byte("\r"))
}
