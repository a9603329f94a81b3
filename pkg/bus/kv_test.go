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
