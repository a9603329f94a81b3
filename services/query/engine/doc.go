// Package engine is the query service's retrieval engine, independent of any transport
// and of how answers are written: it finds the context of a question in the stores and
// returns it with the duration of each phase (Result). Package ask composes it with the
// answerer (package answer) into answers; the console's browsing reads are package
// explore's.
//
// Retrieve runs local retrieval by entity linking, graph traversal and the fusion of
// dense, lexical, graph and subject result lists (FuseText: the text lists by standard
// scores, the passages they are confident of first, the rest by Reciprocal Rank Fusion;
// with -walk-carries-text and an embedding model, FuseWalk: the walk seeded by every text
// passage ranks the rest with the subject list, the text lists not voting again), with
// community context; its modes (naive, local, hybrid, mix) compose it with the text
// lists alone and the reports global search ranks first. Reports selects the community
// reports a global question is answered from, by their members' entity vectors and the
// question's words (reports need no vector of their own, ADR 0070). Drift joins the local
// retrievals of a question and of the follow-up questions a caller writes from the
// reports ranked first for it. The subject list (subject.go) is the explicit second hop:
// the passages about the entities the question names or the best passages mention.
// Searches that do not need each other's results (the lexical search and the query's
// embedding; then the dense search, entity linking and the community report search;
// then the graph and subject lists) run concurrently; their results are combined in a
// fixed order, so a result does not depend on which finished first.
//
// When neither a question's exact names nor the embeddings link an entity, an
// EntityLister chosen once (Deps.Entities: the model's list, or the question's proper
// nouns) names the candidates. The engine calls no model to answer and holds no
// answerer.
//
// The defects of the system this replaces each have a regression test here: fusion is
// real RRF; chunks found only by the graph are fetched, never dropped; entity names are
// normalized by pkg/normalize exactly as the grapher writes them; every community level
// is selectable. Global questions use map-reduce and community context reaches the
// generation prompt (tested in packages ask and answer).
package engine
