// Package httpapi is the query service's HTTP JSON API over an engine.Engine: the routes
// under /v1/ (query, with server-sent events when streamed; retrieve; an entity's
// neighbourhood; corpus statistics), the OpenAPI 3.1 document that describes them
// (openapi.json, embedded and served at /openapi.json), and the guard every route goes
// through: bearer-token authentication, a per-client rate limit, a body size limit and a
// request deadline. Errors are JSON {"error": "..."} with the status the engine's error
// implies (400, 404, 413, 504, else 500).
package httpapi
