package llm

import (
	"context"
	"testing"
	"time"
)

func newTestGate(t *testing.T, maxConc int) *gate {
	t.Helper()
	g := acquireGate("chat", "http://gate.test/"+t.Name(), "", maxConc)
	t.Cleanup(g.release)
	return g
}

func take(t *testing.T, g *gate) *slot {
	t.Helper()
	s, err := g.acquire(t.Context(), time.Now, sleepCtx, time.Time{})
	if err != nil {
		t.Fatalf("acquire: %v", err)
	}
	return s
}

// A burst of refusals from one overload cuts the limit once; a refusal of a request
// sent after the cut cuts it again; successes while the limit is in use grow it back to
// the maximum and no further.
func TestGateAIMD(t *testing.T) {
	g := newTestGate(t, 8)
	if got := g.state().Limit; got != 8 {
		t.Fatalf("initial limit = %d, want the maximum 8", got)
	}
	var burst []*slot
	for range 8 {
		burst = append(burst, take(t, g))
	}
	for _, s := range burst {
		s.done(outcomeDrop)
	}
	if st := g.state(); st.Limit != 4 || st.Decreases != 1 {
		t.Fatalf("after one overload: %+v, want limit 4 after 1 decrease", st)
	}
	take(t, g).done(outcomeDrop)
	if st := g.state(); st.Limit != 2 || st.Decreases != 2 {
		t.Fatalf("after a second overload: %+v, want limit 2 after 2 decreases", st)
	}
	for range 100 {
		// Rounds of as many requests as the limit allows, as a loaded client sends.
		round := make([]*slot, g.state().Limit)
		for i := range round {
			round[i] = take(t, g)
		}
		for _, s := range round {
			s.done(outcomeSuccess)
		}
	}
	if st := g.state(); st.Limit != 8 || st.InFlight != 0 {
		t.Fatalf("after successes: %+v, want limit back at 8, none in flight", st)
	}
}

// Successes while the limit is mostly unused do not raise it: an idle endpoint says
// nothing of its capacity.
func TestGateNoGrowthWhenIdle(t *testing.T) {
	g := newTestGate(t, 8)
	take(t, g).done(outcomeDrop)
	if got := g.state().Limit; got != 4 {
		t.Fatalf("limit = %d, want 4", got)
	}
	// One request at a time uses a quarter of the limit.
	for range 100 {
		take(t, g).done(outcomeSuccess)
	}
	if got := g.state().Limit; got != 4 {
		t.Errorf("limit = %d after requests one at a time, want 4 unchanged", got)
	}
}

// A success much slower than the usual does not raise the limit: latency must hold.
func TestGateLatencyGuard(t *testing.T) {
	g := newTestGate(t, 8)
	g.mu.Lock()
	g.limit, g.avgLatency = 2, time.Millisecond
	g.mu.Unlock()
	s := take(t, g)
	other := take(t, g)
	s.started = s.started.Add(-time.Second) // took about a second against 1ms usually
	s.done(outcomeSuccess)
	other.done(outcomeIgnored)
	if got := g.state().Limit; got != 2 {
		t.Errorf("limit = %d after a slow success, want 2 unchanged", got)
	}
}

// The limit bounds the slots; a freed slot lets a waiter in; a pause holds every
// caller until it ends, except one that already waited it out.
func TestGateSlotsAndPause(t *testing.T) {
	g := newTestGate(t, 1)
	s := take(t, g)
	got := make(chan *slot)
	go func() {
		s2, _ := g.acquire(context.Background(), time.Now, sleepCtx, time.Time{})
		got <- s2
	}()
	select {
	case <-got:
		t.Fatal("a second slot was given with a limit of 1")
	case <-time.After(20 * time.Millisecond):
	}
	s.done(outcomeIgnored)
	(<-got).done(outcomeIgnored)

	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	until := g.pause(now.Add(3 * time.Second))
	var slept []time.Duration
	rec := func(_ context.Context, d time.Duration) error { slept = append(slept, d); return nil }
	clock := func() time.Time { return now }
	take2, err := g.acquire(t.Context(), clock, rec, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	take2.done(outcomeIgnored)
	if len(slept) != 1 || slept[0] != 3*time.Second {
		t.Errorf("a caller slept %v during a 3s pause, want [3s]", slept)
	}
	slept = nil
	take3, err := g.acquire(t.Context(), clock, rec, until)
	if err != nil {
		t.Fatal(err)
	}
	take3.done(outcomeIgnored)
	if len(slept) != 0 {
		t.Errorf("the caller that set the pause slept %v again", slept)
	}
}

// Clients of one endpoint share its gate; a larger maximum raises it; the last
// client's release removes it.
func TestGateShared(t *testing.T) {
	a := acquireGate("chat", "http://shared.test", "k", 4)
	b := acquireGate("chat", "http://shared.test", "k", 6)
	other := acquireGate("embed", "http://shared.test", "k", 4)
	if a != b || a == other {
		t.Fatalf("gates: a=%p b=%p embed=%p, want a and b shared, embed apart", a, b, other)
	}
	if st := a.state(); st.Max != 6 || st.Limit != 6 {
		t.Errorf("shared gate %+v, want max and limit 6", st)
	}
	a.release()
	b.release()
	other.release()
	gates.Lock()
	n := len(gates.m)
	gates.Unlock()
	if c := acquireGate("chat", "http://shared.test", "k", 2); c == a {
		t.Errorf("a gate survived its last release (%d gates registered)", n)
	} else {
		c.release()
	}
}
