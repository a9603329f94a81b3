package llm_test

import (
	"slices"
	"testing"

	"github.com/graphrag/graphrag/pkg/llm"
)

// TestForgetScope: answers cached under a document's scope are deleted with it, answers
// of other scopes and unscoped ones stay, and the call after the deletion asks the model
// again.
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
	keys, err := kv.Keys(ctx, "")
	if err != nil || len(keys) != 4 {
		t.Fatalf("cache keys = %q, %v; want 4", keys, err)
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
		if len(k) >= len("doc.demo.a.") && k[:len("doc.demo.a.")] == "doc.demo.a." {
			t.Errorf("entry %s of the forgotten scope is left", k)
		}
	}
	if len(left) != 2 || !slices.ContainsFunc(left, func(k string) bool { return k[:len("doc.demo.b.")] == "doc.demo.b." }) {
		t.Errorf("left %q; want b's entry and the unscoped one", left)
	}
	calls := srv.ChatCalls()
	if r, err := c.Chat(docA, chatReq("chunk of a")); err != nil || r.Cached {
		t.Fatalf("Chat after forgetting = %+v, %v; want a fresh call", r, err)
	}
	if srv.ChatCalls() != calls+1 {
		t.Errorf("the model was not asked again")
	}
	if r, err := c.Chat(docB, chatReq("chunk of b")); err != nil || !r.Cached {
		t.Errorf("b's answer: %+v, %v; want cached", r, err)
	}
	// A whole corpus's scopes at once.
	if n, err := llm.ForgetScope(ctx, kv, "doc.demo."); err != nil || n != 2 {
		t.Errorf("ForgetScope(corpus) = %d, %v; want 2", n, err)
	}
	if _, err := llm.ForgetScope(ctx, kv, ""); err == nil {
		t.Error("ForgetScope with an empty scope deleted everything")
	}
}
