package grapher

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/community"
	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/pkg/graphstore"
	"github.com/graphrag/graphrag/pkg/llm"
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
	// Whether each curation operation still acts on the graph (curation.go).
	if err := s.merger.cur.refreshStatus(ctx, corpus); err != nil {
		return err
	}

	// The current hierarchy is what Stabilize matches the new communities against and,
	// with WarmStart, seeds Leiden (a re-run keeps what new documents did not touch).
	steps := stepTimer{last: start}
	prev, err := s.deps.Graph.Communities(ctx, corpus, -1)
	if err != nil {
		return fmt.Errorf("reading the current communities: %w", err)
	}
	res, err := s.detect(ctx, corpus, prev)
	if err != nil {
		return err
	}
	steps.done("detect")
	snap := res.Snapshot
	// A community that held an entity now gone from the graph (the last document naming
	// it deleted or replaced) passes on no id: its report names that entity.
	comms, err := s.stabilize(ctx, corpus, withoutGone(prev, snap.Keys), res.Communities)
	if err != nil {
		return err
	}
	steps.done("stabilize")
	if err := s.deps.Graph.SetPageRank(ctx, corpus, res.PageRank); err != nil {
		return fmt.Errorf("writing pagerank: %w", err)
	}
	if err := s.deps.Graph.ReplaceCommunities(ctx, corpus, comms); err != nil {
		return fmt.Errorf("writing communities: %w", err)
	}
	steps.done("write")
	if err := s.summarizeDescriptions(ctx, corpus, snap.Keys); err != nil {
		return err
	}
	steps.done("descriptions")
	// Reports are written from the graph alone, so the summarizers start on them now,
	// while this run embeds the entities: at 100k chunks each of the two takes minutes
	// of one core. The corpus stays dirty (not complete) until the run ends.
	run := runID(snap, start)
	unreported, err := s.publishUnreported(ctx, corpus, comms, run)
	if err != nil {
		return err
	}
	steps.done("publish")
	if err := s.embedEntities(ctx, corpus, snap.Keys); err != nil {
		return err
	}
	steps.done("embed")
	if err := s.refreshTaxonomy(ctx, corpus, snap.Keys); err != nil {
		s.log.Warn("refreshing taxonomy", "corpus", corpus, "err", err)
	}
	steps.done("taxonomy")

	s.mu.Lock()
	st.state.Detections++
	st.state.LastRun, st.state.LastRunAt, st.state.Levels, st.state.Published = run, time.Now().UTC(), res.Levels, len(unreported)
	st.state.Communities, st.state.Unreported = len(comms), len(unreported)
	st.state.FailingSince, st.state.Failures, st.state.LastError, st.state.NextRetry = time.Time{}, 0, "", time.Time{}
	st.unreported, st.reportsChecked = unreported, time.Now()
	if st.state.Changes == changesAtStart {
		st.state.Dirty, st.state.Changes = false, 0
	} else {
		st.state.Changes -= changesAtStart // merged while we ran: run again later
	}
	s.mu.Unlock()
	if err := s.saveState(ctx, corpus); err != nil {
		return err
	}
	s.log.Info("communities detected", "corpus", corpus, "algorithms", res.Method, "entities", len(snap.Keys), "edges", len(snap.Edges),
		"communities", len(comms), "levels", res.Levels, "published", len(unreported), "took", time.Since(start).String(),
		"steps", steps.String())
	return nil
}

// stepTimer records how long each step of a detection run took, for its log line: at
// 100k chunks a run takes minutes, and which step is slow depends on the corpus.
type stepTimer struct {
	last  time.Time
	steps []string
}

func (t *stepTimer) done(step string) {
	now := time.Now()
	t.steps = append(t.steps, step+"="+now.Sub(t.last).Round(time.Millisecond).String())
	t.last = now
}

func (t *stepTimer) String() string { return strings.Join(t.steps, " ") }

// runID names one detection run. It must differ between runs even on the same graph:
// community events carry it in their message ids, and a run that re-announces a
// community must not be taken for a duplicate of an earlier run's announcement.
func runID(snap graphstore.Snapshot, start time.Time) string {
	return events.Hash(strings.Join(snap.Keys, "\n"), strconv.Itoa(len(snap.Edges)),
		start.UTC().Format(time.RFC3339Nano), strconv.FormatUint(rand.Uint64(), 16))[:16]
}

// detect runs hierarchical Leiden and PageRank with the grapher's settings: in the
// graph store when it has them natively and they are available now (Neo4j with Graph
// Data Science), else in pure Go on a snapshot, starting from the hierarchy prev
// when WarmStart is set.
func (s *Service) detect(ctx context.Context, corpus string, prev []graphstore.Community) (community.Result, error) {
	o := s.cfg.Detection()
	if s.cfg.WarmStart {
		o.Previous = prev
	}
	return community.Detect(ctx, s.deps.Graph, s.deps.Algorithms, corpus, o)
}

// stabilize gives the new communities the ids (and so the reports) of the current ones
// (prev) they barely differ from: see community.Stabilize. The size a report was
// written for is in its record.
func (s *Service) stabilize(ctx context.Context, corpus string, prev, next []graphstore.Community) ([]graphstore.Community, error) {
	if s.cfg.MaxCommunityChange <= 0 || len(prev) == 0 {
		return next, nil
	}
	ids := make([]string, len(prev))
	for i, c := range prev {
		ids[i] = c.ID
	}
	reported := make(map[string]int, len(prev))
	coll := schema.Collection(corpus, schema.Communities)
	for _, part := range batches(ids, 512) {
		recs, err := s.deps.Vectors.Attrs(ctx, coll, part)
		if errors.Is(err, vectorstore.ErrNotFound) {
			break // no report written yet in this corpus
		}
		if err != nil {
			return nil, fmt.Errorf("reading community reports: %w", err)
		}
		for id, a := range recs {
			if n, err := strconv.Atoi(a[schema.ReportMembers]); err == nil {
				reported[id] = n
			}
		}
	}
	return community.Stabilize(prev, next, reported, s.cfg.MaxCommunityChange), nil
}

// withoutGone returns the communities of prev all of whose members are among keys (the
// graph's entities now). The others cannot keep their id and report, however small the
// change (community.Stabilize tolerates one member): the report was written from the
// name and description of an entity that is gone, and text of a deleted document would
// stay in the report collection.
func withoutGone(prev []graphstore.Community, keys []string) []graphstore.Community {
	present := make(map[string]bool, len(keys))
	for _, k := range keys {
		present[k] = true
	}
	out := make([]graphstore.Community, 0, len(prev))
	for _, c := range prev {
		if !slices.ContainsFunc(c.Members, func(k string) bool { return !present[k] }) {
			out = append(out, c)
		}
	}
	return out
}

// Detection is the community detection part of the config; the benchmark harness
// builds its corpora with it.
func (c Config) Detection() community.Options {
	return community.Options{Resolution: c.Resolution, Seed: c.Seed, MaxLevels: c.MaxLevels, Damping: c.Damping,
		MinSize: c.MinCommunitySize}
}

// publishUnreported publishes an event for every community that has no report in the
// vector store, deletes reports of communities that no longer exist, and returns the
// ids of the communities it published that wait for their report: not those whose
// report the summarizer quarantined (announced again, so that a store that takes the
// report now gets it, but not holding the corpus back). Asking the store (rather than diffing with the
// previous hierarchy) makes a crash anywhere in a run harmless: the next run publishes
// whatever is still missing.
func (s *Service) publishUnreported(ctx context.Context, corpus string, comms []graphstore.Community, run string) ([]string, error) {
	coll := schema.Collection(corpus, schema.Communities)
	// Reports are found by their vectors and ids only: no lexical index (see EntityText).
	if err := s.deps.Vectors.EnsureCollection(ctx, vectorstore.CollectionSpec{Name: coll, Dim: s.dim}); err != nil {
		return nil, fmt.Errorf("ensuring community collection: %w", err)
	}
	ids := make([]string, len(comms))
	for i, c := range comms {
		ids[i] = c.ID
	}
	missing, err := s.withoutReport(ctx, coll, ids)
	if err != nil {
		return nil, err
	}
	unreported := make(map[string]bool, len(missing))
	for _, id := range missing {
		unreported[id] = true
	}
	for _, c := range comms {
		if !unreported[c.ID] {
			continue
		}
		ev := &events.Community{Schema: events.SchemaCommunity, Corpus: corpus, ID: c.ID, Level: c.Level,
			ParentID: c.ParentID, MemberCount: len(c.Members), Run: run}
		b, err := events.Encode(ev)
		if err != nil {
			return nil, err
		}
		if _, err := s.deps.Bus.Publish(ctx, events.Subject(events.KindCommunities, corpus), b, bus.WithMsgID(ev.MsgID())); err != nil {
			return nil, fmt.Errorf("publishing community %s: %w", c.ID, err)
		}
	}
	if err := s.deleteStaleReports(ctx, coll, ids); err != nil {
		return nil, err
	}
	return s.notQuarantined(ctx, corpus, coll, missing, true)
}

// withoutReport returns the ids, in order, that have no record in the report collection.
func (s *Service) withoutReport(ctx context.Context, coll string, ids []string) ([]string, error) {
	have := map[string]bool{}
	for _, part := range batches(ids, 512) {
		recs, err := s.deps.Vectors.Attrs(ctx, coll, part)
		if errors.Is(err, vectorstore.ErrNotFound) {
			break // no report written yet in this corpus
		}
		if err != nil {
			return nil, fmt.Errorf("reading community reports: %w", err)
		}
		for id := range recs {
			have[id] = true
		}
	}
	var missing []string
	for _, id := range ids {
		if !have[id] {
			missing = append(missing, id)
		}
	}
	return missing, nil
}

// deleteStaleReports removes the reports of communities that are gone. It enumerates
// the whole collection every run: a count no larger than the number of communities
// proves nothing while some current communities still wait for their report. Reports
// a summarizer writes after this for a community replaced meanwhile are taken back by
// the summarizer, which looks for the community again after writing.
func (s *Service) deleteStaleReports(ctx context.Context, coll string, current []string) error {
	keep := make(map[string]bool, len(current))
	for _, id := range current {
		keep[id] = true
	}
	n, err := deleteStale(ctx, s.deps.Vectors, coll, func(id string) bool { return keep[id] })
	if err != nil {
		return fmt.Errorf("deleting stale community reports: %w", err)
	}
	if n > 0 {
		s.log.Debug("deleted reports of replaced communities", "collection", coll, "deleted", n)
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

// outageSources are what the grapher waits for when it is down: the stores, the model
// endpoints detection depends on (the chat client, for description summaries, and the
// embedder when that is a client too).
func (s *Service) outageSources() pipeline.AnyOutage {
	o := pipeline.AnyOutage{s.outages}
	if s.deps.LLM != nil {
		o = append(o, s.deps.LLM)
	}
	if src, ok := s.deps.Embedder.(pipeline.OutageSource); ok && s.deps.Embedder != llm.Embedder(s.deps.LLM) {
		o = append(o, src)
	}
	return o
}
