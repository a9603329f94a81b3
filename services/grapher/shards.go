package grapher

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/pkg/pipeline"
	"github.com/graphrag/graphrag/pkg/schema"
)

// A sharded grapher (Config.Shards > 0, ADR 0064) holds some of the shards of the
// corpora: the extractions stream stores each corpus's events under its shard
// (pipeline.EnsureShards), and for each shard it holds, a grapher holds the shard's
// lease (graphrag_leases key grapher.shard.<n>), consumes the shard's durable consumer
// and detects the shard's corpora. Every grapher also holds a membership lease
// (grapher.member.<id>), so that each can count the live ones and hold its fair share,
// ceil(shards / graphers): one that holds fewer takes free shards, one that holds more
// (a grapher joined) gives up the extra ones, finishing their merges and cancelling
// their detection runs (the corpora stay dirty and the next holder detects them). A
// grapher that dies stops renewing its leases; its shards are free once they expire
// (pipeline.LeaseTTL), and the others take them. The merges of a corpus therefore run
// in one grapher at a time, as with one grapher per bus.

// shard is one shard a grapher holds, or (n -1) every corpus of an unsharded grapher.
type shard struct {
	n       int
	lease   *bus.Lease // nil without leases (Config.Lease off)
	runners []*pipeline.Runner
	// ctx is the parent of the shard's detection runs; cancel ends them.
	ctx    context.Context
	cancel context.CancelFunc
	// runs counts its detection runs under way; closing is set (under Service.mu) once
	// it is being given up, and no run starts after.
	runs    sync.WaitGroup
	closing bool
}

// Keys of a sharded grapher's leases.
const (
	shardLeasePrefix  = "grapher.shard."
	memberLeasePrefix = "grapher.member."
)

func shardLeaseKey(n int) string { return fmt.Sprintf("%s%d", shardLeasePrefix, n) }

// owner is the shard of a corpus this grapher holds, or nil. Call with s.mu held.
func (s *Service) owner(corpus string) *shard {
	if s.cfg.Shards == 0 {
		return s.all
	}
	sh := s.owned[pipeline.ShardOf(corpus, s.cfg.Shards)]
	if sh == nil || sh.closing {
		return nil
	}
	return sh
}

// startSharded is Start for a sharded grapher: the stream is sharded (or checked to
// be, in as many shards), and the grapher takes its share of the shards before it
// returns, then keeps the share fair while it runs (balance).
func (s *Service) startSharded(ctx context.Context) error {
	if err := pipeline.EnsureShards(ctx, s.deps.Bus, events.KindExtractions, s.cfg.Shards); err != nil {
		return fmt.Errorf("grapher: %w", err)
	}
	// An unsharded grapher still running (a rollout from one) would merge every corpus
	// beside the shards' holders: wait until it has stopped. One that starts after the
	// stream is sharded refuses to run (Start), so the wait is needed once.
	if s.cfg.Lease {
		l, err := s.deps.Bus.AcquireLease(ctx, schema.LeaseBucket, bus.LeaseOptions{Key: schema.GrapherLease, Holder: s.holder, Logger: s.log})
		if err != nil {
			return fmt.Errorf("grapher: waiting for an unsharded grapher to stop: %w", err)
		}
		if err := l.Release(ctx); err != nil {
			return fmt.Errorf("grapher: %w", err)
		}
	}
	if err := s.probe(ctx); err != nil {
		return err
	}
	s.merger.start() //nolint:contextcheck // the merge loop runs each batch under its requesters' contexts
	dctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s.cancelDetect, s.detectCtx = cancel, dctx
	s.started.Store(true)
	if err := s.rebalance(ctx); err != nil {
		s.log.Warn("taking shards; will retry", "err", err)
	}
	s.stopPauses = func() {}
	if src := s.outageSources(); len(src) > 0 {
		s.stopPauses = pipeline.ReportPauses(ctx, s.deps.Bus, pipeline.StageGrapher, src, s.log)
	}
	go s.balance(context.WithoutCancel(ctx))
	go s.schedule(dctx)
	return nil
}

// poll is how often a sharded grapher rebalances.
func (s *Service) poll() time.Duration {
	if s.cfg.shardPoll > 0 {
		return s.cfg.shardPoll
	}
	return pipeline.LeaseTTL / 10
}

// balance rebalances every poll until Stop.
func (s *Service) balance(ctx context.Context) {
	defer close(s.balanced)
	for {
		select {
		case <-s.quitBalance:
			return
		case <-time.After(s.poll()):
		}
		if err := s.rebalance(ctx); err != nil {
			s.log.Warn("rebalancing shards; will retry", "err", err)
		}
	}
}

// rebalance gives up the shards whose lease was lost, renews the grapher's membership,
// and takes free shards or gives up held ones until it holds its fair share.
func (s *Service) rebalance(ctx context.Context) error {
	s.mu.Lock()
	var lost []*shard
	for _, sh := range s.owned {
		if sh.lease != nil && sh.lease.Err() != nil {
			lost = append(lost, sh)
		}
	}
	s.mu.Unlock()
	for _, sh := range lost {
		s.log.Warn("shard lease lost; giving the shard up", "shard", sh.n, "err", sh.lease.Err())
		s.dropShard(ctx, sh)
	}
	fair, err := s.fairShare(ctx)
	if err != nil {
		return err
	}
	s.mu.Lock()
	held := make([]int, 0, len(s.owned))
	for n := range s.owned {
		held = append(held, n)
	}
	s.mu.Unlock()
	if len(held) > fair {
		// A grapher joined: give up the extra shards, in random order so that the
		// graphers giving some up do not all give up the same numbers.
		rand.Shuffle(len(held), func(i, j int) { held[i], held[j] = held[j], held[i] })
		for _, n := range held[:len(held)-fair] {
			s.mu.Lock()
			sh := s.owned[n]
			s.mu.Unlock()
			s.log.Info("giving a shard up to a new grapher", "shard", n, "fair_share", fair)
			s.dropShard(ctx, sh)
		}
		return nil
	}
	var errs []error
	for _, n := range rand.Perm(s.cfg.Shards) {
		if len(held) >= fair {
			break
		}
		s.mu.Lock()
		_, mine := s.owned[n]
		s.mu.Unlock()
		if mine {
			continue
		}
		took, err := s.takeShard(ctx, n)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if took {
			held = append(held, n)
		}
	}
	return errors.Join(errs...)
}

// fairShare renews (or takes again) this grapher's membership lease and returns
// ceil(shards / live graphers). Without leases a grapher is alone: all shards.
func (s *Service) fairShare(ctx context.Context) (int, error) {
	if !s.cfg.Lease {
		return s.cfg.Shards, nil
	}
	if s.member == nil || s.member.Err() != nil {
		key := memberLeasePrefix + fmt.Sprintf("%x", rand.Uint64())
		l, err := s.deps.Bus.AcquireLease(ctx, schema.LeaseBucket, bus.LeaseOptions{Key: key, Holder: s.holder, Logger: s.log, NoWait: true})
		if err != nil {
			return 0, fmt.Errorf("grapher: joining: %w", err)
		}
		s.member = l
	}
	kv, err := s.deps.Bus.KV(ctx, schema.LeaseBucket)
	if err != nil {
		return 0, fmt.Errorf("grapher: %w", err)
	}
	members, err := kv.Keys(ctx, memberLeasePrefix)
	if err != nil {
		return 0, fmt.Errorf("grapher: counting graphers: %w", err)
	}
	n := max(len(members), 1)
	return (s.cfg.Shards + n - 1) / n, nil
}

// takeShard takes shard n if its lease is free: it loads the state of the shard's
// corpora (the previous holder's progress: a corpus it left dirty is detected here)
// and starts the shard's consumer. It reports false when another grapher holds it.
func (s *Service) takeShard(ctx context.Context, n int) (bool, error) {
	sh := &shard{n: n}
	if s.cfg.Lease {
		l, err := s.deps.Bus.AcquireLease(ctx, schema.LeaseBucket, bus.LeaseOptions{Key: shardLeaseKey(n), Holder: s.holder, Logger: s.log, NoWait: true})
		if errors.Is(err, bus.ErrLeaseHeld) {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("grapher: shard %d: %w", n, err)
		}
		sh.lease = l
	}
	fail := func(err error) (bool, error) {
		if sh.lease != nil {
			err = errors.Join(err, sh.lease.Release(ctx))
		}
		return false, fmt.Errorf("grapher: taking shard %d: %w", n, err)
	}
	corpora, err := s.deps.Graph.Corpora(ctx)
	if err != nil {
		return fail(fmt.Errorf("listing corpora: %w", err))
	}
	states := map[string]pipeline.GraphState{}
	for _, c := range corpora {
		if pipeline.ShardOf(c, s.cfg.Shards) != n {
			continue
		}
		if states[c], err = pipeline.LoadGraphState(ctx, s.kv, c); err != nil {
			return fail(err)
		}
	}
	// Another grapher may have merged newer document versions while it held the shard.
	s.merger.versions.forgetCorpora(func(c string) bool { return pipeline.ShardOf(c, s.cfg.Shards) == n })
	s.merger.cur.forget(func(c string) bool { return pipeline.ShardOf(c, s.cfg.Shards) == n })
	sh.ctx, sh.cancel = context.WithCancel(s.detectCtx) //nolint:contextcheck // detection outlives the rebalance that took the shard
	s.mu.Lock()
	for c, st := range states {
		s.corpora[c] = &corpusState{state: st}
	}
	s.owned[n] = sh
	s.mu.Unlock()
	sh.runners = append(sh.runners, pipeline.NewShardRunner(s.deps.Bus, pipeline.StageGrapher, events.KindExtractions, n, s.cfg.Stage, s.outages.Handler(s.handleExtraction), s.log))
	if n == 0 {
		legacy, err := s.deps.Bus.SubjectCounts(ctx, pipeline.StreamName(events.KindExtractions), events.AllSubjects(events.KindExtractions))
		if err != nil {
			s.dropShard(ctx, sh)
			return fail(err)
		}
		if len(legacy) > 0 {
			// Events stored before the stream was sharded: the holder of shard 0 reads
			// them through the unsharded consumer, handling those of its own corpora and
			// leaving the others to the graphers holding them (handleLegacy).
			sh.runners = append(sh.runners, pipeline.NewRunner(s.deps.Bus, pipeline.StageGrapher, events.KindExtractions, s.cfg.Stage, s.outages.Handler(s.handleLegacy), s.log))
		}
	}
	for _, r := range sh.runners {
		if err := r.Start(ctx); err != nil {
			s.dropShard(ctx, sh)
			return fail(err)
		}
	}
	s.log.Info("holding a shard", "shard", n, "corpora", len(states))
	return true, nil
}

// errNotMine is the error that leaves an event stored before sharding to the grapher
// holding its corpus's shard.
var errNotMine = errors.New("the corpus's shard is held by another grapher")

// handleLegacy handles an event stored before the stream was sharded if its corpus is
// in a shard this grapher holds; otherwise it is redelivered later (and never
// dead-lettered for it), to whichever grapher then reads the unsharded consumer.
func (s *Service) handleLegacy(ctx context.Context, corpus string, m *bus.Message) error {
	s.mu.Lock()
	mine := s.owner(corpus) != nil
	s.mu.Unlock()
	if !mine {
		return bus.Unavailable(errNotMine)
	}
	return s.handleExtraction(ctx, corpus, m)
}

// dropShard gives a shard up: its consumers stop (merges in flight commit), its
// detection runs are cancelled and waited for, its corpora are forgotten, and its
// lease is released (if it is still held: a lost one is not).
func (s *Service) dropShard(ctx context.Context, sh *shard) {
	s.mu.Lock()
	sh.closing = true
	s.mu.Unlock()
	for _, r := range sh.runners {
		if err := r.Stop(ctx); err != nil {
			s.log.Warn("stopping a shard's consumer", "shard", sh.n, "err", err)
		}
	}
	if sh.cancel != nil {
		sh.cancel()
	}
	sh.runs.Wait()
	s.mu.Lock()
	if s.owned[sh.n] == sh {
		delete(s.owned, sh.n)
	}
	for c := range s.corpora {
		if pipeline.ShardOf(c, s.cfg.Shards) == sh.n {
			delete(s.corpora, c)
		}
	}
	s.mu.Unlock()
	if sh.lease != nil {
		if err := sh.lease.Release(ctx); err != nil {
			s.log.Warn("releasing a shard", "shard", sh.n, "err", err)
		}
	}
}

// stopConsumers stops consuming: the one consumer, or (sharded) rebalancing and every
// held shard's consumers.
func (s *Service) stopConsumers(ctx context.Context) error {
	if s.cfg.Shards == 0 {
		return s.runner.Stop(ctx)
	}
	close(s.quitBalance)
	<-s.balanced
	s.mu.Lock()
	var runners []*pipeline.Runner
	for _, sh := range s.owned {
		sh.closing = true
		runners = append(runners, sh.runners...)
	}
	s.mu.Unlock()
	var errs []error
	for _, r := range runners {
		errs = append(errs, r.Stop(ctx))
	}
	return errors.Join(errs...)
}

// releaseShards releases the leases of a sharded grapher that stopped, so that the
// others take its shards at once.
func (s *Service) releaseShards(ctx context.Context) error {
	s.mu.Lock()
	var leases []*bus.Lease
	for n, sh := range s.owned {
		if sh.lease != nil {
			leases = append(leases, sh.lease)
		}
		delete(s.owned, n)
	}
	if s.member != nil {
		leases = append(leases, s.member)
	}
	s.mu.Unlock()
	var errs []error
	for _, l := range leases {
		errs = append(errs, l.Release(ctx))
	}
	return errors.Join(errs...)
}

// heldShards lists the shards this grapher holds, sorted.
func (s *Service) heldShards() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]int, 0, len(s.owned))
	for n := range s.owned {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}
