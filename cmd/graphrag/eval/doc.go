// Package eval is `graphrag eval`: it indexes a dataset (corpus.jsonl, questions.jsonl)
// through the real pipeline in one process, scores retrieval strategies of the query
// engine (recall@k, all-gold@k, MRR, latency) and, with an LLM, answers (exact match,
// F1), and writes a JSON report (docs/evaluation.md).
package eval
