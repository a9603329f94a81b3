// Package summarizer writes community reports, run as horizontally scaled replicas.
//
// For each community event it reads the community from the graph store (a community
// replaced by a later detection run is gone there, and its event is acknowledged as stale),
// builds the community context — members ordered by PageRank with type and description,
// internal relationships by weight, and for higher levels the reports of its
// sub-communities — within a token budget, and writes a report: with an LLM a structured
// report (title, summary, findings, rating) through JSON Schema output; offline an
// extractive report built from the same context. The report is upserted into the vector
// store's community collection with its level, parent and counts, keyed by the
// content-derived community id, so the write is idempotent. Its vector costs no model call
// by default (Config.ReportEmbed): the query service selects reports by their members'
// entity vectors (docs/adr/0070-reports-need-no-embedding.md), and the record holds the
// offline embedder's vector of its title and summary, which the stores require. The
// reports of concurrent handlers are embedded and upserted together (one Embed call and
// one Upsert per group, see reportWriter); each handler still acknowledges its event only
// once its own report is durable.
package summarizer
