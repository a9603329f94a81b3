package llm_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/bus/bustest"
	"github.com/graphrag/graphrag/pkg/llm"
	"github.com/graphrag/graphrag/pkg/llm/llmtest"
	"github.com/graphrag/graphrag/pkg/schema"
)

// newKV starts an in-process JetStream server and returns a fresh bucket.
func newKV(t *testing.T) bus.KV {
	t.Helper()
	b, err := bus.New(bustest.Connect(t, bustest.StartServer(t)))
	if err != nil {
		t.Fatal(err)
	}
	kv, err := b.EnsureKV(t.Context(), schema.LLMCacheBucket, 0)
	if err != nil {
		t.Fatalf("creating bucket: %v", err)
	}
	return kv
}

func caches(t *testing.T) map[string]func(t *testing.T) llm.Cache {
	return map[string]func(t *testing.T) llm.Cache{
		"memory": func(*testing.T) llm.Cache { return llm.NewMemoryCache(100) },
		"kv":     func(t *testing.T) llm.Cache { return llm.NewKVCache(newKV(t)) },
	}
}

func TestCacheHitMakesNoCall(t *testing.T) {
	for name, mk := range caches(t) {
		t.Run(name, func(t *testing.T) {
			cache := mk(t)
			srv := newFake(t)
			c := newClient(t, srv, nil, llm.WithCache(cache))
			ctx := t.Context()

			first, err := c.Chat(ctx, chatReq("same chunk"))
			if err != nil || first.Cached {
				t.Fatalf("first Chat: %+v, %v", first, err)
			}
			second, err := c.Chat(ctx, chatReq("same chunk"))
			if err != nil {
				t.Fatalf("second Chat: %v", err)
			}
			if !second.Cached || second.Content != first.Content || second.PromptTokens != first.PromptTokens {
				t.Errorf("second = %+v, want cached copy of %+v", second, first)
			}
			if got := srv.ChatCalls(); got != 1 {
				t.Errorf("fake saw %d chat calls, want 1", got)
			}

			// Anything that changes the answer changes the key.
			changed := chatReq("same chunk")
			changed.Temperature = 0.7
			if r, err := c.Chat(ctx, changed); err != nil || r.Cached {
				t.Errorf("changed temperature served from cache: %+v %v", r, err)
			}
			// The stage does not.
			restaged := chatReq("same chunk")
			restaged.Stage = "query"
			if r, err := c.Chat(ctx, restaged); err != nil || !r.Cached {
				t.Errorf("other stage missed the cache: %+v %v", r, err)
			}

			// A second replica sharing the cache makes no call either.
			replica := newClient(t, srv, nil, llm.WithCache(cache))
			if r, err := replica.Chat(ctx, chatReq("same chunk")); err != nil || !r.Cached {
				t.Errorf("replica: %+v %v", r, err)
			}
			if got := srv.ChatCalls(); got != 2 {
				t.Errorf("fake saw %d chat calls, want 2", got)
			}
			if u := c.Usage(); u.Calls != 2 || u.CacheHits != 2 {
				t.Errorf("usage = %+v, want 2 calls and 2 hits", u)
			}

			// Embeddings are cached per text.
			if _, err := c.Embed(ctx, []string{"a", "b"}); err != nil {
				t.Fatal(err)
			}
			vecs, err := replica.Embed(ctx, []string{"b", "a"})
			if err != nil {
				t.Fatal(err)
			}
			if got := srv.EmbedCalls(); got != 1 {
				t.Errorf("fake saw %d embed calls, want 1", got)
			}
			if !equalVec(vecs[0], llmtest.HashEmbedding("b", 8)) || !equalVec(vecs[1], llmtest.HashEmbedding("a", 8)) {
				t.Errorf("cached vectors differ from the originals")
			}
		})
	}
}

func TestFailedCallsAreNotCached(t *testing.T) {
	for name, mk := range caches(t) {
		t.Run(name, func(t *testing.T) {
			srv := newFake(t)
			srv.Inject(llmtest.ServerError())
			c := newClient(t, srv, func(c *llm.Config) { c.MaxRetries = -1 }, llm.WithCache(mk(t)))
			if _, err := c.Chat(t.Context(), chatReq("x")); err == nil {
				t.Fatal("want the injected 500")
			}
			r, err := c.Chat(t.Context(), chatReq("x"))
			if err != nil || r.Cached {
				t.Fatalf("second call: %+v %v", r, err)
			}
			if got := srv.ChatCalls(); got != 2 {
				t.Errorf("fake saw %d calls, want 2", got)
			}
		})
	}
}

// failingCache fails every operation: calls must go through regardless.
type failingCache struct{}

func (failingCache) Get(context.Context, string) ([]byte, bool, error) {
	return nil, false, fmt.Errorf("cache down")
}
func (failingCache) Put(context.Context, string, []byte) error { return fmt.Errorf("cache down") }

func TestCacheFailureDoesNotFailCalls(t *testing.T) {
	srv := newFake(t)
	c := newClient(t, srv, nil, llm.WithCache(failingCache{}))
	for range 2 {
		if _, err := c.Chat(t.Context(), chatReq("x")); err != nil {
			t.Fatalf("Chat: %v", err)
		}
	}
	if got := srv.ChatCalls(); got != 2 {
		t.Errorf("fake saw %d calls, want 2", got)
	}
}

func TestMemoryCacheLRU(t *testing.T) {
	ctx := t.Context()
	m := llm.NewMemoryCache(2)
	steps := []struct {
		op, key, val string
		wantOK       bool
	}{
		{op: "put", key: "a", val: "1"},
		{op: "put", key: "b", val: "2"},
		{op: "get", key: "a", val: "1", wantOK: true}, // a becomes most recent
		{op: "put", key: "c", val: "3"},               // evicts b
		{op: "get", key: "b", wantOK: false},
		{op: "get", key: "a", val: "1", wantOK: true},
		{op: "get", key: "c", val: "3", wantOK: true},
		{op: "put", key: "a", val: "9"}, // overwrite
		{op: "get", key: "a", val: "9", wantOK: true},
	}
	for i, s := range steps {
		t.Run(fmt.Sprintf("%d_%s_%s", i, s.op, s.key), func(t *testing.T) {
			if s.op == "put" {
				if err := m.Put(ctx, s.key, []byte(s.val)); err != nil {
					t.Fatal(err)
				}
				return
			}
			v, ok, err := m.Get(ctx, s.key)
			if err != nil || ok != s.wantOK || (ok && string(v) != s.val) {
				t.Errorf("Get(%q) = %q, %v, %v; want %q, %v", s.key, v, ok, err, s.val, s.wantOK)
			}
		})
	}
	if m.Len() != 2 {
		t.Errorf("Len = %d, want 2", m.Len())
	}
}

func equalVec(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// countingCache counts the reads that reach a cache.
type countingCache struct {
	llm.Cache
	gets int
}

func (c *countingCache) Get(ctx context.Context, key string) ([]byte, bool, error) {
	c.gets++
	return c.Cache.Get(ctx, key)
}

// Two replicas, each with its own in-process tier over one KV bucket: a text one of
// them embedded is embedded by neither again, and a replica asking again reads its
// memory, not the bucket.
func TestTieredCacheSharedByReplicasThroughTheBucket(t *testing.T) {
	kv := newKV(t)
	srv := newFake(t)
	ctx := t.Context()
	shared := &countingCache{Cache: llm.NewKVCache(kv)}
	a := newClient(t, srv, nil, llm.WithCache(llm.NewTieredCache(llm.NewMemoryCache(16), shared)))
	b := newClient(t, srv, nil, llm.WithCache(llm.NewTieredCache(llm.NewMemoryCache(16), llm.NewKVCache(kv))))

	first, err := a.Embed(ctx, []string{"the same sentence", "only a's"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := b.Embed(ctx, []string{"the same sentence"})
	if err != nil {
		t.Fatal(err)
	}
	if n := srv.EmbedCalls(); n != 1 {
		t.Errorf("fake saw %d embeddings requests, want 1 (the second replica reads the bucket)", n)
	}
	if fmt.Sprint(got[0]) != fmt.Sprint(first[0]) {
		t.Errorf("replica b got %v, want a's vector %v", got[0], first[0])
	}
	if u := b.Usage(); u.CacheHits != 1 || u.Calls != 0 {
		t.Errorf("replica b usage %+v, want 1 hit and no call", u)
	}
	gets := shared.gets
	if _, err := a.Embed(ctx, []string{"the same sentence", "only a's"}); err != nil {
		t.Fatal(err)
	}
	if shared.gets != gets {
		t.Errorf("a's second Embed read the bucket %d times, want 0 (its memory holds both)", shared.gets-gets)
	}
	if n := srv.EmbedCalls(); n != 1 {
		t.Errorf("fake saw %d embeddings requests, want 1", n)
	}
}
