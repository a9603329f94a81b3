package engine

import (
	"context"
	"errors"
	"reflect"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/graphrag/graphrag/pkg/llm"
	"github.com/graphrag/graphrag/pkg/llm/llmtest"
	"github.com/graphrag/graphrag/services/query/internal/querytest"
)

// listedEntities is an EntityLister that returns fixed lists, with an error when err is
// set, and counts its calls.
type listedEntities struct {
	lists []Names
	err   error
	calls int
}

func (l *listedEntities) QueryEntities(context.Context, string) ([]Names, error) {
	l.calls++
	return l.lists, l.err
}

// linkWith links query over the demo graph offline (names only: no embedding link) with
// the entity lister given, and returns how each entity was linked and its score.
func linkWith(t *testing.T, lister EntityLister, query string) map[string]linkedEntity {
	t.Helper()
	st := querytest.Demo(t)
	e, err := New(Config{}, Deps{Graph: st.Graph, Vectors: st.Vectors, Embedder: st.Embedder, OfflineEmbedder: true,
		Entities: lister, Logger: querytest.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	linked, err := e.link(t.Context(), "demo", query, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]linkedEntity{}
	for _, l := range linked {
		out[l.key] = l
	}
	return out
}

// The entity lister's lists are tried in order, each only when those before it linked
// nothing, and even when it failed; it is not asked when a name of the question links.
func TestEntityListerFallback(t *testing.T) {
	const unnamed = "who wrote the first published algorithm"
	for _, tc := range []struct {
		name  string
		lists []Names
		err   error
		want  map[string]string // key → linked by
	}{
		{"first list links", []Names{{By: "llm", Score: 0.9, Names: []string{"Ada Lovelace"}}, {By: "proper_noun", Score: 0.8, Names: []string{"Charles Babbage"}}},
			nil, map[string]string{"ada lovelace": "llm"}},
		{"first list names nothing in the graph", []Names{{By: "llm", Score: 0.9, Names: []string{"Grace Hopper"}}, {By: "proper_noun", Score: 0.8, Names: []string{"Charles Babbage"}}},
			nil, map[string]string{"charles babbage": "proper_noun"}},
		{"failed, with the lists that remain", []Names{{By: "proper_noun", Score: 0.8, Names: []string{"Analytical Engine"}}},
			errors.New("model down"), map[string]string{"analytical engine": "proper_noun"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := linkWith(t, &listedEntities{lists: tc.lists, err: tc.err}, unnamed)
			if len(got) != len(tc.want) {
				t.Fatalf("linked %v, want %v", got, tc.want)
			}
			for k, by := range tc.want {
				if got[k].by != by {
					t.Errorf("%s linked by %q, want %q (%v)", k, got[k].by, by, got)
				}
			}
		})
	}
	l := &listedEntities{lists: []Names{{By: "llm", Score: 0.9, Names: []string{"Charles Babbage"}}}}
	if got := linkWith(t, l, "What did Ada Lovelace write?"); got["ada lovelace"].by != "exact" || len(got) != 1 || l.calls != 0 {
		t.Errorf("linked %v after %d lister calls, want ada lovelace by its exact name and no call", got, l.calls)
	}
}

// The model's lister lists what the model names, then the question's proper nouns, which
// remain when its call fails; without a lister the engine has the proper nouns alone.
func TestEntityListers(t *testing.T) {
	const q = "Which notes did the Countess write for Babbage?"
	model := func(reply string) EntityLister {
		srv := llmtest.NewServer(llmtest.WithChatReply(func(openai.ChatCompletionRequest) string { return reply }))
		t.Cleanup(srv.Close)
		client, err := llm.New(llm.Config{BaseURL: srv.URL(), ChatModel: "test", MaxRetries: -1})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = client.Close() })
		return ModelEntities(client)
	}
	nouns := Names{By: "proper_noun", Score: 0.8, Names: []string{"Which", "Countess", "Babbage"}}
	lists, err := model(`{"entities":["Ada Lovelace"]}`).QueryEntities(t.Context(), q)
	want := []Names{{By: "llm", Score: 0.9, Names: []string{"Ada Lovelace"}}, nouns}
	if err != nil || !reflect.DeepEqual(lists, want) {
		t.Errorf("model's lists %+v (err %v), want %+v", lists, err, want)
	}
	lists, err = model("not JSON").QueryEntities(t.Context(), q)
	if err == nil || len(lists) != 2 || len(lists[0].Names) != 0 || !reflect.DeepEqual(lists[1], nouns) {
		t.Errorf("failed model call: lists %+v (err %v), want no name from the model, then the proper nouns %+v", lists, err, nouns)
	}
	if lists, err := (ProperNounEntities{}).QueryEntities(t.Context(), q); err != nil || !reflect.DeepEqual(lists, []Names{nouns}) {
		t.Errorf("proper nouns %+v (err %v), want %+v", lists, err, nouns)
	}
	// Linked end to end: the model's name links an entity the question does not name.
	if got := linkWith(t, model(`{"entities":["Ada Lovelace"]}`), q); got["ada lovelace"].by != "llm" || got["ada lovelace"].score != 0.9 {
		t.Errorf("model's lister linked %v, want ada lovelace by llm with 0.9", got)
	}
	st := querytest.Demo(t)
	e, err := New(Config{}, Deps{Graph: st.Graph, Vectors: st.Vectors, Embedder: st.Embedder})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := e.deps.Entities.(ProperNounEntities); !ok {
		t.Errorf("the engine without a lister lists with %T, want ProperNounEntities", e.deps.Entities)
	}
}
