// Package ask answers questions: it composes the retrieval engine (package engine) and
// the answerer (package answer) into a Response, in the mode the request names. The HTTP
// API (httpapi), the MCP tools (mcpserver) and the graphrag CLI ask through the same
// Asker; New chooses, once, whether a model answers (answer.New) and lists a question's
// entities for linking (engine.ModelEntities), or neither does.
//
// Every mode but global answers from a context the engine retrieves (engine.Retrieve:
// naive, local, hybrid, mix; engine.Drift: drift, whose follow-up questions the answerer
// writes), with the answerer's Local. Auto retrieves locally, then the answerer
// classifies the question (a model, or the global cue offline), which may hand it to
// global search. Global search maps the community reports engine.Reports selects to
// partial answers and reduces them to one. With OnlyContext no answer is written and no
// model is called: auto classifies by the global cue, drift's follow-ups are the top
// report's key entities.
//
// Config bounds what the model is asked for: the tokens of a local answer, of a partial
// and of a global answer, the parallel map calls and a global question's prompt-token
// budget (-map-concurrency, -global-token-budget); engine.Config tunes retrieval. New
// takes both.
//
// The timings of a Response hold the engine's phases and the answerer's ("classify",
// "generate", "map", "reduce"), one span each (package phase).
package ask
