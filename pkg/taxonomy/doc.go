// Package taxonomy consolidates the open entity types an LLM invents ("RESEARCHER",
// "SCIENTIST", "ACADEMIC") into a short list that later extraction prompts use.
//
// Two strategies, as in the system this project replaces:
//   - global ranks types by their total mentions across every corpus (single-domain data);
//   - stratified takes the top types of each corpus, each over a minimum share of that
//     corpus's mentions, so a large corpus cannot crowd out a small one (mixed domains).
//
// With an LLM, Consolidate also asks the model to map synonymous types onto the kept ones.
// The result is stored in the pipeline's state bucket under Key.
package taxonomy
