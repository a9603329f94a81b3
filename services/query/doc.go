// Package query is the query service: it answers questions over an indexed corpus
// through an HTTP JSON API and MCP tools. This package wires the parts, which live in
// packages of their own:
//
//   - engine: retrieval, independent of any transport (local search by entity linking,
//     graph traversal and Reciprocal Rank Fusion; the community reports a global
//     question is answered from);
//   - answer: the answerer, with a model or extractive (global search's map-reduce over
//     the reports);
//   - ask: a question answered in its mode, the engine's retrieval and the answerer
//     composed into a response;
//   - httpapi: the HTTP JSON API over ask, its OpenAPI document, and the guard
//     (authentication, rate limit, limits) every route goes through;
//   - mcpserver: the MCP tools over ask, over stdio or streamable HTTP;
//   - clienterror: what both transports tell a client about an error, from its kind.
//
// Config holds the engine's and the API's flags; New builds the parts and Mount
// serves them (/v1/..., /openapi.json, /mcp). The query binary (cmd/query) and the
// graphrag CLI (graphrag up, query, mcp) are built on them.
package query
