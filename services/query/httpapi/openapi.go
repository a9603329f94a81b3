package httpapi

import _ "embed"

// openAPI is served at GET /openapi.json; the tests check that it documents exactly the
// routes New registers.
//
//go:embed openapi.json
var openAPI []byte

// OpenAPI returns the OpenAPI 3.1 document of the HTTP API.
func OpenAPI() []byte { return openAPI }
