// Package gencorpus generates retrieval development sets in the dataset format of
// `graphrag eval` (corpus.jsonl and questions.jsonl): the multi-hop workplace set
// (Generate) and the single-fact guidelines set (GenerateGuidelines). Both invent their
// names with the same namer and write their files with the same writer; the same seed
// gives byte-identical output.
//
// The workplace set is in the style of a company's work documents: tickets,
// postmortems, meeting notes, e-mails, change requests and on-call handovers.
// Generation has three steps. A hidden world is drawn first: invented people, teams,
// services with a code name and a formal name, sites, cities, vendors, customers,
// incidents and projects, and the facts between them (who is on which team, which team
// owns which service, which site hosts it, ...). Every fact is then stated in exactly one
// document, with several surface templates per relation and name variants (first names,
// code names against formal names); other documents mention the same entities without
// stating a fact between them, or state a near miss (a former owner, a rolled-back
// migration, a previous account manager). Last, questions of 2 to 4 hops are composed by
// walking the facts; each question names only its start, and its gold documents are the
// ones stating each hop's fact. A self-check (Dataset.Check) verifies by construction
// what a question needs: every gold document contains both entities of its hop, no other
// document contains both, adjacent hops share a surface form of the bridge entity, the
// question names neither its answer nor an intermediate entity.
//
// The guidelines set is in the style of clinical practice guidelines and operating
// procedures: numbered sections of recommendations stating doses, intervals,
// thresholds, durations, roles and contraindications for a topic (a product given for
// a condition to a population, or a procedure in a care setting). Sibling sections
// state the same attributes for a neighbouring topic, superseded versions state older
// values, and other documents name topics without stating values, so that a section is
// told apart from its neighbours only by the names of its topic. Each question asks one
// attribute of one topic, in words of its own; GuidelineSet.Check verifies that the one
// gold section states the answer for the topic the question names, that no other
// document states it as current guidance, and that the question neither names its
// answer nor copies the stating sentence.
package gencorpus
