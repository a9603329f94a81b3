package llm

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/graphrag/graphrag/pkg/bus"
)

// Cache stores successful answers under content-derived keys. Keys are
// made of [a-z0-9.] only, so they are valid JetStream KV keys. Implementations
// must be safe for concurrent use. A Get or Put error never fails a call: the
// client logs it and calls the endpoint.
type Cache interface {
	Get(ctx context.Context, key string) (val []byte, ok bool, err error)
	Put(ctx context.Context, key string, val []byte) error
}

// MemoryCache is a bounded in-process LRU Cache.
type MemoryCache struct {
	mu    sync.Mutex
	max   int
	ll    *list.List // front = most recently used
	items map[string]*list.Element
}

type lruEntry struct {
	key string
	val []byte
}

// NewMemoryCache returns an LRU cache holding at most maxEntries answers
// (minimum 1).
func NewMemoryCache(maxEntries int) *MemoryCache {
	return &MemoryCache{max: max(1, maxEntries), ll: list.New(), items: make(map[string]*list.Element)}
}

// Get returns a copy of the value stored under key.
func (m *MemoryCache) Get(_ context.Context, key string) ([]byte, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	el, ok := m.items[key]
	if !ok {
		return nil, false, nil
	}
	m.ll.MoveToFront(el)
	return append([]byte(nil), el.Value.(*lruEntry).val...), true, nil
}

// Put stores a copy of val, evicting the least recently used entry when full.
func (m *MemoryCache) Put(_ context.Context, key string, val []byte) error {
	v := append([]byte(nil), val...)
	m.mu.Lock()
	defer m.mu.Unlock()
	if el, ok := m.items[key]; ok {
		el.Value.(*lruEntry).val = v
		m.ll.MoveToFront(el)
		return nil
	}
	m.items[key] = m.ll.PushFront(&lruEntry{key: key, val: v})
	for m.ll.Len() > m.max {
		old := m.ll.Back()
		m.ll.Remove(old)
		delete(m.items, old.Value.(*lruEntry).key)
	}
	return nil
}

// Len reports the number of entries.
func (m *MemoryCache) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.ll.Len()
}

// KVCache is a Cache in a JetStream key-value bucket, shared by every replica:
// re-indexing unchanged chunks anywhere in the cluster makes no LLM call.
// Size and age limits are the bucket's (MaxBytes, TTL, history 1 is enough).
type KVCache struct {
	kv bus.KV
}

// NewKVCache wraps an existing bucket.
func NewKVCache(kv bus.KV) *KVCache { return &KVCache{kv: kv} }

// Get reads key; a missing or deleted key is a miss, not an error.
func (k *KVCache) Get(ctx context.Context, key string) ([]byte, bool, error) {
	v, err := k.kv.Get(ctx, key)
	if errors.Is(err, bus.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("reading llm cache: %w", err)
	}
	return v, true, nil
}

// Put writes key.
func (k *KVCache) Put(ctx context.Context, key string, val []byte) error {
	if err := k.kv.Put(ctx, key, val); err != nil {
		return fmt.Errorf("writing llm cache: %w", err)
	}
	// A marker under the scope says whose content the entry came from.
	if scope := cacheScope(ctx); scope != "" {
		if err := k.kv.Put(ctx, scope+key, nil); err != nil {
			return fmt.Errorf("writing llm cache marker: %w", err)
		}
	}
	return nil
}

// TieredCache is a process's MemoryCache in front of a Cache shared by every replica (a
// KVCache): a hit in memory costs no round trip to the bucket, a miss there is looked up
// in the shared cache and remembered, and a Put goes to both. What one replica paid for,
// every replica finds in the bucket; what a replica asks again, it finds in memory.
type TieredCache struct {
	front *MemoryCache
	back  Cache
}

// NewTieredCache puts front in front of back.
func NewTieredCache(front *MemoryCache, back Cache) *TieredCache {
	return &TieredCache{front: front, back: back}
}

// Get reads front, then back; a value found in back is copied to front.
func (t *TieredCache) Get(ctx context.Context, key string) ([]byte, bool, error) {
	if v, ok, _ := t.front.Get(ctx, key); ok {
		return v, true, nil
	}
	v, ok, err := t.back.Get(ctx, key)
	if err != nil || !ok {
		return nil, false, err
	}
	_ = t.front.Put(ctx, key, v) // a MemoryCache never fails
	return v, true, nil
}

// Put writes back (with ctx's cache scope, see WithCacheScope) and front.
func (t *TieredCache) Put(ctx context.Context, key string, val []byte) error {
	_ = t.front.Put(ctx, key, val)
	return t.back.Put(ctx, key, val)
}

type scopeKey struct{}

// WithCacheScope says whose content the calls made with the returned context carry:
// scope is a prefix of whole key tokens ending in '.' (schema.CacheScope, one
// document). The KVCache still files answers under their content-derived keys, shared
// by everyone who asks the same, and also leaves a marker under the scope, so that
// ForgetScope can find and delete the answers made from that content when it must go.
func WithCacheScope(ctx context.Context, scope string) context.Context {
	return context.WithValue(ctx, scopeKey{}, scope)
}

func cacheScope(ctx context.Context) string {
	s, _ := ctx.Value(scopeKey{}).(string)
	return s
}

// ForgetScope deletes every KVCache entry a call under scope (or under any scope it is
// a prefix of) stored, and the markers, and returns how many entries it deleted. An
// entry another scope also made is deleted too: it holds the same content.
func ForgetScope(ctx context.Context, kv bus.KV, scope string) (int, error) {
	if scope == "" || !strings.HasSuffix(scope, ".") {
		return 0, fmt.Errorf("forgetting llm cache entries: %w: scope %q", bus.ErrInvalidSpec, scope)
	}
	markers, err := kv.Keys(ctx, scope)
	if err != nil {
		return 0, fmt.Errorf("listing llm cache entries of %s: %w", scope, err)
	}
	for i, m := range markers {
		// Cache keys are "<kind>.<hex>" (chat., embed.): the marker's last two tokens.
		parts := strings.Split(m, ".")
		if len(parts) < 2 {
			continue
		}
		entry := parts[len(parts)-2] + "." + parts[len(parts)-1]
		if err := kv.Delete(ctx, entry); err != nil {
			return i, fmt.Errorf("deleting llm cache entry %s: %w", entry, err)
		}
		if err := kv.Delete(ctx, m); err != nil {
			return i, fmt.Errorf("deleting llm cache marker %s: %w", m, err)
		}
	}
	return len(markers), nil
}

func (c *Client) cacheGet(ctx context.Context, key string) ([]byte, bool) {
	if c.o.cache == nil {
		return nil, false
	}
	v, ok, err := c.o.cache.Get(ctx, key)
	if err != nil {
		c.o.logger.WarnContext(ctx, "llm cache get failed, calling the endpoint", "key", key, "error", err)
		return nil, false
	}
	return v, ok
}

func (c *Client) cachePut(ctx context.Context, key string, val []byte) {
	if c.o.cache == nil {
		return
	}
	// The answer is paid for: store it even if the caller has gone.
	if err := c.o.cache.Put(context.WithoutCancel(ctx), key, val); err != nil {
		c.o.logger.WarnContext(ctx, "llm cache put failed", "key", key, "error", err)
	}
}
