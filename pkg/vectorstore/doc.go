// Package vectorstore is the seam between the GraphRAG services and a vector
// database. It defines the Store interface (collections of records with a
// primary key, a float vector, a text field searchable with BM25 and string
// attributes), the shared types and sentinel errors, and helpers that every
// driver uses so that all drivers rank and validate identically. A search
// returns at most k records and drivers may cap k (Milvus at 16,384); List
// enumerates a collection of any size in pages, IDs ascending, with a cursor.
//
// Drivers: package embedded (pure Go, persistent, in-process) and package
// milvusstore (Milvus over its gRPC API). Both pass the conformance suite in package
// vectorstoretest. Each driver's Open returns its store behind Validating, which checks
// the arguments that do not depend on the backend and traces and measures every call.
package vectorstore
