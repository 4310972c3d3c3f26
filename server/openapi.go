package server

import _ "embed"

//go:embed openapi.yaml
var openAPIDocument []byte

// OpenAPI returns the OpenAPI 3.1 document of the partner API.
func OpenAPI() []byte { return openAPIDocument }

// newOpenAPIFile serves the document as written, at {base URL}/openapi.yaml,
// as the reference page's files are served: with a validator, compressed
// once for the clients that take gzip.
func newOpenAPIFile() *staticFile {
	return newStaticFile("application/yaml", "no-cache", openAPIDocument)
}
