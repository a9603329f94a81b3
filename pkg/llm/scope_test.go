package llm_test

import (
	"strings"
	"testing"

	"github.com/graphrag/graphrag/pkg/llm"
)

// TestForgetScope: answers made from a document's content are deleted with it, answers
// of other documents and unscoped ones stay, and the call after the deletion asks the
// model again. Answers stay shared: the same question under another scope is a hit.
func TestForgetScope(t *testing.T) {
	kv := newKV(t)
	srv := newFake(t)
	c := newClient(t, srv, nil, llm.WithCache(llm.NewKVCache(kv)))
	ctx := t.Context()
	docA := llm.WithCacheScope(ctx, "doc.demo.a.")
	docB := llm.WithCacheScope(ctx, "doc.demo.b.")
	if _, err := c.Chat(docA, chatReq("chunk of a")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Embed(docA, []string{"chunk of a"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Chat(docB, chatReq("chunk of b")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Chat(ctx, chatReq("a question")); err != nil {
		t.Fatal(err)
	}
	if r, err := c.Chat(llm.WithCacheScope(ctx, "doc.other.x."), chatReq("chunk of b")); err != nil || !r.Cached {
		t.Fatalf("the same question under another scope: %+v, %v; want a hit", r, err)
	}
	n, err := llm.ForgetScope(ctx, kv, "doc.demo.a.")
	if err != nil || n != 2 {
		t.Fatalf("ForgetScope = %d, %v; want 2", n, err)
	}
	left, err := kv.Keys(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range left {
		if strings.HasPrefix(k, "doc.demo.a.") {
			t.Errorf("marker %s of the forgotten scope is left", k)
		}
	}
	calls := srv.ChatCalls()
	if r, err := c.Chat(docA, chatReq("chunk of a")); err != nil || r.Cached {
		t.Fatalf("Chat after forgetting = %+v, %v; want a fresh call", r, err)
	}
	if srv.ChatCalls() != calls+1 {
		t.Errorf("the model was not asked again")
	}
	embedCalls := srv.EmbedCalls()
	if _, err := c.Embed(docA, []string{"chunk of a"}); err != nil || srv.EmbedCalls() != embedCalls+1 {
		t.Errorf("the embedding was not forgotten: %v", err)
	}
	if r, err := c.Chat(docB, chatReq("chunk of b")); err != nil || !r.Cached {
		t.Errorf("b's answer: %+v, %v; want cached", r, err)
	}
	// A whole corpus's scopes at once: a's two entries (made again) and b's.
	if n, err := llm.ForgetScope(ctx, kv, "doc.demo."); err != nil || n != 3 {
		t.Errorf("ForgetScope(corpus) = %d, %v; want 3", n, err)
	}
	if r, err := c.Chat(ctx, chatReq("a question")); err != nil || !r.Cached {
		t.Errorf("the unscoped answer: %+v, %v; want cached", r, err)
	}
	if _, err := llm.ForgetScope(ctx, kv, ""); err == nil {
		t.Error("ForgetScope with an empty scope deleted everything")
	}
}
