package bus

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/nats-io/nats.go/jetstream"
)

// KV is a key-value bucket. Services read and write their small records
// through it without knowing the transport: errors are this package's
// (ErrNotFound for a key or bucket that does not exist, ErrInvalidSpec for a
// malformed prefix), never JetStream's. Keys are dot-separated tokens of
// letters, digits, '-', '_', '/' and '='. Implementations are safe for
// concurrent use.
type KV interface {
	// Get returns the value of key, or an error wrapping ErrNotFound when the
	// key has no value (never written, deleted or expired).
	Get(ctx context.Context, key string) ([]byte, error)
	// Put stores value under key, replacing any value it had.
	Put(ctx context.Context, key string, value []byte) error
	// Delete removes key; deleting a key that has no value is not an error.
	Delete(ctx context.Context, key string) error
	// Keys lists the keys that have a value and begin with prefix, sorted.
	// The prefix is empty (every key) or ends with '.', so that the server
	// filters by whole tokens.
	Keys(ctx context.Context, prefix string) ([]string, error)
}

// jsKV is a KV over a JetStream key-value bucket.
type jsKV struct{ kv jetstream.KeyValue }

var _ KV = jsKV{}

func (b jsKV) Get(ctx context.Context, key string) ([]byte, error) {
	e, err := b.kv.Get(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("reading %s from bucket %s: %w", key, b.kv.Bucket(), translate(err))
	}
	return e.Value(), nil
}

func (b jsKV) Put(ctx context.Context, key string, value []byte) error {
	if _, err := b.kv.Put(ctx, key, value); err != nil {
		return fmt.Errorf("writing %s to bucket %s: %w", key, b.kv.Bucket(), translate(err))
	}
	return nil
}

func (b jsKV) Delete(ctx context.Context, key string) error {
	if err := b.kv.Delete(ctx, key); err != nil {
		return fmt.Errorf("deleting %s from bucket %s: %w", key, b.kv.Bucket(), translate(err))
	}
	return nil
}

func (b jsKV) Keys(ctx context.Context, prefix string) ([]string, error) {
	if prefix != "" && !strings.HasSuffix(prefix, ".") {
		return nil, fmt.Errorf("listing keys of bucket %s: %w: the prefix %q does not end with '.'", b.kv.Bucket(), ErrInvalidSpec, prefix)
	}
	var l jetstream.KeyLister
	var err error
	if prefix == "" {
		l, err = b.kv.ListKeys(ctx)
	} else {
		l, err = b.kv.ListKeysFiltered(ctx, prefix+">")
	}
	if errors.Is(err, jetstream.ErrNoKeysFound) {
		return []string{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("listing keys %s* of bucket %s: %w", prefix, b.kv.Bucket(), translate(err))
	}
	keys := []string{}
	for k := range l.Keys() {
		keys = append(keys, k)
	}
	// The lister ends its channel early, without an error, when ctx ends.
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("listing keys %s* of bucket %s: %w", prefix, b.kv.Bucket(), err)
	}
	slices.Sort(keys)
	return keys, nil
}
