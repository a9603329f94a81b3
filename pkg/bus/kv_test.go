package bus_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/graphrag/graphrag/pkg/bus"
)

func TestKV(t *testing.T) {
	e := newEnv(t)
	ctx := testCtx(t)
	if _, err := e.b.KV(ctx, "state"); !errors.Is(err, bus.ErrNotFound) {
		t.Fatalf("KV of a missing bucket = %v, want ErrNotFound", err)
	}
	if _, err := e.b.EnsureKV(ctx, "state", 0); err != nil {
		t.Fatal(err)
	}
	kv, err := e.newBus(t).KV(ctx, "state") // another process sees the same bucket
	if err != nil {
		t.Fatalf("KV: %v", err)
	}
	if keys, err := kv.Keys(ctx, ""); err != nil || len(keys) != 0 {
		t.Fatalf("Keys of an empty bucket = %q, %v", keys, err)
	}
	if _, err := kv.Get(ctx, "types.a"); !errors.Is(err, bus.ErrNotFound) {
		t.Fatalf("Get of a missing key = %v, want ErrNotFound", err)
	}
	for _, k := range []string{"types.b", "types.a", "typesx", "grapher.a", "types.c"} {
		if err := kv.Put(ctx, k, []byte("v:"+k)); err != nil {
			t.Fatalf("Put(%s): %v", k, err)
		}
	}
	if v, err := kv.Get(ctx, "types.a"); err != nil || string(v) != "v:types.a" {
		t.Fatalf("Get = %q, %v", v, err)
	}
	if err := kv.Put(ctx, "types.a", []byte("new")); err != nil {
		t.Fatal(err)
	}
	if v, err := kv.Get(ctx, "types.a"); err != nil || string(v) != "new" {
		t.Fatalf("Get after a second Put = %q, %v", v, err)
	}
	if err := kv.Delete(ctx, "types.c"); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if err := kv.Delete(ctx, "never.written"); err != nil {
		t.Fatalf("Delete of a missing key: %v", err)
	}
	if _, err := kv.Get(ctx, "types.c"); !errors.Is(err, bus.ErrNotFound) {
		t.Fatalf("Get of a deleted key = %v, want ErrNotFound", err)
	}
	tests := []struct {
		prefix string
		want   []string
	}{
		{"types.", []string{"types.a", "types.b"}},
		{"", []string{"grapher.a", "types.a", "types.b", "typesx"}},
		{"nothing.", []string{}},
	}
	for _, tc := range tests {
		keys, err := kv.Keys(ctx, tc.prefix)
		if err != nil || !slices.Equal(keys, tc.want) {
			t.Fatalf("Keys(%q) = %q, %v; want %q", tc.prefix, keys, err, tc.want)
		}
	}
	if _, err := kv.Keys(ctx, "types"); !errors.Is(err, bus.ErrInvalidSpec) {
		t.Fatalf("Keys with a prefix that is not whole tokens = %v, want ErrInvalidSpec", err)
	}
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := kv.Keys(canceled, "types."); !errors.Is(err, context.Canceled) {
		t.Fatalf("Keys with a canceled context = %v, want context.Canceled", err)
	}
}

// TestKVCompareAndSet: Create, Update and DeleteRevision succeed only on the state the
// caller read, and report ErrConflict otherwise; two writers racing on one key never
// both win.
func TestKVCompareAndSet(t *testing.T) {
	e := newEnv(t)
	ctx := testCtx(t)
	kv, err := e.b.EnsureKV(ctx, "cas", 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Entry(ctx, "doc.a"); !errors.Is(err, bus.ErrNotFound) {
		t.Fatalf("Entry of a missing key = %v, want ErrNotFound", err)
	}
	r1, err := kv.Create(ctx, "doc.a", []byte("v1"))
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	if _, err := kv.Create(ctx, "doc.a", []byte("again")); !errors.Is(err, bus.ErrConflict) {
		t.Fatalf("Create of an existing key = %v, want ErrConflict", err)
	}
	got, err := kv.Entry(ctx, "doc.a")
	if err != nil || string(got.Value) != "v1" || got.Revision != r1 {
		t.Fatalf("Entry = %+v, %v; want v1 at %d", got, err, r1)
	}
	r2, err := kv.Update(ctx, "doc.a", []byte("v2"), r1)
	if err != nil || r2 <= r1 {
		t.Fatalf("Update = %d, %v", r2, err)
	}
	if _, err := kv.Update(ctx, "doc.a", []byte("stale"), r1); !errors.Is(err, bus.ErrConflict) {
		t.Fatalf("Update at an old revision = %v, want ErrConflict", err)
	}
	if err := kv.DeleteRevision(ctx, "doc.a", r1); !errors.Is(err, bus.ErrConflict) {
		t.Fatalf("DeleteRevision at an old revision = %v, want ErrConflict", err)
	}
	if err := kv.DeleteRevision(ctx, "doc.a", r2); err != nil {
		t.Fatalf("DeleteRevision: %v", err)
	}
	if _, err := kv.Entry(ctx, "doc.a"); !errors.Is(err, bus.ErrNotFound) {
		t.Fatalf("Entry after DeleteRevision = %v, want ErrNotFound", err)
	}
	if _, err := kv.Update(ctx, "doc.a", []byte("v3"), r2); !errors.Is(err, bus.ErrConflict) {
		t.Fatalf("Update of a deleted key = %v, want ErrConflict", err)
	}
	if _, err := kv.Create(ctx, "doc.a", []byte("v3")); err != nil {
		t.Fatalf("Create after a deletion: %v", err)
	}

	// Racing read-modify-write increments: every increment lands exactly once.
	if _, err := kv.Create(ctx, "counter", []byte{0}); err != nil {
		t.Fatal(err)
	}
	const writers, each = 4, 25
	errs := make(chan error, writers)
	for range writers {
		go func() {
			for range each {
				for {
					cur, err := kv.Entry(ctx, "counter")
					if err != nil {
						errs <- err
						return
					}
					_, err = kv.Update(ctx, "counter", []byte{cur.Value[0] + 1}, cur.Revision)
					if err == nil {
						break
					}
					if !errors.Is(err, bus.ErrConflict) {
						errs <- err
						return
					}
				}
			}
			errs <- nil
		}()
	}
	for range writers {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if v, err := kv.Get(ctx, "counter"); err != nil || v[0] != writers*each {
		t.Fatalf("counter = %v, %v; want %d", v, err, writers*each)
	}
}
