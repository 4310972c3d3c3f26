package server

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/catalogd/catalogd/catalog"
	"github.com/prometheus/client_golang/prometheus"
)

// RequestIDHeader carries the id that ties a request to its access-log line.
const RequestIDHeader = "X-Request-Id"

// routeMetrics are one route's series, resolved once so that a request
// costs no label lookup for its duration.
type routeMetrics struct {
	name       string
	requests   *prometheus.CounterVec
	ok         prometheus.Counter // requests answered 200, resolved once: the common case
	incomplete prometheus.Counter
	duration   prometheus.Observer
}

func (m *Metrics) route(name string) *routeMetrics {
	return &routeMetrics{
		name:       name,
		requests:   m.requests.MustCurryWith(prometheus.Labels{"route": name}),
		ok:         m.requests.WithLabelValues(name, "200"),
		incomplete: m.incomplete.WithLabelValues(name),
		duration:   m.duration.WithLabelValues(name),
	}
}

// observe counts a request answered with status in d; incomplete when its
// body could not be written whole.
func (rm *routeMetrics) observe(status int, d time.Duration, incomplete bool) {
	if incomplete {
		rm.incomplete.Inc()
	}
	if status == http.StatusOK {
		rm.ok.Inc()
	} else {
		rm.requests.WithLabelValues(statusLabel(status)).Inc()
	}
	rm.duration.Observe(d.Seconds())
}

// statusLabels holds the label of each status code, so that counting a
// request allocates nothing.
var statusLabels = func() (l [600]string) {
	for i := range l {
		l[i] = strconv.Itoa(i)
	}
	return l
}()

func statusLabel(status int) string {
	if status >= 0 && status < len(statusLabels) {
		return statusLabels[status]
	}
	return strconv.Itoa(status)
}

// firstHeader is h.Get for a key already in canonical form, which Get
// would otherwise canonicalize again on every request.
func firstHeader(h http.Header, canonicalKey string) string {
	if v := h[canonicalKey]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// maxRequestIDLen bounds a client's X-Request-Id; longer ones are replaced.
const maxRequestIDLen = 128

// requestIDs makes the ids of requests that bring none: a random prefix
// per server and a counter, unique across replicas by chance, and cheaper
// than reading randomness per request.
type requestIDs struct {
	prefix string
	count  atomic.Uint64
}

func newRequestIDs() requestIDs {
	b := make([]byte, 6)
	rand.Read(b)
	return requestIDs{prefix: hex.EncodeToString(b) + "-"}
}

// keep keeps a client's request id when it is short and printable ASCII,
// so that it cannot forge log lines, and otherwise makes one.
func (ids *requestIDs) keep(given string) string {
	if given != "" && len(given) <= maxRequestIDLen && printableASCII(given) {
		return given
	}
	var b [32]byte // the prefix's 13 bytes and at most 13 digits
	id := append(b[:0], ids.prefix...)
	return string(strconv.AppendUint(id, ids.count.Add(1), 36))
}

func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

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

// appendRFC3339Nano appends t as slog's JSON handler writes a time.
func appendRFC3339Nano(b []byte, t time.Time) []byte { return t.AppendFormat(b, time.RFC3339Nano) }
