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

	// Entry returns the value of key with its revision, the number that
	// Update and DeleteRevision compare against; ErrNotFound like Get.
	Entry(ctx context.Context, key string) (Entry, error)
	// Create stores value under key only if the key has no value (never
	// written, deleted or expired) and returns the new revision; a key
	// with a value gives an error wrapping ErrConflict.
	Create(ctx context.Context, key string, value []byte) (uint64, error)
	// Update stores value under key only if the key's revision is still
	// rev and returns the new revision; any other state (a later write, a
	// deletion) gives an error wrapping ErrConflict.
	Update(ctx context.Context, key string, value []byte, rev uint64) (uint64, error)
	// DeleteRevision removes key only if its revision is still rev, else
	// an error wrapping ErrConflict.
	DeleteRevision(ctx context.Context, key string, rev uint64) error
}

// Entry is a value with its revision. Revisions of one key only grow.
type Entry struct {
	Value    []byte
	Revision uint64
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

func (b jsKV) Entry(ctx context.Context, key string) (Entry, error) {
	e, err := b.kv.Get(ctx, key)
	if err != nil {
		return Entry{}, fmt.Errorf("reading %s from bucket %s: %w", key, b.kv.Bucket(), translate(err))
	}
	return Entry{Value: e.Value(), Revision: e.Revision()}, nil
}

func (b jsKV) Create(ctx context.Context, key string, value []byte) (uint64, error) {
	rev, err := b.kv.Create(ctx, key, value)
	if err != nil {
		return 0, fmt.Errorf("creating %s in bucket %s: %w", key, b.kv.Bucket(), translateCAS(err))
	}
	return rev, nil
}

func (b jsKV) Update(ctx context.Context, key string, value []byte, rev uint64) (uint64, error) {
	next, err := b.kv.Update(ctx, key, value, rev)
	if err != nil {
		return 0, fmt.Errorf("updating %s at revision %d in bucket %s: %w", key, rev, b.kv.Bucket(), translateCAS(err))
	}
	return next, nil
}

func (b jsKV) DeleteRevision(ctx context.Context, key string, rev uint64) error {
	if err := b.kv.Delete(ctx, key, jetstream.LastRevision(rev)); err != nil {
		return fmt.Errorf("deleting %s at revision %d from bucket %s: %w", key, rev, b.kv.Bucket(), translateCAS(err))
	}
	return nil
}

// translateCAS maps the JetStream errors of a failed compare-and-set to
// ErrConflict (keeping the original in the chain).
func translateCAS(err error) error {
	if errors.Is(err, jetstream.ErrKeyExists) || errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
		return fmt.Errorf("%w: %w", ErrConflict, err)
	}
	return translate(err)
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
