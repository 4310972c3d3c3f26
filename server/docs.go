package server

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// The API reference page ({base URL}/docs) is Swagger UI over the OpenAPI
// document, served from the binary: nothing on the page comes from another
// origin. server/apidocs/refresh.sh replaces the Swagger UI files with
// another release of swagger-ui-dist.
//
//go:embed apidocs/index.html apidocs/page.js apidocs/swagger-ui-bundle.js apidocs/swagger-ui.css
var apiDocsFiles embed.FS

// docsPolicy is the Content-Security-Policy of every file of the page:
// scripts, style sheets, images and requests from the page's own origin
// only, nothing inline, nothing else. Swagger UI sets its styles through
// the DOM, which the policy allows, and draws its icons as data: images.
// The browser test reports any violation as a console error.
const docsPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; " +
	"img-src 'self' data:; font-src 'self'; connect-src 'self'; " +
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// The URLs in openapi.yaml that name the default local server; the page's
// copy of the document names the running server instead.
const (
	documentServerURL = "http://127.0.0.1:8080/api/v1"
	documentTokenURL  = "http://127.0.0.1:8080/oauth/token"
)

// staticFile is one file of the page, with its validators and its
// compressed form. That is made once, by the first request that takes
// gzip, which the others wait for: compressing the bundle costs more than
// a server start should (every test builds servers), and is wasted on a
// server whose page nobody reads.
type staticFile struct {
	contentType  []string
	cacheControl []string
	etag         []string
	body         []byte
	gzipOnce     sync.Once
	gzipped      *encodedAnswer
}

func newStaticFile(contentType, cacheControl string, body []byte) *staticFile {
	sum := sha256.Sum256(body)
	tag := `"` + base64.RawURLEncoding.EncodeToString(sum[:16]) + `"`
	return &staticFile{
		contentType:  []string{contentType},
		cacheControl: []string{cacheControl},
		etag:         []string{tag},
		body:         body,
	}
}

// compressed returns the file compressed.
func (f *staticFile) compressed() *encodedAnswer {
	f.gzipOnce.Do(func() { f.gzipped = encodeGzip(f.etag[0], f.body) })
	return f.gzipped
}

// ServeHTTP answers the file, compressed for clients that take gzip, as
// the catalogue's answers are, or the 304 or 412 its preconditions call
// for.
func (f *staticFile) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", docsPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h["Cache-Control"] = f.cacheControl
	h["Etag"] = f.etag
	gzipped := compressible(len(f.body))
	if gzipped {
		varyOnAcceptEncoding(h)
		gzipped = acceptsGzip(r)
	}
	body := f.body
	if gzipped {
		z := f.compressed()
		h["Etag"] = z.etag
		body = z.body
	}
	if !preconditionsHold(w, r, h["Etag"][0]) {
		return
	}
	if gzipped {
		h["Content-Encoding"] = gzipEncoding
	}
	h["Content-Type"] = f.contentType
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	w.Write(body)
}

// docsSettings tells the page's script how to run "Try it out".
type docsSettings struct {
	// DevToken is where the page of serve --dev gets its token; without
	// it the page is a reference only and sends no request to the API.
	DevToken *docsDevToken `json:"devToken,omitempty"`
}

// docsDevToken is the client-credentials grant of the dev issuer. Its
// secret is the dev server's, which only listens on loopback.
type docsDevToken struct {
	TokenURL     string `json:"tokenUrl"`
	ClientID     string `json:"clientId"`
	ClientSecret string `json:"clientSecret"`
	Audience     string `json:"audience"`
}

// docsFiles returns the files of the page by their path under the base
// path: the page itself, its script and style sheets, the OpenAPI document
// as the running server answers it, and the page's settings.
func (s *Server) docsFiles() (map[string]http.Handler, error) {
	files := map[string]http.Handler{}
	for path, file := range map[string]struct{ name, contentType string }{
		"/docs":                      {"index.html", "text/html; charset=utf-8"},
		"/docs/page.js":              {"page.js", "text/javascript; charset=utf-8"},
		"/docs/swagger-ui-bundle.js": {"swagger-ui-bundle.js", "text/javascript; charset=utf-8"},
		"/docs/swagger-ui.css":       {"swagger-ui.css", "text/css; charset=utf-8"},
	} {
		body, err := apiDocsFiles.ReadFile("apidocs/" + file.name)
		if err != nil {
			return nil, fmt.Errorf("server: API reference page: %w", err)
		}
		// The bytes are fixed in the binary; revalidating them costs a 304.
		files[path] = newStaticFile(file.contentType, "no-cache", body)
	}

	tokenURL := ""
	var settings docsSettings
	switch {
	case s.dev != nil:
		// The dev issuer answers at the server's own origin.
		tokenURL = s.baseURL.Scheme + "://" + s.baseURL.Host + "/oauth/token"
		id, secret := s.dev.Client()
		settings.DevToken = &docsDevToken{TokenURL: tokenURL, ClientID: id, ClientSecret: secret, Audience: s.audience.String()}
	case len(s.authServers) > 0 && s.authServers[0] != "":
		tokenURL = strings.TrimRight(s.authServers[0], "/") + "/oauth/token"
	}
	doc, err := documentFor(OpenAPI(), s.baseURL.String(), tokenURL)
	if err != nil {
		return nil, fmt.Errorf("server: API reference page: %w", err)
	}
	files["/docs/openapi.yaml"] = newStaticFile("application/yaml", "no-cache", doc)
	body, err := json.Marshal(settings)
	if err != nil {
		return nil, fmt.Errorf("server: API reference page settings: %w", err)
	}
	// The dev settings hold a client secret: no cache keeps them, and only
	// a page of a loopback host reads them.
	files["/docs/settings.json"] = newStaticFile("application/json", "no-store", body)
	if s.dev != nil {
		files["/docs/settings.json"] = s.devHostsOnly(files["/docs/settings.json"])
	}
	return files, nil
}

// documentFor returns the OpenAPI document with the running server's base
// URL in place of the default one, and tokenURL, when not empty, as the
// token URL of the client-credentials flow, so that the page shows (and,
// in dev mode, calls) the URLs a reader will use.
func documentFor(doc []byte, baseURL, tokenURL string) ([]byte, error) {
	replace := func(doc []byte, key, old, new string) ([]byte, error) {
		line := []byte(key + ": " + old + "\n")
		if n := bytes.Count(doc, line); n != 1 {
			return nil, fmt.Errorf("openapi.yaml: %q appears %d times, want once", strings.TrimSpace(string(line)), n)
		}
		quoted, _ := json.Marshal(new) // a JSON string is a YAML scalar too
		return bytes.Replace(doc, line, []byte(key+": "+string(quoted)+"\n"), 1), nil
	}
	doc, err := replace(doc, "- url", documentServerURL, strings.TrimRight(baseURL, "/"))
	if err != nil || tokenURL == "" {
		return doc, err
	}
	return replace(doc, "tokenUrl", documentTokenURL, tokenURL)
}
