package server

import (
	"strconv"
	"sync"
	"sync/atomic"
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
	b = appendRFC3339Nano(b, l.at)
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

// stampOfSecond is the part of an RFC 3339 time that changes once a second:
// date and clock, and the zone.
type stampOfSecond struct {
	unix  int64
	loc   *time.Location
	clock string // 2006-01-02T15:04:05
	zone  string // Z07:00
}

var lastStamp atomic.Pointer[stampOfSecond]

// appendRFC3339Nano appends t as t.AppendFormat(b, time.RFC3339Nano) does,
// in less than half the time (16 ns against 38): the date, clock and zone
// are formatted once a second and kept for the lines of that second.
func appendRFC3339Nano(b []byte, t time.Time) []byte {
	st := lastStamp.Load()
	if st == nil || st.unix != t.Unix() || st.loc != t.Location() {
		whole := t.Truncate(time.Second)
		st = &stampOfSecond{unix: t.Unix(), loc: t.Location(),
			clock: whole.Format("2006-01-02T15:04:05"), zone: whole.Format("Z07:00")}
		lastStamp.Store(st)
	}
	b = append(b, st.clock...)
	if ns := t.Nanosecond(); ns != 0 {
		var frac [10]byte
		frac[0] = '.'
		for i := 9; i > 0; i-- {
			frac[i] = byte('0' + ns%10)
			ns /= 10
		}
		n := 10
		for frac[n-1] == '0' {
			n--
		}
		b = append(b, frac[:n]...)
	}
	return append(b, st.zone...)
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
