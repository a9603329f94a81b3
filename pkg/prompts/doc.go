// Package prompts holds the chat prompts indexing sends to a model: the extractor's
// entity and relationship extraction and its gleaning passes (with what a corpus's
// extraction settings add to them, and the prompt that proposes those settings), the grapher's description
// summaries and the summarizer's community reports, with their response schemas and
// completion bounds. The services send them; package costestimate renders them to
// estimate what indexing a corpus will cost before it is published. Keeping them in one
// place is what makes the estimate's prompt sizes the services' own.
package prompts
