package server

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/catalogd/catalogd/catalog"
	"github.com/catalogd/catalogd/data"
	"github.com/catalogd/catalogd/importer"
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
	t    testing.TB
	srv  *Server
	live *catalog.Live
	http *httptest.Server
	base string // the API's URL, path included
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	db, err := catalog.Open(sampleCatalogue(t))
	if err != nil {
		t.Fatal(err)
	}
	live := catalog.NewLive(db)
	t.Cleanup(func() { live.Close() })
	f := &fixture{t: t, live: live}
	f.http = httptest.NewUnstartedServer(nil)
	f.http.Start()
	t.Cleanup(f.http.Close)
	f.base = f.http.URL + testBasePath
	f.srv, err = New(Config{Catalog: live, BaseURL: f.base})
	if err != nil {
		t.Fatal(err)
	}
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
	for i := 0; i+1 < len(header); i += 2 {
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
