package main

import (
	"context"
	"fmt"
	"net"
	"sync"
	"time"
)

// connLog follows the connections the traffic opens, to tell a server that
// drops keep-alive connections from a client that closes them.
type connLog struct {
	start time.Time

	mu     sync.Mutex
	opened int
	closes []connClose
}

// connClose is the end of one connection.
type connClose struct {
	at        time.Duration // since traffic started
	local     string
	lived     time.Duration
	bytesRead int64
	// readErr is the error a read met before the connection was closed:
	// io.EOF when the server closed it. Nil when the client closed it
	// first.
	readErr error
}

func (c connClose) String() string {
	who := "the client closed it"
	if c.readErr != nil {
		who = "the server's side ended first: " + c.readErr.Error()
	}
	return fmt.Sprintf("at %s, %s after it opened, %d bytes read, local %s: %s",
		clock(c.at), round(c.lived), c.bytesRead, c.local, who)
}

// dial opens a connection the log follows.
func (l *connLog) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	conn, err := (&net.Dialer{Timeout: 5 * time.Second}).DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	l.opened++
	l.mu.Unlock()
	return &trackedConn{Conn: conn, log: l, opened: time.Now()}, nil
}

func (l *connLog) closed(c connClose) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closes = append(l.closes, c)
}

// before returns the connections opened and those closed before t.
func (l *connLog) before(t time.Time) (opened int, closes []connClose) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, c := range l.closes {
		if l.start.Add(c.at).Before(t) {
			closes = append(closes, c)
		}
	}
	return l.opened, closes
}

// trackedConn notes how its connection ends.
type trackedConn struct {
	net.Conn
	log    *connLog
	opened time.Time

	mu      sync.Mutex
	read    int64
	readErr error
	closed  bool
}

func (c *trackedConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	c.mu.Lock()
	c.read += int64(n)
	if err != nil && c.readErr == nil && !c.closed {
		c.readErr = err
	}
	c.mu.Unlock()
	return n, err
}

func (c *trackedConn) Close() error {
	c.mu.Lock()
	first := !c.closed
	c.closed = true
	cl := connClose{at: time.Since(c.log.start), local: c.LocalAddr().String(), lived: time.Since(c.opened),
		bytesRead: c.read, readErr: c.readErr}
	c.mu.Unlock()
	if first {
		c.log.closed(cl)
	}
	return c.Conn.Close()
}
