package grapher

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/community"
	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/pkg/graphstore"
	"github.com/graphrag/graphrag/pkg/pipeline"
	"github.com/graphrag/graphrag/pkg/schema"
	"github.com/graphrag/graphrag/pkg/vectorstore"
)

// Detect runs community detection and PageRank for a corpus now, writes the results, and
// publishes events for communities without a report. The scheduler calls it; tests and
// the CLI may too.
func (s *Service) Detect(ctx context.Context, corpus string) error {
	start := time.Now()
	s.mu.Lock()
	st, ok := s.corpora[corpus]
	if !ok {
		st = &corpusState{}
		s.corpora[corpus] = st
	}
	changesAtStart := st.state.Changes
	s.mu.Unlock()

	res, err := s.detect(ctx, corpus)
	if err != nil {
		return err
	}
	snap, comms := res.Snapshot, res.Communities
	if err := s.deps.Graph.SetPageRank(ctx, corpus, res.PageRank); err != nil {
		return fmt.Errorf("writing pagerank: %w", err)
	}
	if err := s.deps.Graph.ReplaceCommunities(ctx, corpus, comms); err != nil {
		return fmt.Errorf("writing communities: %w", err)
	}
	if err := s.summarizeDescriptions(ctx, corpus, snap.Keys); err != nil {
		return err
	}
	if err := s.embedEntities(ctx, corpus, snap.Keys); err != nil {
		return err
	}
	if err := s.refreshTaxonomy(ctx, corpus, snap.Keys); err != nil {
		s.log.Warn("refreshing taxonomy", "corpus", corpus, "err", err)
	}
	run := events.Hash(strings.Join(snap.Keys, "\n"), strconv.Itoa(len(snap.Edges)))[:16]
	published, err := s.publishUnreported(ctx, corpus, comms, run)
	if err != nil {
		return err
	}

	s.mu.Lock()
	st.state.Detections++
	st.state.LastRun, st.state.LastRunAt, st.state.Levels, st.state.Published = run, time.Now().UTC(), res.Levels, published
	if st.state.Changes == changesAtStart {
		st.state.Dirty, st.state.Changes = false, 0
	} else {
		st.state.Changes -= changesAtStart // merged while we ran: run again later
	}
	snapshot := st.state
	s.mu.Unlock()
	if err := pipeline.SaveGraphState(ctx, s.kv, corpus, snapshot); err != nil {
		return err
	}
	s.log.Info("communities detected", "corpus", corpus, "algorithms", res.Method, "entities", len(snap.Keys), "edges", len(snap.Edges),
		"communities", len(comms), "levels", res.Levels, "published", published, "took", time.Since(start).String())
	return nil
}

// detect runs hierarchical Leiden and PageRank with the grapher's settings: in the
// graph store when it has them natively and they are available now (Neo4j with Graph
// Data Science), else in pure Go on a snapshot.
func (s *Service) detect(ctx context.Context, corpus string) (community.Result, error) {
	return community.Detect(ctx, s.deps.Graph, s.deps.Algorithms, corpus, s.cfg.Detection())
}

// Detection is the community detection part of the config; the benchmark harness
// builds its corpora with it.
func (c Config) Detection() community.Options {
	return community.Options{Resolution: c.Resolution, Seed: c.Seed, MaxLevels: c.MaxLevels, Damping: c.Damping,
		MinSize: c.MinCommunitySize}
}

// publishUnreported publishes an event for every community that has no report in the
// vector store, and deletes reports of communities that no longer exist. Asking the
// store (rather than diffing with the previous hierarchy) makes a crash anywhere in a
// run harmless: the next run publishes whatever is still missing.
func (s *Service) publishUnreported(ctx context.Context, corpus string, comms []graphstore.Community, run string) (int, error) {
	coll := schema.Collection(corpus, schema.Communities)
	if err := s.deps.Vectors.EnsureCollection(ctx, vectorstore.CollectionSpec{Name: coll, Dim: s.dim, Lexical: true}); err != nil {
		return 0, fmt.Errorf("ensuring community collection: %w", err)
	}
	ids := make([]string, len(comms))
	for i, c := range comms {
		ids[i] = c.ID
	}
	have := map[string]bool{}
	for _, part := range batches(ids, 512) {
		recs, err := s.deps.Vectors.Get(ctx, coll, part)
		if err != nil {
			return 0, fmt.Errorf("reading community reports: %w", err)
		}
		for _, r := range recs {
			have[r.ID] = true
		}
	}
	published := 0
	for _, c := range comms {
		if have[c.ID] {
			continue
		}
		ev := &events.Community{Schema: events.SchemaCommunity, Corpus: corpus, ID: c.ID, Level: c.Level,
			ParentID: c.ParentID, MemberCount: len(c.Members), Run: run}
		b, err := events.Encode(ev)
		if err != nil {
			return published, err
		}
		if _, err := s.deps.Bus.Publish(ctx, events.Subject(events.KindCommunities, corpus), b, bus.WithMsgID(ev.MsgID())); err != nil {
			return published, fmt.Errorf("publishing community %s: %w", c.ID, err)
		}
		published++
	}
	if err := s.deleteStaleReports(ctx, coll, ids); err != nil {
		return published, err
	}
	return published, nil
}

// deleteStaleReports removes reports whose community is gone. It enumerates the
// collection whenever it holds any report: fewer reports than communities does not
// mean none is stale (new communities may not have theirs yet).
func (s *Service) deleteStaleReports(ctx context.Context, coll string, current []string) error {
	n, err := s.deps.Vectors.Count(ctx, coll)
	if err != nil {
		return fmt.Errorf("counting community reports: %w", err)
	}
	if n == 0 {
		return nil
	}
	keep := map[string]bool{}
	for _, id := range current {
		keep[id] = true
	}
	if _, err := deleteStale(ctx, s.deps.Vectors, coll, func(id string) bool { return keep[id] }); err != nil {
		return fmt.Errorf("deleting stale community reports: %w", err)
	}
	return nil
}

func batches(ids []string, size int) [][]string {
	var out [][]string
	for len(ids) > size {
		out = append(out, ids[:size])
		ids = ids[size:]
	}
	if len(ids) > 0 {
		out = append(out, ids)
	}
	return out
}
