// Package mcpserver serves the query engine as Model Context Protocol tools (search,
// explore_entity_graph, get_corpus_stats) over stdio (graphrag mcp) or the streamable
// HTTP transport (/mcp on the query service). The tools call the engine's public API
// only; a failed call is a tool error the model can read, never a protocol error.
package mcpserver
