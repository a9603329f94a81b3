package grapher

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/pkg/graphstore"
	"github.com/graphrag/graphrag/pkg/leiden"
	"github.com/graphrag/graphrag/pkg/pagerank"
	"github.com/graphrag/graphrag/pkg/pipeline"
	"github.com/graphrag/graphrag/pkg/schema"
	"github.com/graphrag/graphrag/pkg/vectorstore"
	"github.com/graphrag/graphrag/pkg/wgraph"
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

	snap, comms, scores, levels, algo, err := s.detect(ctx, corpus)
	if err != nil {
		return err
	}
	if err := s.deps.Graph.SetPageRank(ctx, corpus, scores); err != nil {
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
	st.state.LastRun, st.state.LastRunAt, st.state.Levels, st.state.Published = run, time.Now().UTC(), levels, published
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
	s.log.Info("communities detected", "corpus", corpus, "algorithms", algo, "entities", len(snap.Keys), "edges", len(snap.Edges),
		"communities", len(comms), "levels", levels, "published", published, "took", time.Since(start).String())
	return nil
}

// detect runs hierarchical Leiden and PageRank: in the graph store when it has them
// natively and they are available now (Neo4j with Graph Data Science), else in pure Go on
// a snapshot. Both give the same contract: levels with level 0 finest, nested.
func (s *Service) detect(ctx context.Context, corpus string) (graphstore.Snapshot, []graphstore.Community, map[string]float64, int, string, error) {
	if a := s.deps.Algorithms; a != nil {
		avail, err := a.Available(ctx)
		if err != nil {
			return graphstore.Snapshot{}, nil, nil, 0, "", fmt.Errorf("checking the store's graph algorithms: %w", err)
		}
		if avail {
			res, err := a.Communities(ctx, corpus, graphstore.AlgorithmOptions{Resolution: s.cfg.Resolution, Seed: s.cfg.Seed,
				MaxLevels: s.cfg.MaxLevels, Damping: s.cfg.Damping, MaxIterations: 20})
			if err != nil {
				return graphstore.Snapshot{}, nil, nil, 0, "", fmt.Errorf("running the store's graph algorithms: %w", err)
			}
			scores := make(map[string]float64, len(res.Snapshot.Keys))
			for i, k := range res.Snapshot.Keys {
				scores[k] = res.PageRank[i]
			}
			return res.Snapshot, BuildHierarchy(res.Snapshot, res.Levels, s.cfg.MinCommunitySize), scores, len(res.Levels), "store", nil
		}
	}
	snap, err := s.deps.Graph.Snapshot(ctx, corpus)
	if err != nil {
		return snap, nil, nil, 0, "", fmt.Errorf("reading graph snapshot: %w", err)
	}
	comms, scores, levels, err := s.communities(ctx, snap)
	return snap, comms, scores, levels, "go", err
}

// communities runs Leiden and PageRank on the snapshot and turns the hierarchy into
// community records with content-derived ids.
func (s *Service) communities(ctx context.Context, snap graphstore.Snapshot) ([]graphstore.Community, map[string]float64, int, error) {
	n := len(snap.Keys)
	scores := make(map[string]float64, n)
	if n == 0 {
		return nil, scores, 0, nil
	}
	edges := make([]wgraph.Edge, len(snap.Edges))
	for i, e := range snap.Edges {
		edges[i] = wgraph.Edge{U: e.Source, V: e.Target, W: e.Weight}
	}
	g, err := wgraph.FromEdges(n, edges)
	if err != nil {
		return nil, nil, 0, fmt.Errorf("building graph: %w", err)
	}
	pr, err := pagerank.Run(g, pagerank.WithDamping(s.cfg.Damping))
	if err != nil {
		return nil, nil, 0, fmt.Errorf("pagerank: %w", err)
	}
	for i, k := range snap.Keys {
		scores[k] = pr.Scores[i]
	}
	res, err := leiden.Run(ctx, g, leiden.WithResolution(s.cfg.Resolution), leiden.WithSeed(s.cfg.Seed), leiden.WithMaxLevels(s.cfg.MaxLevels))
	if err != nil {
		return nil, nil, 0, fmt.Errorf("leiden: %w", err)
	}
	memberships := make([][]int, len(res.Levels))
	for i, l := range res.Levels {
		memberships[i] = l.Membership
	}
	comms := BuildHierarchy(snap, memberships, s.cfg.MinCommunitySize)
	return comms, scores, len(res.Levels), nil
}

// BuildHierarchy turns per-level memberships (level 0 finest) into community records:
// ids derived from level and sorted member keys, parent and child links, internal
// relationship counts. Communities smaller than minSize get no record (their members
// still belong to the larger communities above them). The result is sorted by level, id.
func BuildHierarchy(snap graphstore.Snapshot, memberships [][]int, minSize int) []graphstore.Community {
	type key struct{ level, id int }
	byKey := map[key]*graphstore.Community{}
	var order []key
	for level, mem := range memberships {
		groups := map[int][]string{}
		for node, c := range mem {
			groups[c] = append(groups[c], snap.Keys[node])
		}
		ids := make([]int, 0, len(groups))
		for c := range groups {
			ids = append(ids, c)
		}
		sort.Ints(ids)
		for _, c := range ids {
			members := groups[c]
			if len(members) < minSize {
				continue
			}
			sort.Strings(members)
			id := CommunityID(level, members)
			byKey[key{level, c}] = &graphstore.Community{ID: id, Level: level, Members: members}
			order = append(order, key{level, c})
		}
	}
	// Parent of (level, c) is the community at level+1 holding any of its members.
	for _, k := range order {
		if k.level+1 >= len(memberships) {
			continue
		}
		com := byKey[k]
		node := indexOf(snap.Keys, com.Members[0])
		parent, ok := byKey[key{k.level + 1, memberships[k.level+1][node]}]
		if !ok {
			continue
		}
		com.ParentID = parent.ID
		parent.ChildIDs = append(parent.ChildIDs, com.ID)
	}
	// Internal relationship counts.
	for level, mem := range memberships {
		for _, e := range snap.Edges {
			if mem[e.Source] == mem[e.Target] {
				if c, ok := byKey[key{level, mem[e.Source]}]; ok {
					c.RelationshipCount++
				}
			}
		}
	}
	out := make([]graphstore.Community, 0, len(order))
	for _, k := range order {
		c := byKey[k]
		sort.Strings(c.ChildIDs)
		out = append(out, *c)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Level != out[j].Level {
			return out[i].Level < out[j].Level
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// CommunityID is content-derived: the same members at the same level give the same id.
func CommunityID(level int, sortedMembers []string) string {
	return "c" + strconv.Itoa(level) + "-" + events.Hash(sortedMembers...)[:20]
}

func indexOf(sorted []string, k string) int {
	return sort.SearchStrings(sorted, k)
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
// collection only when it holds more records than there are communities.
func (s *Service) deleteStaleReports(ctx context.Context, coll string, current []string) error {
	n, err := s.deps.Vectors.Count(ctx, coll)
	if err != nil {
		return fmt.Errorf("counting community reports: %w", err)
	}
	if n <= len(current) {
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
