package auth

import (
	"encoding/json"
	"net/http"
	"strconv"
)

// MetadataHandler serves the RFC 9728 protected resource metadata of
// resource (the audience URL). It needs no authentication and may be read
// from any origin, since clients discover how to authenticate through it.
func MetadataHandler(resource string, authorizationServers []string) http.Handler {
	body, err := json.Marshal(struct {
		Resource               string   `json:"resource"`
		AuthorizationServers   []string `json:"authorization_servers,omitempty"`
		ScopesSupported        []string `json:"scopes_supported"`
		BearerMethodsSupported []string `json:"bearer_methods_supported"`
	}{resource, authorizationServers, []string{Scope}, []string{"header"}})
	if err != nil {
		// Only strings are marshalled; this cannot happen.
		panic("auth: marshal protected resource metadata: " + err.Error())
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !readable(w, r) {
			return
		}
		writeDocument(w, r, body, "public, max-age=3600")
	})
}

// writeDocument answers a read of a public JSON document: its body for GET,
// its headers alone for HEAD.
func writeDocument(w http.ResponseWriter, r *http.Request, body []byte, cacheControl string) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	h.Set("Cache-Control", cacheControl)
	if r.Method == http.MethodGet {
		w.Write(body)
	}
}

// readable answers what a public document answers to any method but GET and
// HEAD, a browser-based client's preflight (OPTIONS) included, and reports
// whether the request is a read to answer with the document. Any origin may
// read a public document.
func readable(w http.ResponseWriter, r *http.Request) bool {
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", "*")
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		return true
	case http.MethodOptions:
		h.Set("Access-Control-Allow-Methods", "GET, HEAD, OPTIONS")
		h.Set("Access-Control-Allow-Headers", "*")
		h.Set("Access-Control-Max-Age", "86400")
		h.Set("Allow", "GET, HEAD, OPTIONS")
		w.WriteHeader(http.StatusNoContent)
	default:
		h.Set("Allow", "GET, HEAD, OPTIONS")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	}
	return false
}
