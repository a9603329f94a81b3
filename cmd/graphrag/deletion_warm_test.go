package main

import (
	"context"
	"slices"
	"testing"

	"github.com/graphrag/graphrag/pkg/community"
	"github.com/graphrag/graphrag/pkg/graphstore"
	"github.com/graphrag/graphrag/pkg/platform"
	"github.com/graphrag/graphrag/pkg/schema"
)

// TestDeleteAndRestoreWarm is TestDeleteAndRestoreSample with the default, warm-started
// detection (ADR 0042), whose hierarchy depends on the order documents came in. What it
// still guarantees: nothing of the deleted document is left (no chunk, posting, entity
// or relationship cites it, no report of a community that held one of its entities is
// kept), the rest of the graph is exact, the hierarchy is valid with a report for every
// community, and publishing the document again restores the graph exactly.
func TestDeleteAndRestoreWarm(t *testing.T) {
	if testing.Short() {
		t.Skip("end to end")
	}
	cfg := fastConfig()
	if !cfg.Grapher.WarmStart {
		t.Fatal("the default config has cold detection: this test is about the warm default")
	}
	docs := sampleDocs(t)
	var qs []datasetQuestion
	for _, d := range docs {
		qs = append(qs, datasetQuestion{Question: d.Title, Gold: []string{d.ID}})
	}
	p := testPlatform(t, t.TempDir())
	st := startStack(t, p, cfg)
	const corpus = "demo"
	var held map[string][]string // community id -> members, before the deletion
	pick := func(d corpusDump) string {
		checkHierarchy(t, p, corpus, d)
		held = rawCommunities(t, p, corpus)
		return leakProneVictim(d)
	}
	// The first comparison is made with the document deleted (twice).
	leakChecked := false
	diff := func(a, b corpusDump) string {
		checkHierarchy(t, p, corpus, a)
		if !leakChecked {
			leakChecked = true
			checkNoReportOfGone(t, held, rawCommunities(t, p, corpus), a)
		}
		return diffDumps(withoutCommunities(a), withoutCommunities(b))
	}
	deleteAndRestoreWith(t, p, st, corpus, docs, qs, pick, diff)
}

// leakProneVictim picks the document whose deletion removes, from the most communities,
// few enough of their members (entities no other document names) for
// community.Stabilize to keep the community's id and report: where a report would
// outlive a deleted entity.
func leakProneVictim(d corpusDump) string {
	docOf := map[string]string{}
	for _, c := range d.Chunks {
		docOf[c.ID] = c.Attrs[schema.ChunkDocumentID]
	}
	only := map[string]string{} // entity -> the one document naming it
	for _, e := range d.Entities {
		docs := map[string]bool{}
		for _, c := range e.Chunks {
			docs[docOf[c]] = true
		}
		for doc := range docs {
			if len(docs) == 1 {
				only[e.Key] = doc
			}
		}
	}
	score := map[string]int{}
	for _, c := range d.Communities {
		lost := map[string]int{}
		for _, m := range c.Members {
			if doc, ok := only[m]; ok {
				lost[doc]++
			}
		}
		for doc, n := range lost {
			if community.SmallChange(n, len(c.Members), community.DefaultMaxChange) {
				score[doc]++
			}
		}
	}
	best := ""
	for doc, n := range score {
		if best == "" || n > score[best] || (n == score[best] && doc < best) {
			best = doc
		}
	}
	return best
}

// checkNoReportOfGone: no report outlives an entity it was written from. A community of
// before that held an entity no longer in the graph of d has no id in now (it would
// have kept its report, which names the entity).
func checkNoReportOfGone(t *testing.T, before, now map[string][]string, d corpusDump) {
	t.Helper()
	present := map[string]bool{}
	for _, e := range d.Entities {
		present[e.Key] = true
	}
	held := 0
	for id, members := range before {
		i := slices.IndexFunc(members, func(m string) bool { return !present[m] })
		if i < 0 {
			continue
		}
		held++
		if _, kept := now[id]; kept {
			t.Errorf("community %s held %s, gone with the deleted document, and kept its id (and report)", id, members[i])
		}
	}
	if held == 0 {
		t.Fatal("no community held an entity of the deleted document alone: the check checks nothing")
	}
	t.Logf("%d communities held an entity gone with the document", held)
}

// withoutCommunities is a dump without the community hierarchy, which with warm start
// depends on the order documents came in.
func withoutCommunities(d corpusDump) corpusDump {
	d.Communities = nil
	d.Stats.Communities, d.Stats.Levels = 0, 0
	ents := slices.Clone(d.Entities)
	for i := range ents {
		ents[i].Communities = nil
	}
	d.Entities = ents
	return d
}

// rawCommunities returns the stored communities' members by id (ids are not in a dump).
func rawCommunities(t *testing.T, p *platform.Platform, corpus string) map[string][]string {
	t.Helper()
	cs, err := p.Graph.Communities(context.Background(), corpus, -1)
	if err != nil {
		t.Fatal(err)
	}
	out := make(map[string][]string, len(cs))
	for _, c := range cs {
		out[c.ID] = c.Members
	}
	return out
}

// checkHierarchy checks that the stored hierarchy is valid for the graph in d: every
// member an entity of the graph, an entity in at most one community per level, each
// community at least -min-community-size large and inside its parent (one level up,
// which holds all of its members), entities' community lists matching the records, and
// exactly one report per community.
func checkHierarchy(t *testing.T, p *platform.Platform, corpus string, d corpusDump) {
	t.Helper()
	ctx := context.Background()
	cs, err := p.Graph.Communities(ctx, corpus, -1)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) == 0 {
		t.Fatal("no communities")
	}
	present := map[string]bool{}
	for _, e := range d.Entities {
		present[e.Key] = true
	}
	byID := map[string]graphstore.Community{}
	type slot struct {
		level int
		key   string
	}
	owner := map[slot]string{}
	minSize := fastConfig().Grapher.MinCommunitySize
	for _, c := range cs {
		byID[c.ID] = c
		if len(c.Members) < minSize {
			t.Errorf("community %s has %d members, below the minimum %d", c.ID, len(c.Members), minSize)
		}
		for _, m := range c.Members {
			if !present[m] {
				t.Errorf("community %s has member %s, not an entity of the graph", c.ID, m)
			}
			if o, dup := owner[slot{c.Level, m}]; dup {
				t.Errorf("entity %s is in communities %s and %s at level %d", m, o, c.ID, c.Level)
			}
			owner[slot{c.Level, m}] = c.ID
		}
	}
	for _, c := range cs {
		// The community one level up holding its first member must hold all of them
		// and be its parent: levels nest.
		up, ok := owner[slot{c.Level + 1, c.Members[0]}]
		if ok != (c.ParentID != "") || up != c.ParentID {
			t.Errorf("community %s (level %d) has parent %q; its members are in %q one level up", c.ID, c.Level, c.ParentID, up)
			continue
		}
		for _, m := range c.Members {
			if ok && owner[slot{c.Level + 1, m}] != up {
				t.Errorf("community %s is not inside its parent %s: member %s is elsewhere", c.ID, up, m)
			}
		}
	}
	// An entity's list has its community at each level, "" where it has none.
	canon := canonicalCommunities(cs)
	levels := 0
	for _, c := range cs {
		levels = max(levels, c.Level+1)
	}
	for _, e := range d.Entities {
		want := make([]string, max(levels, len(e.Communities)))
		for l := range want {
			want[l] = canon[owner[slot{l, e.Key}]]
		}
		got := slices.Clone(e.Communities)
		for len(got) < len(want) {
			got = append(got, "")
		}
		if !slices.Equal(got, want) {
			t.Errorf("entity %s lists communities %v, the records hold it in %v", e.Key, e.Communities, want)
		}
	}
	reports := listIDs(ctx, t, p.Vectors, schema.Collection(corpus, schema.Communities))
	ids := make([]string, 0, len(byID))
	for id := range byID {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	if !slices.Equal(reports, ids) {
		t.Errorf("%d reports for %d communities: every community, and only those, must have one", len(reports), len(ids))
	}
}
