package server

import (
	"strconv"
	"sync"
	"time"

	"github.com/catalogd/catalogd/catalog"
)

// accessLine is what the access log says of one request.
type accessLine struct {
	at        time.Time
	method    string
	route     string
	path      string
	status    int
	bytes     int64
	elapsed   time.Duration
	clientID  string
	requestID string
	remote    string
	writeErr  error // nil when the answer was written whole
}

// appendJSON appends l as one line of JSON in the shape slog's JSON handler
// gives every other log line, so that one parser reads the whole log. It is
// written by hand because it runs once per request: slog's attribute
// handling cost more than the rest of a cached getCard's logging.
func (l *accessLine) appendJSON(b []byte) []byte {
	b = append(b, `{"time":"`...)
	b = l.at.AppendFormat(b, time.RFC3339Nano)
	if l.writeErr != nil {
		// The status went out but not the whole body: the client has a
		// broken answer, which is worth a warning.
		b = append(b, `","level":"WARN","msg":"request","method":`...)
	} else {
		b = append(b, `","level":"INFO","msg":"request","method":`...)
	}
	b = catalog.AppendJSONString(b, l.method)
	b = append(b, `,"route":`...)
	b = catalog.AppendJSONString(b, l.route)
	b = append(b, `,"path":`...)
	b = catalog.AppendJSONString(b, l.path)
	b = append(b, `,"status":`...)
	b = strconv.AppendInt(b, int64(l.status), 10)
	b = append(b, `,"bytes":`...)
	b = strconv.AppendInt(b, l.bytes, 10)
	b = append(b, `,"duration_ms":`...)
	b = appendMillis(b, l.elapsed)
	b = append(b, `,"client_id":`...)
	b = catalog.AppendJSONString(b, l.clientID)
	b = append(b, `,"request_id":`...)
	b = catalog.AppendJSONString(b, l.requestID)
	b = append(b, `,"remote":`...)
	b = catalog.AppendJSONString(b, l.remote)
	if l.writeErr != nil {
		b = append(b, `,"error":`...)
		b = catalog.AppendJSONString(b, l.writeErr.Error())
	}
	return append(b, "}\n"...)
}

// appendMillis appends d in milliseconds with microsecond precision.
func appendMillis(b []byte, d time.Duration) []byte {
	us := d.Microseconds()
	if us < 0 {
		us = 0
	}
	b = strconv.AppendInt(b, us/1000, 10)
	frac := us % 1000
	return append(b, '.', byte('0'+frac/100), byte('0'+frac/10%10), byte('0'+frac%10))
}

var accessBufs = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// logAccess writes l to the access log, when there is one.
func (s *Server) logAccess(l *accessLine) {
	if s.accessLog == nil {
		return
	}
	buf := accessBufs.Get().(*[]byte)
	*buf = l.appendJSON((*buf)[:0])
	s.accessLog.Write(*buf)
	if cap(*buf) <= 64<<10 {
		accessBufs.Put(buf)
	}
}
