// Package gencorpus generates a multi-hop retrieval development set in the style of a
// company's work documents: tickets, postmortems, meeting notes, e-mails, change
// requests and on-call handovers, in the dataset format of `graphrag eval`
// (corpus.jsonl and questions.jsonl).
//
// Generation has three steps. A hidden world is drawn first: invented people, teams,
// services with a code name and a formal name, sites, cities, vendors, customers,
// incidents and projects, and the facts between them (who is on which team, which team
// owns which service, which site hosts it, ...). Every fact is then stated in exactly one
// document, with several surface templates per relation and name variants (first names,
// code names against formal names); other documents mention the same entities without
// stating a fact between them, or state a near miss (a former owner, a rolled-back
// migration, a previous account manager). Last, questions of 2 to 4 hops are composed by
// walking the facts; each question names only its start, and its gold documents are the
// ones stating each hop's fact.
//
// A self-check (Dataset.Check) verifies by construction what a question needs: every gold
// document contains both entities of its hop, no other document contains both, adjacent
// hops share a surface form of the bridge entity, the question names neither its answer
// nor an intermediate entity. The same seed gives byte-identical output.
package gencorpus
