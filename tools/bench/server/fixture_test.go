package serverbench

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/catalogd/catalogd/catalog/store"
	"github.com/catalogd/catalogd/server"
	"github.com/catalogd/catalogd/server/auth"
)

// fixture is a real Server over a real catalogue file behind a real HTTP
// listener, as the server package's own tests build one: its tokens are
// the dev issuer's, with an EC key, verified through the issuer's JWKS
// over HTTP as serve verifies an identity provider's.
type fixture struct {
	srv   *server.Server
	live  *store.Live
	http  *httptest.Server
	base  string // the API's URL, path included
	token string // a valid token
}

// newFixture serves the catalogue file at path; configure changes the
// Server's Config (its access log, its answer cache) before it is built.
func newFixture(b *testing.B, path string, configure func(*server.Config)) *fixture {
	b.Helper()
	db, err := store.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	f := &fixture{live: store.NewLive(db)}
	b.Cleanup(func() { f.live.Close() })
	f.http = httptest.NewUnstartedServer(nil)
	f.http.Start()
	b.Cleanup(f.http.Close)
	f.base = f.http.URL + "/api/v1"
	audience := f.base + "/mcp"

	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		b.Fatal(err)
	}
	mux := http.NewServeMux()
	idp := httptest.NewServer(mux)
	b.Cleanup(idp.Close)
	issuer := auth.NewDevIssuer(key, idp.URL, audience, "partner-1", "s3cret", 24*time.Hour)
	mux.Handle("/.well-known/jwks.json", issuer.JWKSHandler())
	mux.Handle("/.well-known/openid-configuration", issuer.OpenIDConfigurationHandler())
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	verifier, err := auth.NewVerifier(ctx, auth.Config{Issuer: idp.URL, Audience: audience})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(verifier.Close)

	cfg := server.Config{Catalog: f.live, BaseURL: f.base, Auth: verifier, AuthorizationServers: []string{idp.URL}}
	if configure != nil {
		configure(&cfg)
	}
	if f.srv, err = server.New(cfg); err != nil {
		b.Fatal(err)
	}
	if f.token, _, err = issuer.Token(time.Now()); err != nil {
		b.Fatal(err)
	}
	f.http.Config.Handler = f.srv
	return f
}

// getJSON reads the answer to target, a path under the API's URL, over
// HTTP, uncompressed, into v; anything but a 200 fails b.
func (f *fixture) getJSON(b *testing.B, target string, v any) {
	b.Helper()
	req, err := http.NewRequest(http.MethodGet, f.base+target, nil)
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+f.token)
	req.Header.Set("Accept-Encoding", "identity")
	resp, err := f.http.Client().Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b.Fatalf("%s: status %d", target, resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		b.Fatalf("%s: %v", target, err)
	}
}

// discardWriter is a ResponseWriter that keeps only the status and the
// number of bytes, as a connection writing to the network would.
type discardWriter struct {
	header http.Header
	status int
	bytes  int64
}

func (w *discardWriter) Header() http.Header { return w.header }

func (w *discardWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}

func (w *discardWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	w.bytes += int64(len(p))
	return len(p), nil
}

// accessLog is serve's access log batched to io.Discard, as the server
// package's benchmarks have it: each line is copied into the batch under a
// lock, and a full batch (64 KiB) is let go, where serve's batched writer
// would hand it to its ticker to write. A request pays what it pays in
// serve; nothing is written.
type accessLog struct {
	mu    sync.Mutex
	batch []byte
}

func (l *accessLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.batch == nil {
		l.batch = make([]byte, 0, 64<<10+4096)
	}
	l.batch = append(l.batch, p...)
	if len(l.batch) >= 64<<10 {
		l.batch = l.batch[:0]
	}
	return len(p), nil
}
