package auth

import (
	"context"
	"net"
	"sync/atomic"
	"time"
)

// A partner's client sends the same Authorization header on every request
// of a kept-alive connection. The token cache finds such a header by its
// SHA-256, which is most of what a cached verification costs; a connection
// that remembers the last header it had verified answers with one string
// comparison instead. The memo holds the token only as long as the
// connection does, which also holds it in its read buffer; the process-wide
// cache still never holds a usable token.

// connMemo is the last verification on one connection. HTTP/2 serves a
// connection's streams concurrently, hence the atomic pointer.
type connMemo struct {
	last atomic.Pointer[memoEntry]
}

type memoEntry struct {
	header    string
	principal Principal
	until     time.Time // as in the token cache: never later than exp
}

type connMemoKey struct{}

// ConnContext gives each connection a memo of the last header verified on
// it. It has the signature of http.Server.ConnContext; without it, Verify
// goes to the token cache for every request.
func ConnContext(ctx context.Context, _ net.Conn) context.Context {
	return context.WithValue(ctx, connMemoKey{}, new(connMemo))
}

func connMemoFrom(ctx context.Context) *connMemo {
	m, _ := ctx.Value(connMemoKey{}).(*connMemo)
	return m
}

// lookup returns the principal of header when it is the header last
// verified on the connection and that verification still holds at now.
func (m *connMemo) lookup(header string, now time.Time) (Principal, bool) {
	if m == nil {
		return Principal{}, false
	}
	e := m.last.Load()
	if e == nil || e.header != header || !now.Before(e.until) {
		return Principal{}, false
	}
	return e.principal, true
}

// remember makes header the one last verified on the connection.
func (m *connMemo) remember(header string, p Principal, until time.Time) {
	if m == nil {
		return
	}
	m.last.Store(&memoEntry{header: header, principal: p, until: until})
}
