// Package graphstore is the seam between the GraphRAG services and the knowledge
// graph they build: entities, relationships, their provenance (which chunk said
// what), PageRank scores and the hierarchy of communities.
//
// Store is the interface every driver implements (the embedded boltgraph driver and
// neo4jgraph for Neo4j); package graphstoretest is the conformance suite they all
// must pass. Algorithms is the optional native community detection and PageRank of a
// store (Neo4j Graph Data Science). The interface is deliberately expressible as parameterized Cypher: no
// method takes free text that a driver would have to splice into a query.
//
// Each driver's Open returns it behind Validating (and its Algorithms behind
// ValidatingAlgorithms): the checks of arguments that do not depend on the backend
// (corpus names, levels, scores, text) are made there once, and every call is a span.
//
// # Merge semantics
//
// The graph is derived from per-chunk contributions. Merge is keyed by
// ChunkExtraction.ChunkID: merging a chunk again replaces that chunk's previous
// contribution, so replaying a message changes nothing and a re-extracted chunk never
// double counts. Contribute turns one ChunkExtraction into the Contribution a driver
// stores; the aggregation over all stored contributions is:
//
//   - An entity exists while at least one chunk mentions it, explicitly (an
//     EntityMention) or implicitly (as an end of a RelationMention in that chunk).
//   - Entity.MentionCount is the number of distinct chunks mentioning it and
//     Entity.ChunkIDs those chunks, sorted.
//   - Entity.Name is the surface form seen in the most chunks (ties: the smallest);
//     implied mentions carry no surface form, and an entity only ever implied is
//     named by its key.
//   - Entity.Type is the non-empty type seen in the most chunks (ties: the smallest)
//     among the types other than TypeOther ("OTHER"), the type extractors give a name
//     they cannot type; it is TypeOther only when no chunk gives another type. So
//     the fallback never outvotes evidence: PERSON in 2 chunks and OTHER in 3 is a
//     PERSON. Types are compared byte for byte, like everything else here: the
//     extractor upper-cases them before they reach the store, and "other" is an
//     ordinary type (ADR 0076).
//   - Entity.Descriptions are the distinct non-empty mention descriptions, sorted,
//     at most MaxDescriptions of them (the smallest ones).
//   - Entity.Description is the summary set by SetDescriptions while it is current
//     (the set of mention descriptions has not changed since it was set), otherwise
//     the longest mention description (ties: the smallest).
//   - A relationship's identity is the ordered pair (SourceKey, TargetKey). Its
//     Weight is the sum over distinct chunks of the chunk's strength for the pair
//     (the largest strength among that chunk's mentions of the pair; an unspecified
//     strength, 0, counts as 1). Type and Description follow the entity rules.
//   - Self loops (SourceKey == TargetKey) are dropped entirely.
//   - Merge of a batch is atomic: all of it is applied or none. Within a batch a
//     ChunkID given twice is applied in order, so the last one wins.
//
// Keys are normalized names; the caller normalizes, the store never does. Sorting is
// by byte-wise string order throughout.
package graphstore
