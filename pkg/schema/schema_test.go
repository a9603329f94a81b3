package schema

import (
	"strings"
	"testing"

	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/pkg/vectorstore"
)

// The names are persistent: a change orphans stored data. These are the
// values stores written before this package existed hold.
func TestNamesAreStable(t *testing.T) {
	tests := []struct{ got, want string }{
		{Collection("demo", Chunks), "demo_chunks"},
		{Collection("demo", Entities), "demo_entities"},
		{Collection("demo", Communities), "demo_communities"},
		{GraphStateKey("demo"), "grapher.demo"},
		{DocumentKey("demo", "d1"), "doc.demo.7d1b1d3396e91f490055504711c6dfd1"},
		{DocumentPrefix("demo"), "doc.demo."},
		{CorpusKey("demo"), "corpus.demo"},
		{CacheScope("demo", "d1"), "doc.demo.7d1b1d3396e91f490055504711c6dfd1."},
		{CorpusCacheScope("demo"), "doc.demo."},
		{TypeCountsKey("demo"), "types.demo"},
		{DocumentObject("demo", "abc"), "demo/abc"},
		{TaxonomyKey, "taxonomy"},
		{GrapherLease, "grapher"},
		{StateBucket, "graphrag_state"},
		{LLMCacheBucket, "graphrag_llm_cache"},
		{LeaseBucket, "graphrag_leases"},
		{DocumentBucket, "graphrag_documents"},
	}
	for _, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

// Corpus names the events package accepts, the shortest and the longest among
// them, give collection names every vector store accepts.
func TestCollectionNamesAreValid(t *testing.T) {
	for _, corpus := range []string{"news", "bio_2024", "x", "z" + strings.Repeat("9", 62)} {
		if err := events.ValidateCorpus(corpus); err != nil {
			t.Fatalf("test corpus: %v", err)
		}
		for _, k := range []Kind{Chunks, Entities, Communities} {
			if err := vectorstore.ValidateCollectionName(Collection(corpus, k)); err != nil {
				t.Errorf("Collection(%q, %q): %v", corpus, k, err)
			}
		}
	}
}
