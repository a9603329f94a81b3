// Package query is the query service: it answers questions over an indexed corpus
// through an HTTP JSON API and MCP tools. This package wires the parts, which live in
// packages of their own:
//
//   - engine: retrieval and answers, independent of any transport (local search by entity
//     linking, graph traversal and Reciprocal Rank Fusion; global search by map-reduce
//     over community reports; extractive answers without an LLM);
//   - httpapi: the HTTP JSON API over the engine, its OpenAPI document, and the guard
//     (authentication, rate limit, limits) every route goes through;
//   - mcpserver: the engine's MCP tools, over stdio or streamable HTTP;
//   - clienterror: what both transports tell a client about an error, from its kind.
//
// Config holds the engine's and the API's flags; New builds the three parts and Mount
// serves them (/v1/..., /openapi.json, /mcp). The query binary (cmd/query) and the
// graphrag CLI (graphrag up, query, mcp) are built on them.
package query
