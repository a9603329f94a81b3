package answer

import "testing"

// Topic leaves what a global question is about, or the question when it is about
// everything.
func TestTopic(t *testing.T) {
	for q, want := range map[string]string{
		"What are the main themes about films, actors and directors?": "What are the about films, actors and directors?",
		"Give an overview of the history and wars in the collection.": "Give an the history and wars in the",
		"What are the main themes across the corpus?":                 "What are the main themes across the corpus?",
		"Summarize the documents":                                     "Summarize the documents",
		"Which rivers flow through Vienna?":                           "Which rivers flow through Vienna?",
	} {
		if got := Topic(q); got != want {
			t.Errorf("Topic(%q) = %q, want %q", q, got, want)
		}
	}
}
