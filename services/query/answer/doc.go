// Package answer writes the query service's answers from what retrieval found: the
// Answerer classifies a question (local or global), answers a local question from its
// passages, maps community reports to partial answers and reduces them to a global
// answer. New chooses its implementation once, from whether a model is configured:
//
//   - with a model (model.go): the answer is generated, streamed when asked, its
//     citation markers renumbered in order of first use (citations.go); the map phase
//     runs its calls in parallel within a token budget;
//   - offline (offline.go): answers are extractive (extractive.go,
//     extractive_candidates.go): the sentence of the top passages that best matches
//     the question and holds an answer of the kind it asks for, then the sentences of
//     the other hop; partial answers are a report's best sentences.
//
// It reads the types of package evidence and depends on no retrieval code; package ask
// builds the Answerer once, in ask.New, and composes it with the engine's retrieval.
package answer
