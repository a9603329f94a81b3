package question

import (
	"maps"
	"slices"
	"testing"
)

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

func TestHasGlobalCue(t *testing.T) {
	for q, want := range map[string]bool{
		"What are the main themes across the corpus?":       true,
		"Summarize the documents":                           true,
		"What are the recurring topics in these documents?": true,
		"Who designed the Analytical Engine?":               false,
		"When did Storm Hester hit Marrow Bay?":             false,
	} {
		if got := HasGlobalCue(q); got != want {
			t.Errorf("HasGlobalCue(%q) = %v, want %v", q, got, want)
		}
	}
}

// Terms and TopicTerms drop the cue and the generic words; only TopicTerms falls back to
// the question's words when nothing else is left.
func TestTerms(t *testing.T) {
	keys := func(m map[string]float64) []string { return slices.Sorted(maps.Keys(m)) }
	if got := keys(Terms("What are the main themes across the corpus?")); len(got) != 0 {
		t.Errorf("Terms of a question about everything = %v, want none", got)
	}
	if got := keys(TopicTerms("What are the main themes across the corpus?")); len(got) == 0 {
		t.Error("TopicTerms of a question about everything is empty, want the question's words")
	}
	got := keys(Terms("What are the main themes of lighthouse keepers?"))
	if !slices.Contains(got, "lighthouse") || slices.Contains(got, "themes") || slices.Contains(got, "main") {
		t.Errorf("Terms = %v, want lighthouse without the cue's words", got)
	}
}
