// Package milvusstore is the Milvus driver of vectorstore.Store. It speaks
// Milvus' gRPC API through the official generated stubs
// (github.com/milvus-io/milvus-proto/go-api/v2); see
// docs/adr/0011-milvus-vector-store.md for why not through the Go SDK.
//
// Each store collection is one Milvus collection with the schema
//
//	id      VarChar(512), primary key
//	vector  FloatVector(dim), COSINE, AUTOINDEX by default (WithIndex)
//	text    VarChar(65535); lexical collections enable the English analyzer
//	attrs   JSON object of string values
//	sparse  SparseFloatVector filled by a BM25 function over text (lexical only)
//
// Filters become boolean expressions (`id in [...]`, `attrs["k"] == "v"`)
// whose string literals are escaped by quoteString, because ids and
// attribute values come from outside. Reads use Strong consistency unless
// WithConsistency says otherwise, so an Upsert is visible to the next Get or
// Search. Search returns at most MaxK hits (Milvus' topk limit); List pages
// through a collection of any size with `id > "cursor"` queries, which
// Milvus answers in primary-key order (see List). Dense scores are recomputed in float64 from the returned vectors
// (exact cosine, deterministic ties); BM25 scores are Milvus'. Texts longer
// than MaxTextBytes are rejected with vectorstore.ErrInvalidArgument unless
// WithTruncateText is set. Milvus errors are translated at the boundary:
// a missing collection is vectorstore.ErrNotFound (ServerError.Is), and a server
// that cannot serve now (gRPC Unavailable, a deadline the server missed, Milvus'
// not-ready and unavailable codes) is an outage, errkind.Down(vectorstore.Dependency,
// err), of kind Unavailable (Unavailable, ADR 0065).
package milvusstore
