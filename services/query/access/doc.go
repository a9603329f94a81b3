// Package access is the query service's scoped access: what a bearer token may do.
// A token holds one scope (read, write or admin; each includes the ones before it) on
// a list of corpora or on every corpus ("*"). The tokens file names them, one token per
// line; a line with a token alone (the older format, and every -api-tokens value) is
// admin on every corpus. The HTTP guard authenticates a request and puts the token's
// Grant in its context; every route and MCP tool then asks Check for the scope it
// needs on the corpus it touches, and answers 403 with Denied's reason when it is
// missing. A context without a Grant (authentication off, or the stdio MCP server of
// a local user) may do everything.
package access
