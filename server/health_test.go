package server

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/catalogd/catalogd/server/auth"
)

func probe(t *testing.T, url string) (int, map[string]string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body map[string]string
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatalf("%s: %v", url, err)
	}
	return resp.StatusCode, body
}

// TestProbes: /healthz answers as long as the process does; /readyz only
// once the identity provider's keys are loaded, and both without a token.
func TestProbes(t *testing.T) {
	idp := newOIDCIdP(t, rsaSigningKey(t, "probe-rsa", 0))
	idp.setMode(idpUnavailable)
	as := newAuthServer(t, idp, func(c *auth.Config) { c.RefreshRateLimit = 100 * time.Millisecond })
	origin := as.http.URL

	if code, body := probe(t, origin+"/healthz"); code != http.StatusOK || body["status"] != "ok" {
		t.Errorf("/healthz with the identity provider down: %d %v", code, body)
	}
	if code, body := probe(t, origin+"/readyz"); code != http.StatusServiceUnavailable || body["status"] != "unavailable" {
		t.Errorf("/readyz with the identity provider down: %d %v", code, body)
	}

	idp.setMode(idpUp)
	deadline := time.Now().Add(10 * time.Second)
	for {
		code, body := probe(t, origin+"/readyz")
		if code == http.StatusOK && body["generation"] != "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz never became ready after the identity provider came back: %d %v", code, body)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
