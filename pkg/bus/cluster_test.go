package bus_test

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/bus/bustest"
)

// TestClusterLosesLeaders: on a 3-node JetStream cluster with everything on 3 replicas, the
// server leading the stream and then another server are stopped and started again while
// messages are published and consumed and a lease is held. Every message is handled, none
// is dead-lettered, the lease is never lost nor taken by a contender, and a publish
// repeated after an unconfirmed one is dropped as a duplicate.
func TestClusterLosesLeaders(t *testing.T) {
	if testing.Short() {
		t.Skip("elects leaders on a 3-server cluster")
	}
	c := bustest.StartCluster(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	connect := func(name string) *bus.Bus {
		return connectBus(ctx, t, bus.ConnConfig{URL: c.URL(), Name: name, MaxReconnectWait: 500 * time.Millisecond})
	}
	b := connect("holder")
	for _, s := range []bus.StreamSpec{
		{Name: evStream, Subjects: []string{"ev.>"}, Duplicates: time.Minute, Replicas: 3},
		{Name: dlqStream, Subjects: []string{"dlq.>"}, Duplicates: time.Minute, Replicas: 3},
	} {
		if err := b.EnsureStream(ctx, s); err != nil {
			t.Fatalf("EnsureStream(%s): %v", s.Name, err)
		}
	}
	// The pipeline's lease TTL (pipeline.LeaseTTL): its holder gives up after half of it
	// without a renewal, which must outlast an election even on a loaded machine under
	// the race detector.
	const ttl = 30 * time.Second
	if _, err := b.EnsureKV(ctx, "leases", ttl, bus.WithReplicas(3)); err != nil {
		t.Fatalf("EnsureKV: %v", err)
	}
	lease, err := b.AcquireLease(ctx, "leases", bus.LeaseOptions{Key: "grapher", Holder: "a", Poll: 100 * time.Millisecond})
	if err != nil {
		t.Fatalf("AcquireLease: %v", err)
	}
	defer func() {
		if err := lease.Release(context.WithoutCancel(ctx)); err != nil {
			t.Errorf("Release: %v", err)
		}
	}()

	var mu sync.Mutex
	handled := map[string]int{}
	spec := fastSpec("cluster")
	spec.AckWait = 3 * time.Second
	consume(t, b, spec, func(_ context.Context, m *bus.Message) error {
		mu.Lock()
		handled[string(m.Data)]++
		mu.Unlock()
		return nil
	})

	const perPhase = 40
	n := 0
	publish := func() {
		t.Helper()
		for range perPhase {
			n++
			publishRetrying(ctx, t, b, "ev.a", strconv.Itoa(n))
		}
	}
	all := func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(handled) == n
	}

	publish()
	first := c.StreamLeader(b, evStream)
	t.Logf("stopping %s, the leader of %s", c.Name(first), evStream)
	c.Stop(first)
	publish()
	c.Start(first)
	eventually(t, "every message handled after the leader was lost", all)
	second := (first + 1) % 3
	t.Logf("stopping %s", c.Name(second))
	c.Stop(second)
	publish()
	c.Start(second)
	eventually(t, "every message handled after a second server was lost", all)

	// A contender gets nothing while the holder renews, through both elections.
	cctx, ccancel := context.WithTimeout(ctx, ttl+time.Second)
	defer ccancel()
	if l, err := connect("contender").AcquireLease(cctx, "leases", bus.LeaseOptions{Key: "grapher", Holder: "b", Poll: 100 * time.Millisecond}); err == nil {
		_ = l.Release(ctx)
		t.Fatal("a contender acquired the lease while its holder renewed it")
	}
	select {
	case <-lease.Lost():
		t.Fatalf("lease lost: %v", lease.Err())
	default:
	}
	mu.Lock()
	defer mu.Unlock()
	for i := 1; i <= n; i++ {
		if handled[strconv.Itoa(i)] == 0 {
			t.Errorf("message %d never handled", i)
		}
	}
	dead, err := b.SubjectCounts(ctx, dlqStream, "dlq.>")
	if err != nil {
		t.Fatal(err)
	}
	if len(dead) > 0 {
		t.Errorf("dead-lettered: %v, want nothing", dead)
	}
}
