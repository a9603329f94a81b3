// Package httpapi is the query service's HTTP JSON API over an ask.Asker: the routes
// under /v1/ (query, with server-sent events when streamed; retrieve; an entity's
// neighbourhood; corpus statistics; the corpus and document resources: listings,
// status, upload, deletion, export; OpenAI-compatible chat completions and models) and
// the Ollama-compatible routes under /api/ (chat, generate, tags, show, version),
// the OpenAPI 3.1 document that describes them (openapi.json, embedded and served at
// /openapi.json, lint-clean with redocly: make lint-openapi), and the guard every route
// goes through: bearer-token authentication with scopes (package access: a route
// needs read, write or admin on the corpus it touches), a per-client rate limit, a body
// size limit and a request deadline. The resource routes read and publish through
// small interfaces (Catalog, Publisher, Deleter, Exporter) given as options; a route
// whose backend is missing answers 503. Errors are JSON {"error": "..."} with the status
// of the error's class in package clienterror (400, 403, 404, 409, 502, 503, 504, else
// 500), or 408, 413 or 415 for a body too slow, too large or of the wrong type; the
// OpenAI-compatible chat routes answer their own errors in OpenAI's shape.
package httpapi
