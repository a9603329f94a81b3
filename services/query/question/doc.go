// Package question reads what a question says of its own scope: whether it asks about
// the corpus as a whole (HasGlobalCue: "the main themes", "across the documents",
// "summarize") and, for such a question, what it is about (Topic, TopicTerms, Terms).
// Retrieval (package engine) selects and ranks community reports by the topic; the
// answerers (package answer) classify questions by the cue and weigh a report's sentences
// by the terms. It depends on pkg/words alone.
package question
