package pipeline

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/bus/bustest"
	"github.com/graphrag/graphrag/pkg/events"
)

// The server stores each corpus's events under the shard ShardOf computes, a shard's
// runner reads exactly the corpora of its shard, status counts them through the
// shard's consumer, and the number of shards cannot change once a stream has it (nor
// does a service ensuring the streams at start remove it).
func TestShardedStream(t *testing.T) {
	ctx := t.Context()
	srv := bustest.StartServer(t)
	b, err := bus.New(bustest.Connect(t, srv))
	if err != nil {
		t.Fatal(err)
	}
	if err := Provision(ctx, b, DefaultTopology()); err != nil {
		t.Fatal(err)
	}
	const n = 4
	if err := EnsureShards(ctx, b, events.KindExtractions, n); err != nil {
		t.Fatal(err)
	}
	if err := Provision(ctx, b, DefaultTopology()); err != nil {
		t.Fatal(err)
	}
	if got, err := Shards(ctx, b, events.KindExtractions); err != nil || got != n {
		t.Fatalf("shards after Provision: %d %v, want %d", got, err, n)
	}
	if err := EnsureShards(ctx, b, events.KindExtractions, n+1); !errors.Is(err, bus.ErrInvalidSpec) {
		t.Fatalf("EnsureShards with another number: %v, want ErrInvalidSpec", err)
	}
	if err := EnsureShards(ctx, b, events.KindExtractions, 0); !errors.Is(err, bus.ErrInvalidSpec) {
		t.Fatalf("EnsureShards(0): %v, want ErrInvalidSpec", err)
	}
	var corpora []string
	for i := range 12 {
		c := fmt.Sprintf("corpus_%d", i)
		corpora = append(corpora, c)
		if _, err := b.Publish(ctx, events.Subject(events.KindExtractions, c), []byte("{}")); err != nil {
			t.Fatal(err)
		}
	}
	counts, err := b.SubjectCounts(ctx, StreamName(events.KindExtractions), events.SubjectPrefix+".extractions.>")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range corpora {
		want := fmt.Sprintf("%s.extractions.%d.%s", events.SubjectPrefix, ShardOf(c, n), c)
		if counts[want] != 1 {
			t.Errorf("corpus %s stored as %v, want under %s", c, counts, want)
		}
	}
	// Shard 1's runner handles the corpora of shard 1 and no other.
	got := make(chan string, len(corpora))
	r := NewShardRunner(b, StageGrapher, events.KindExtractions, 1, fastStage(), func(_ context.Context, corpus string, _ *bus.Message) error {
		got <- corpus
		return nil
	}, nil)
	if err := r.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Stop(context.Background()) })
	want := map[string]bool{}
	for _, c := range corpora {
		if ShardOf(c, n) == 1 {
			want[c] = true
		}
	}
	if len(want) == 0 {
		t.Fatal("no test corpus in shard 1: choose other names")
	}
	for range want {
		select {
		case c := <-got:
			if !want[c] {
				t.Fatalf("shard 1's runner got corpus %s of shard %d", c, ShardOf(c, n))
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("shard 1's runner did not get its corpora %v", want)
		}
	}
	for _, c := range corpora {
		if ShardOf(c, n) != 1 && ShardOf(c, n) != 2 {
			continue
		}
		st, err := GetStatus(ctx, b, c)
		if err != nil {
			t.Fatal(err)
		}
		g := st.Stages[2]
		if g.Stage != StageGrapher || g.Total != 1 {
			t.Fatalf("grapher stage of %s: %+v", c, g)
		}
		// Shard 2 has no consumer yet: its corpora are pending, shard 1's are done.
		wantPending := uint64(0)
		if ShardOf(c, n) == 2 {
			wantPending = 1
		}
		waitFor(t, func() bool {
			st, err := GetStatus(ctx, b, c)
			return err == nil && st.Stages[2].Pending == wantPending && st.Stages[2].InFlight == 0
		})
	}
}

// waitFor polls cond until it holds, failing after a generous safety net.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition never held")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
