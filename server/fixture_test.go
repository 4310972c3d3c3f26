package server

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/catalogd/catalogd/catalog/store"
	"github.com/catalogd/catalogd/data"
	"github.com/catalogd/catalogd/importer"
	"github.com/catalogd/catalogd/server/auth"
	"github.com/golang-jwt/jwt/v5"
)

// testBasePath is where the tests mount the API, as the default base URL does.
const testBasePath = "/api/v1"

var (
	sampleOnce sync.Once
	sampleDir  string
	samplePath string
	sampleErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if sampleDir != "" {
		os.RemoveAll(sampleDir)
	}
	os.Exit(code)
}

// sampleCatalogue imports the built-in sample plus testdata/odd.json (ids
// with "/", spaces, "%" and non-ASCII, and a code shared by two zones) into
// a real bbolt file, once for the package.
func sampleCatalogue(t testing.TB) string {
	t.Helper()
	sampleOnce.Do(func() {
		sampleDir, sampleErr = os.MkdirTemp("", "catalogd-server-test-")
		if sampleErr != nil {
			return
		}
		sample := filepath.Join(sampleDir, data.SampleName)
		if sampleErr = os.WriteFile(sample, data.Sample(), 0o600); sampleErr != nil {
			return
		}
		samplePath = filepath.Join(sampleDir, "catalog.db")
		_, sampleErr = importer.Import(context.Background(), importer.Config{
			DB:     samplePath,
			Inputs: []string{sample, "testdata/odd.json"},
		})
	})
	if sampleErr != nil {
		t.Fatalf("sample catalogue: %v", sampleErr)
	}
	return samplePath
}

// fixture is a real Server over a real catalogue file behind a real HTTP
// listener.
type fixture struct {
	t     testing.TB
	srv   *Server
	live  *store.Live
	http  *httptest.Server
	base  string // the API's URL, path included
	idp   *testIdP
	token string // a valid token, sent unless a test sets Authorization
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	return newFixtureWith(t, nil)
}

// newFixtureWith lets configure change the Server's Config (its logger,
// its metrics) before the Server is built.
func newFixtureWith(t testing.TB, configure func(*Config)) *fixture {
	t.Helper()
	return newFixtureAt(t, sampleCatalogue(t), configure)
}

// newFixtureAt is newFixtureWith over the catalogue file at path.
func newFixtureAt(t testing.TB, path string, configure func(*Config)) *fixture {
	t.Helper()
	db, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	live := store.NewLive(db)
	t.Cleanup(func() { live.Close() })
	f := &fixture{t: t, live: live}
	f.http = httptest.NewUnstartedServer(nil)
	f.http.Start()
	t.Cleanup(f.http.Close)
	f.base = f.http.URL + testBasePath
	f.idp = newTestIdP(t, f.base+"/mcp")
	cfg := Config{Catalog: live, BaseURL: f.base, Auth: f.idp.verifier, AuthorizationServers: []string{f.idp.URL}}
	if configure != nil {
		configure(&cfg)
	}
	f.srv, err = New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	f.token = f.idp.token(t)
	f.http.Config.Handler = f.srv
	return f
}

// response is one answer, read whole.
type response struct {
	status int
	header http.Header
	body   []byte
}

func (r *response) json(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("body is not JSON: %v\n%s", err, r.body)
	}
}

// do sends method to the raw target (a path under the base, escaped as the
// client would send it) and checks the answer against the OpenAPI document.
func (f *fixture) do(method, target string, header ...string) *response {
	f.t.Helper()
	req, err := http.NewRequest(method, f.base+target, nil)
	if err != nil {
		f.t.Fatalf("%s %s: %v", method, target, err)
	}
	req.Header.Set("Authorization", "Bearer "+f.token)
	for i := 0; i+1 < len(header); i += 2 {
		if header[i+1] == "" {
			req.Header.Del(header[i])
			continue
		}
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := f.http.Client().Do(req)
	if err != nil {
		f.t.Fatalf("%s %s: %v", method, target, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		f.t.Fatalf("%s %s: read body: %v", method, target, err)
	}
	if method == http.MethodGet && strings.HasPrefix(target, "/catalog/") {
		validateResponse(f.t, req, resp.StatusCode, resp.Header, body)
	}
	return &response{status: resp.StatusCode, header: resp.Header, body: body}
}

func (f *fixture) get(target string) *response {
	f.t.Helper()
	return f.do(http.MethodGet, target)
}

// wantStatus fails unless r has the status, showing the body otherwise.
func (r *response) wantStatus(t testing.TB, status int) {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d; body: %s", r.status, status, r.body)
	}
}

// testIdP is an identity provider over real HTTP: the dev issuer's JWKS and
// token endpoint, with a real EC key, and a verifier pointed at it.
type testIdP struct {
	*httptest.Server
	key      *ecdsa.PrivateKey
	issuer   *auth.DevIssuer
	verifier *auth.Verifier
	audience string
}

func newTestIdP(t testing.TB, audience string) *testIdP {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	idp := &testIdP{key: key, audience: audience}
	mux := http.NewServeMux()
	idp.Server = httptest.NewServer(mux)
	t.Cleanup(idp.Close)
	idp.issuer = auth.NewDevIssuer(key, idp.URL, audience, "partner-1", "s3cret", 24*time.Hour)
	mux.Handle("/.well-known/jwks.json", idp.issuer.JWKSHandler())
	mux.Handle("/.well-known/openid-configuration", idp.issuer.OpenIDConfigurationHandler())
	mux.Handle("/oauth/token", idp.issuer.TokenHandler())
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	idp.verifier, err = auth.NewVerifier(ctx, auth.Config{Issuer: idp.URL, Audience: audience})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(idp.verifier.Close)
	return idp
}

// token is a fresh valid token of the dev issuer.
func (idp *testIdP) token(t testing.TB) string {
	t.Helper()
	tok, _, err := idp.issuer.Token(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// sign signs arbitrary claims with the IdP's key, without a kid, so that a
// test can make tokens the dev issuer would not.
func (idp *testIdP) sign(t testing.TB, claims jwt.MapClaims) string {
	t.Helper()
	tok, err := jwt.NewWithClaims(jwt.SigningMethodES256, claims).SignedString(idp.key)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}
