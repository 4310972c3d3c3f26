package main

// The HTTP server serve answers on: its limits on what one connection may
// cost (docs/OPERATIONS.md, Connections).

import (
	"log/slog"
	"net/http"
	"time"
)

// serverLimits bound what one connection may cost the server.
type serverLimits struct {
	// readHeader cuts off a client still sending its headers (slowloris).
	readHeader time.Duration
	// read bounds the whole request, body included.
	read time.Duration
	// write bounds the answer, so a client that never reads is let go.
	write time.Duration
	// idle closes keep-alive connections nobody uses.
	idle time.Duration
	// maxHeaderBytes bounds the request headers; net/http reads 4 KiB
	// beyond it before it answers 431.
	maxHeaderBytes int
}

var defaultLimits = serverLimits{
	readHeader:     5 * time.Second,
	read:           15 * time.Second,
	write:          30 * time.Second,
	idle:           2 * time.Minute,
	maxHeaderBytes: 16 << 10,
}

// newHTTPServer is the hardened server of docs/CONTRACT.md, Operations, around h.
func newHTTPServer(h http.Handler, log *slog.Logger, l serverLimits) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: l.readHeader,
		ReadTimeout:       l.read,
		WriteTimeout:      l.write,
		IdleTimeout:       l.idle,
		MaxHeaderBytes:    l.maxHeaderBytes,
		HTTP2:             &http.HTTP2Config{MaxConcurrentStreams: maxStreams},
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
}

// maxStreams bounds the requests in flight on one HTTP/2 connection
// (HTTPS only). A request whose client reads nothing holds its handler and
// answer until the write timeout, some 18 KiB for a 401 and more for a
// large answer, and HTTP/2 lets a client hold Go's default of 250 on each
// connection: 100 connections of 401s took 438 MiB. With 8, --max-conns
// bounds what such clients hold as it does over HTTP/1.1, where one
// request per connection is in flight (docs/OPERATIONS.md, Connections).
// Clients that want more in flight open more connections, as Go's do.
const maxStreams = 8
