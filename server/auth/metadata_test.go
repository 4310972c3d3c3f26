package auth

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
)

func TestMetadataHandler(t *testing.T) {
	h := MetadataHandler(testAudience, []string{"https://idp.example/"})
	const body = `{"resource":"http://127.0.0.1:8080/api/v1/mcp","authorization_servers":["https://idp.example/"],"scopes_supported":["catalog:read"],"bearer_methods_supported":["header"]}`
	cases := []struct {
		method string
		status int
		body   string
		allow  string
	}{
		{http.MethodGet, http.StatusOK, body, ""},
		{http.MethodHead, http.StatusOK, "", ""},
		{http.MethodOptions, http.StatusNoContent, "", "GET, HEAD, OPTIONS"},
		{http.MethodPost, http.StatusMethodNotAllowed, "method not allowed\n", "GET, HEAD, OPTIONS"},
	}
	for _, tc := range cases {
		t.Run(tc.method, func(t *testing.T) {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(tc.method, "/.well-known/oauth-protected-resource/api/v1/mcp", nil))
			if rec.Code != tc.status {
				t.Fatalf("status = %d, want %d", rec.Code, tc.status)
			}
			if got := rec.Body.String(); got != tc.body {
				t.Errorf("body = %s, want %s", got, tc.body)
			}
			if got := rec.Header().Get("Access-Control-Allow-Origin"); got != "*" {
				t.Errorf("Access-Control-Allow-Origin = %q, want *", got)
			}
			if got := rec.Header().Get("Allow"); got != tc.allow {
				t.Errorf("Allow = %q, want %q", got, tc.allow)
			}
			if tc.status == http.StatusOK {
				if got := rec.Header().Get("Content-Type"); got != "application/json" {
					t.Errorf("Content-Type = %q", got)
				}
				if got, want := rec.Header().Get("Content-Length"), strconv.Itoa(len(body)); got != want {
					t.Errorf("Content-Length = %q, want %q", got, want)
				}
			}
		})
	}
	t.Run("NoAuthorizationServers", func(t *testing.T) {
		rec := httptest.NewRecorder()
		MetadataHandler(testAudience, nil).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
		want := `{"resource":"http://127.0.0.1:8080/api/v1/mcp","scopes_supported":["catalog:read"],"bearer_methods_supported":["header"]}`
		if got := rec.Body.String(); got != want {
			t.Errorf("body = %s, want %s", got, want)
		}
	})
}
