// Package mcpserver exposes the query service (an ask.Asker) as MCP tools (search, explore_entity_graph,
// get_corpus_stats; list_corpora and list_documents when given a Catalog) over stdio or
// streamable HTTP. Over HTTP every tool refuses a corpus the client's bearer token may
// not read (package access; GrantMiddleware hands the guard's grant to the tools).
package mcpserver
