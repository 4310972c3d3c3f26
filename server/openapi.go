package server

import (
	_ "embed"
	"net/http"
	"strconv"
)

//go:embed openapi.yaml
var openAPIDocument []byte

// OpenAPI returns the OpenAPI 3.1 document of the partner API.
func OpenAPI() []byte { return openAPIDocument }

func handleOpenAPI() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Type", "application/yaml")
		h.Set("Content-Length", strconv.Itoa(len(openAPIDocument)))
		w.WriteHeader(http.StatusOK)
		w.Write(openAPIDocument)
	})
}
