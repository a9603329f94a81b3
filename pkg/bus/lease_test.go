package bus_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/bus/bustest"
	"github.com/graphrag/graphrag/pkg/natsembed"
)

const leaseTTL = time.Second

// leaseBucket creates the bucket "leases" and returns it.
func leaseBucket(t *testing.T, b *bus.Bus) bus.KV {
	t.Helper()
	kv, err := b.EnsureKV(testCtx(t), "leases", leaseTTL)
	if err != nil {
		t.Fatalf("EnsureKV: %v", err)
	}
	return kv
}

// acquire takes the lease "grapher" in the bucket "leases" through b (pass a bus
// on another connection to act as another process).
func acquire(t *testing.T, ctx context.Context, b *bus.Bus, holder string) (*bus.Lease, error) {
	t.Helper()
	l, err := b.AcquireLease(ctx, "leases", bus.LeaseOptions{Key: "grapher", Holder: holder, Poll: 50 * time.Millisecond})
	if err == nil {
		t.Cleanup(func() { _ = l.Release(context.WithoutCancel(ctx)) })
	}
	return l, err
}

func TestLeaseIsExclusiveWhileRenewed(t *testing.T) {
	e := newEnv(t)
	leaseBucket(t, e.b)
	a, err := acquire(t, testCtx(t), e.b, "a")
	if err != nil {
		t.Fatalf("first AcquireLease: %v", err)
	}
	if a.TTL() != leaseTTL {
		t.Fatalf("TTL = %v, want the bucket's %v", a.TTL(), leaseTTL)
	}
	// Longer than the TTL: only renewals keep the key from expiring.
	ctx, cancel := context.WithTimeout(testCtx(t), 5*leaseTTL/2)
	defer cancel()
	if _, err := acquire(t, ctx, e.newBus(t), "b"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("second AcquireLease while held = %v, want a deadline error", err)
	}
	select {
	case <-a.Lost():
		t.Fatalf("the holder lost its lease: %v", a.Err())
	default:
	}
	if err := a.Release(testCtx(t)); err != nil {
		t.Fatalf("Release: %v", err)
	}
	// Released, not expired: the successor gets it well within the TTL.
	ctx, cancel = context.WithTimeout(testCtx(t), leaseTTL/2)
	defer cancel()
	if _, err := acquire(t, ctx, e.b, "b"); err != nil {
		t.Fatalf("AcquireLease after Release: %v", err)
	}
	if err := a.Release(testCtx(t)); err != nil {
		t.Fatalf("second Release: %v", err)
	}
}

// A holder that cannot reach the server any more counts its lease lost before
// the server expires it, so at no time do two processes hold it.
func TestLeaseLostBeforeSuccessorAcquires(t *testing.T) {
	e := newEnv(t)
	leaseBucket(t, e.b)
	nc := bustest.Connect(t, e.srv)
	b, err := bus.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	a, err := acquire(t, testCtx(t), b, "a")
	if err != nil {
		t.Fatalf("AcquireLease: %v", err)
	}
	nc.Close() // the holder is cut off; its renewals fail from now on
	cut := time.Now()

	lostAt := make(chan time.Time, 1)
	go func() { <-a.Lost(); lostAt <- time.Now() }()
	if _, err := acquire(t, testCtx(t), e.b, "b"); err != nil {
		t.Fatalf("successor AcquireLease: %v", err)
	}
	acquiredAt := time.Now()
	select {
	case at := <-lostAt:
		if !at.Before(acquiredAt) {
			t.Fatalf("holder noticed the loss %v after the cut, the successor acquired at %v", at.Sub(cut), acquiredAt.Sub(cut))
		}
	default:
		t.Fatalf("the successor acquired %v after the cut while the holder still believed it held the lease", acquiredAt.Sub(cut))
	}
	if !errors.Is(a.Err(), bus.ErrLeaseLost) {
		t.Fatalf("Err = %v, want ErrLeaseLost", a.Err())
	}
	if acquiredAt.Sub(cut) < leaseTTL/2 {
		t.Fatalf("successor acquired %v after the cut: before the key could expire", acquiredAt.Sub(cut))
	}
}

// A holder whose key another process overwrote stops at its next renewal.
func TestLeaseLostWhenTaken(t *testing.T) {
	e := newEnv(t)
	kv := leaseBucket(t, e.b)
	a, err := acquire(t, testCtx(t), e.b, "a")
	if err != nil {
		t.Fatalf("AcquireLease: %v", err)
	}
	if err := kv.Put(testCtx(t), "grapher", []byte("intruder")); err != nil {
		t.Fatal(err)
	}
	select {
	case <-a.Lost():
	case <-time.After(5 * leaseTTL):
		t.Fatal("the lease was not reported lost")
	}
	if !errors.Is(a.Err(), bus.ErrLeaseLost) {
		t.Fatalf("Err = %v, want ErrLeaseLost", a.Err())
	}
	// Release must not delete the other holder's key.
	if err := a.Release(testCtx(t)); err != nil {
		t.Fatalf("Release after loss: %v", err)
	}
	if v, err := kv.Get(testCtx(t), "grapher"); err != nil || string(v) != "intruder" {
		t.Fatalf("key after Release = %q, %v", v, err)
	}
}

func TestLeaseNeedsAnExpiringBucket(t *testing.T) {
	e := newEnv(t)
	if _, err := e.b.EnsureKV(testCtx(t), "forever", 0); err != nil {
		t.Fatal(err)
	}
	if _, err := e.b.AcquireLease(testCtx(t), "forever", bus.LeaseOptions{Key: "k", Holder: "h"}); !errors.Is(err, bus.ErrInvalidSpec) {
		t.Fatalf("AcquireLease on a bucket without TTL = %v, want ErrInvalidSpec", err)
	}
	leaseBucket(t, e.b)
	if _, err := e.b.AcquireLease(testCtx(t), "leases", bus.LeaseOptions{Key: "k"}); !errors.Is(err, bus.ErrInvalidSpec) {
		t.Fatalf("AcquireLease without a holder = %v, want ErrInvalidSpec", err)
	}
	if _, err := e.b.AcquireLease(testCtx(t), "missing", bus.LeaseOptions{Key: "k", Holder: "h"}); !errors.Is(err, bus.ErrNotFound) {
		t.Fatalf("AcquireLease in a missing bucket = %v, want ErrNotFound", err)
	}
}

// A holder keeps its lease through an outage of the bucket as long as a JetStream
// failover, wherever the outage falls between its renewals: when a cluster loses the
// server leading the bucket, the others elect a leader only after their Raft election
// timeout (4–9 s in nats-server), and a holder that gave up meanwhile would stop the
// grapher for nothing. Each outage here lasts three tenths of the TTL (9 s of the
// pipeline's 30 s) and begins at another point after a renewal.
func TestLeaseOutlivesAFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("stops and restarts a server")
	}
	const ttl = 4 * time.Second
	const outage = 3 * ttl / 10
	dir, port := t.TempDir(), freePort(t)
	start := func() *natsembed.Server {
		s, err := natsembed.Start(natsembed.Config{DataDir: dir, Port: port})
		if err != nil {
			t.Fatalf("starting the server: %v", err)
		}
		return s
	}
	srv := start()
	defer func() { srv.Shutdown() }()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	connect := func(name string) *bus.Bus {
		return connectBus(ctx, t, bus.ConnConfig{URL: srv.ClientURL(), Name: name, ReconnectWait: 20 * time.Millisecond,
			MaxReconnectWait: 50 * time.Millisecond})
	}
	b, watcher := connect("holder"), connect("watcher")
	kv, err := watcher.EnsureKV(ctx, "leases", ttl)
	if err != nil {
		t.Fatal(err)
	}
	a, err := b.AcquireLease(ctx, "leases", bus.LeaseOptions{Key: "grapher", Holder: "a", Poll: 50 * time.Millisecond})
	if err != nil {
		t.Fatalf("AcquireLease: %v", err)
	}
	held := func(what string) {
		t.Helper()
		select {
		case <-a.Lost():
			t.Fatalf("lease lost %s: %v", what, a.Err())
		default:
		}
	}
	// renewal waits (up to the TTL) until the holder rewrites the key, its revision
	// moving, and returns when.
	renewal := func() time.Time {
		t.Helper()
		var first uint64
		for deadline := time.Now().Add(ttl); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			e, err := kv.Entry(ctx, "grapher")
			switch {
			case err != nil: // reconnecting after a restart
			case first == 0:
				first = e.Revision
			case e.Revision != first:
				return time.Now()
			}
		}
		held("with no renewal for the TTL")
		t.Fatal("the holder did not renew its lease for the TTL")
		return time.Time{}
	}
	for _, at := range []time.Duration{ttl/3 - 100*time.Millisecond, ttl/2 - 100*time.Millisecond, ttl / 10} {
		renewed := renewal()
		time.Sleep(time.Until(renewed.Add(at)))
		srv.Shutdown()
		time.Sleep(outage)
		srv = start()
		t.Logf("bucket unreachable from %v to %v after a renewal", at, time.Since(renewed).Round(time.Millisecond))
		held(fmt.Sprintf("through an outage of %v from %v after a renewal", outage, at))
	}
	// A holder that gave up in the last outage would have noticed by its next renewal.
	renewal()
	held("after the outages")
	if err := a.Release(ctx); err != nil {
		t.Fatalf("Release: %v", err)
	}
}

// With NoWait, a contender learns at once that the lease is held, and takes it once
// it is released.
func TestLeaseNoWait(t *testing.T) {
	e := newEnv(t)
	leaseBucket(t, e.b)
	if _, err := acquire(t, testCtx(t), e.b, "a"); err != nil {
		t.Fatalf("first AcquireLease: %v", err)
	}
	other := e.newBus(t)
	opts := bus.LeaseOptions{Key: "grapher", Holder: "b", NoWait: true}
	if _, err := other.AcquireLease(testCtx(t), "leases", opts); !errors.Is(err, bus.ErrLeaseHeld) {
		t.Fatalf("AcquireLease with NoWait while held = %v, want ErrLeaseHeld", err)
	}
	l, err := other.AcquireLease(testCtx(t), "leases", bus.LeaseOptions{Key: "other", Holder: "b", NoWait: true})
	if err != nil {
		t.Fatalf("AcquireLease with NoWait of a free key: %v", err)
	}
	_ = l.Release(testCtx(t))
}
