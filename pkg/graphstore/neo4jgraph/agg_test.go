package neo4jgraph

import (
	"bytes"
	stdflate "compress/flate"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/graphrag/graphrag/pkg/graphstore"
	"github.com/graphrag/graphrag/pkg/graphstore/boltgraph"
	"github.com/graphrag/graphrag/pkg/wgraph"
)

// driverValue mimics what the driver hands back for a parameter the store
// wrote: lists become []any, ints int64.
func driverValue(v any) any {
	switch x := v.(type) {
	case []string:
		out := make([]any, len(x))
		for i, s := range x {
			out[i] = s
		}
		return out
	case int:
		return int64(x)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = driverValue(e)
		}
		return out
	}
	return v
}

func randomChunk(r *rand.Rand) graphstore.ChunkExtraction {
	pick := func(opts ...string) string { return opts[r.IntN(len(opts))] }
	keys := []string{"a", "b", "c", "d", "e", "é"}
	ce := graphstore.ChunkExtraction{ChunkID: fmt.Sprintf("c%02d", r.IntN(12)), DocumentID: pick("d1", "d2")}
	for range r.IntN(4) {
		ce.Entities = append(ce.Entities, graphstore.EntityMention{
			Key: pick(keys...), Name: pick("", "A", "Alpha", "b"), Type: pick("", "x", "y"),
			Description: pick("", "short", "a longer one", "zz", "middle"),
		})
	}
	for range r.IntN(4) {
		ce.Relations = append(ce.Relations, graphstore.RelationMention{
			SourceKey: pick(keys...), TargetKey: pick(keys...), Type: pick("", "r", "s"),
			Description: pick("", "rel", "relation text"), Strength: float64(r.IntN(4)),
		})
		if r.IntN(3) == 0 {
			ce.Relations[len(ce.Relations)-1].Strength *= 0.7 // not a whole number: weights are re-summed
		}
	}
	return ce
}

// simStore keeps what the database would hold for the pure half of Merge:
// stored contributions, the counter states as their JSON round trip and the
// RELATED evidence buckets (chunks/ws, chunks1/ws1, ...) by bucket index.
type simStore struct {
	chunks  map[string]oldChunk
	ents    map[string]string // key -> agg
	rels    map[pairKey]string
	weights map[pairKey]float64
	buckets map[pairKey]map[int][]evidenceRow
	// maxAdded is the most evidence one apply added to a pair: a bucket may
	// exceed evidenceCap by that much.
	maxAdded int
}

func newSimStore() *simStore {
	return &simStore{map[string]oldChunk{}, map[string]string{}, map[pairKey]string{}, map[pairKey]float64{},
		map[pairKey]map[int][]evidenceRow{}, 0}
}

// readBuckets is what cyReadEvidence returns for a pair, read by bucketRows.
func (s *simStore) readBuckets(t *testing.T, p pairKey) [][]evidenceRow {
	t.Helper()
	var triples []any
	for i, b := range s.buckets[p] {
		ck, _ := bucketKeys(i)
		cs, ws := make([]any, len(b)), make([]any, len(b))
		for j, e := range b {
			cs[j], ws[j] = e.chunk, e.strength
		}
		triples = append(triples, []any{ck, cs, ws})
	}
	bs, err := bucketRows(triples)
	if err != nil {
		t.Fatal(err)
	}
	return bs
}

// writeRelation stores a pair's state and evidence as writeRelations would
// have the database do it: target >= 0 is the cyEditRelations path.
func (s *simStore) writeRelation(t *testing.T, p pairKey, st *relState, target int) {
	t.Helper()
	props, err := st.params()
	if err != nil {
		t.Fatal(err)
	}
	s.rels[p], s.weights[p] = props["agg"].(string), st.weight
	s.maxAdded = max(s.maxAdded, len(st.added))
	bs := s.buckets[p]
	if bs == nil {
		bs = map[int][]evidenceRow{}
		s.buckets[p] = bs
	}
	if target < 0 {
		st.bucketProps(props)
		for k, v := range props {
			i, err := bucketIndex(k)
			if err != nil {
				continue // not a chunks property
			}
			if v == nil {
				delete(bs, i)
				continue
			}
			ck, wk := bucketKeys(i)
			cs, ws := props[ck].([]string), props[wk].([]float64)
			bs[i] = make([]evidenceRow, len(cs))
			for j := range cs {
				bs[i][j] = evidenceRow{cs[j], ws[j]}
			}
		}
		return
	}
	gone := map[string]bool{}
	for _, c := range st.gone {
		gone[c] = true
	}
	var keep []evidenceRow
	for _, e := range bs[0] {
		if !gone[e.chunk] {
			keep = append(keep, e)
		}
	}
	bs[0] = keep
	bs[target] = append(bs[target], st.added...)
}

// apply does what Store.apply does, with maps for the database.
func (s *simStore) apply(t *testing.T, writes []chunkWrite) {
	t.Helper()
	p := makePlan(writes, s.chunks)
	ents := map[string]*entState{}
	for _, k := range p.keys {
		st := new(entState)
		if agg, ok := s.ents[k]; ok {
			if err := json.Unmarshal([]byte(agg), st); err != nil {
				t.Fatal(err)
			}
		}
		ents[k] = st
	}
	rels := s.loadRels(t, p.pairs)
	p.fold(ents, rels)
	for _, w := range p.changed {
		if w.ct == nil {
			delete(s.chunks, w.id)
			continue
		}
		ct, err := decodeContribution(w.id, w.contrib)
		if err != nil {
			t.Fatal(err)
		}
		s.chunks[w.id] = oldChunk{exists: true, hash: w.hash, ct: ct}
	}
	for pr, st := range rels {
		_, exists := s.rels[pr]
		if st.Chunks <= 0 {
			delete(s.rels, pr)
			delete(s.buckets, pr)
			continue
		}
		if !exists || st.needsBuckets() {
			st.rebucket(s.readBuckets(t, pr)) // as loadBuckets and writeRelations do
		}
		target := -1
		if st.buckets == nil {
			target = st.appendBucket()
		}
		s.writeRelation(t, pr, st, target)
	}
	for k, st := range ents {
		delete(s.ents, k)
		if st.Mentions > 0 {
			props, err := st.params(k)
			if err != nil {
				t.Fatal(err)
			}
			s.ents[k] = props["agg"].(string)
		}
	}
}

// checkBuckets checks the bucket layout of a pair against its state and
// returns the chunk ids of all its buckets.
func (s *simStore) checkBuckets(t *testing.T, p pairKey, st *relState) []string {
	t.Helper()
	bs := s.buckets[p]
	if _, ok := bs[0]; !ok && len(bs) > 0 {
		t.Fatalf("%v: buckets %v without bucket 0", p, bs)
	}
	var ids []string
	for i, b := range bs {
		if i > st.Last || (i > 0 && len(b) == 0) {
			t.Fatalf("%v: bucket %d of %v, state says last %d", p, i, bs, st.Last)
		}
		if len(b) > evidenceCap+s.maxAdded {
			t.Fatalf("%v: bucket %d has %d entries, cap %d", p, i, len(b), evidenceCap)
		}
		c, _ := evidenceLists(b)
		ids = append(ids, c...)
	}
	if st.Last > 0 && len(bs[st.Last]) != st.LastLen {
		t.Fatalf("%v: last bucket %d has %d entries, state says %d", p, st.Last, len(bs[st.Last]), st.LastLen)
	}
	if want := (len(ids) + evidenceCap - 1) / evidenceCap; len(bs) > 2*want+2 {
		t.Fatalf("%v: %d buckets for %d entries", p, len(bs), len(ids))
	}
	return ids
}

func (s *simStore) evidence(p pairKey) []evidenceRow {
	var out []evidenceRow
	for id, o := range s.chunks {
		for _, r := range o.ct.Relations {
			if (pairKey{r.SourceKey, r.TargetKey}) == p {
				out = append(out, evidenceRow{id, r.Strength})
			}
		}
	}
	return out
}

func evidenceChunks(ev []evidenceRow) []string {
	ids, _ := evidenceLists(ev)
	slices.Sort(ids)
	return ids
}

// views builds the entities and relationships as the read path would.
func (s *simStore) views(t *testing.T) ([]graphstore.Entity, []graphstore.Relationship, []directedEdge) {
	t.Helper()
	chunksOf := map[string][]string{}
	for id, o := range s.chunks {
		for _, e := range o.ct.Entities {
			chunksOf[e.Key] = append(chunksOf[e.Key], id)
		}
	}
	var ents []graphstore.Entity
	for _, k := range slices.Sorted(maps.Keys(s.ents)) {
		st := new(entState)
		if err := json.Unmarshal([]byte(s.ents[k]), st); err != nil {
			t.Fatal(err)
		}
		props, err := st.params(k)
		if err != nil {
			t.Fatal(err)
		}
		ents = append(ents, entityView(k, driverValue(props).(map[string]any), chunksOf[k], nil))
	}
	var rels []graphstore.Relationship
	var directed []directedEdge
	for p, agg := range s.rels {
		st := &relState{weight: s.weights[p]}
		if err := json.Unmarshal([]byte(agg), st); err != nil {
			t.Fatal(err)
		}
		props, err := st.params()
		if err != nil {
			t.Fatal(err)
		}
		ids := s.checkBuckets(t, p, st)
		if got, want := slices.Sorted(slices.Values(ids)), evidenceChunks(s.evidence(p)); !slices.Equal(got, want) {
			t.Fatalf("%v: stored evidence %v, the chunks say %v", p, got, want)
		}
		rel := relationshipView(p.src, p.dst, driverValue(props).(map[string]any), ids)
		rels = append(rels, rel)
		directed = append(directed, directedEdge{p.src, p.dst, rel.Weight})
	}
	slices.SortFunc(rels, byWeight)
	return ents, rels, directed
}

// TestAggregatesMatchBoltgraph checks the incremental counter states of this
// driver against the embedded driver on random workloads of merges, re-merges
// and removals: same entities, relationships and snapshot, float for float.
func TestAggregatesMatchBoltgraph(t *testing.T) {
	defer func(n int) { evidenceCap = n }(evidenceCap)
	caps := []int{1, 2, 3, evidenceCap}
	for seed := range uint64(24) {
		// Small caps give pairs many evidence buckets, holes and repacks.
		evidenceCap = caps[seed%4]
		t.Run(fmt.Sprintf("%d/cap=%d", seed, evidenceCap), func(t *testing.T) {
			ctx := t.Context()
			r := rand.New(rand.NewPCG(seed, 99))
			bolt, err := boltgraph.Open(filepath.Join(t.TempDir(), "g.db"))
			if err != nil {
				t.Fatal(err)
			}
			defer bolt.Close()
			sim := newSimStore()
			for range 12 {
				if r.IntN(4) == 0 {
					ids := []string{fmt.Sprintf("c%02d", r.IntN(12)), fmt.Sprintf("c%02d", r.IntN(12))}
					if err := bolt.RemoveChunks(ctx, "k", ids); err != nil {
						t.Fatal(err)
					}
					sim.apply(t, prepareRemove(ids))
					continue
				}
				var batch []graphstore.ChunkExtraction
				for range 1 + r.IntN(4) {
					batch = append(batch, randomChunk(r))
				}
				if err := bolt.Merge(ctx, "k", batch); err != nil {
					t.Fatal(err)
				}
				ws, err := prepareMerge(batch)
				if err != nil {
					t.Fatal(err)
				}
				sim.apply(t, ws)
			}
			got, gotRels, directed := sim.views(t)
			keys := make([]string, len(got))
			for i, e := range got {
				keys[i] = e.Key
			}
			want, err := bolt.Entities(ctx, "k", keys)
			if err != nil {
				t.Fatal(err)
			}
			if stats, err := bolt.Stats(ctx, "k"); err != nil || stats.Entities != len(got) {
				t.Errorf("%d entities, boltgraph has %+v (%v)", len(got), stats, err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("entities differ\n got %+v\nwant %+v", got, want)
			}
			wantRels, err := bolt.RelationshipsAmong(ctx, "k", keys)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(gotRels, wantRels) && (len(gotRels) > 0 || len(wantRels) > 0) {
				t.Errorf("relationships differ\n got %+v\nwant %+v", gotRels, wantRels)
			}
			wantSnap, err := bolt.Snapshot(ctx, "k")
			if err != nil {
				t.Fatal(err)
			}
			gotSnap := buildSnapshot(keys, directed)
			if !reflect.DeepEqual(gotSnap, wantSnap) {
				t.Errorf("snapshots differ\n got %+v\nwant %+v", gotSnap, wantSnap)
			}
		})
	}
}

func TestBuildSnapshot(t *testing.T) {
	// "x" is an edge end the key read missed (created by a concurrent merge).
	got := buildSnapshot([]string{"b", "a"}, []directedEdge{{"b", "a", 2}, {"a", "b", 0.5}, {"a", "x", 1}})
	want := graphstore.Snapshot{Keys: []string{"a", "b", "x"}, Edges: []graphstore.Edge{
		{Source: 0, Target: 1, Weight: 2.5}, {Source: 0, Target: 2, Weight: 1}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("buildSnapshot = %+v, want %+v", got, want)
	}
	if got := buildSnapshot(nil, nil); got.Keys != nil || got.Edges != nil {
		t.Errorf("empty snapshot = %+v, want zero", got)
	}
}

func TestSummaryCurrency(t *testing.T) {
	st := &entState{}
	st.add(graphstore.EntityContribution{Key: "k", Descriptions: []string{"x", "y"}}, 1)
	entProps := func() map[string]any {
		p, err := st.params("k")
		if err != nil {
			t.Fatal(err)
		}
		return driverValue(p).(map[string]any)
	}
	props := entProps()
	props["summary"], props["summaryFP"] = "sum", props["descFP"]
	if got := entityView("k", props, nil, nil).Description; got != "sum" {
		t.Errorf("current summary: Description = %q, want sum", got)
	}
	st.add(graphstore.EntityContribution{Key: "k", Descriptions: []string{"z"}}, 1)
	next := entProps()
	next["summary"], next["summaryFP"] = "sum", props["descFP"]
	if got := entityView("k", next, nil, nil).Description; got != "x" {
		t.Errorf("stale summary: Description = %q, want the longest description x", got)
	}
	st.add(graphstore.EntityContribution{Key: "k", Descriptions: []string{"z"}}, -1)
	if back := entProps(); back["descFP"] != props["descFP"] {
		t.Errorf("removing the new description: descFP %v, want %v again", back["descFP"], props["descFP"])
	}
	if fingerprint([]string{"a", "b"}) != fingerprint([]string{"b", "a"}) || fingerprint([]string{"a"}) == fingerprint([]string{"a", "b"}) {
		t.Error("fingerprint must be order free and tell sets apart")
	}
}

// TestRelStateWeight checks when a weight is kept by adding and subtracting
// and when it must be re-summed in chunk id order.
func TestRelStateWeight(t *testing.T) {
	cases := []struct {
		name      string
		start     relState
		strengths []float64 // added; negative: subtracted
		want      float64
		resum     bool
	}{
		{"whole strengths", relState{Chunks: 1, weight: 3}, []float64{2, -3, 5}, 7, false},
		{"fraction added", relState{}, []float64{2, 0.7}, 2.7, true},
		{"fraction stored", relState{Chunks: 1, Frac: 1, weight: 0.7}, []float64{1}, 1.7, true},
		{"fraction removed", relState{Chunks: 2, Frac: 1, weight: 2.7}, []float64{-0.7}, 2, true},
		{"past 2^53", relState{Chunks: 1, weight: maxExactWeight - 1}, []float64{1e9}, maxExactWeight - 1 + 1e9, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := c.start
			st.loaded()
			for _, s := range c.strengths {
				sign := 1
				if s < 0 {
					s, sign = -s, -1
				}
				st.add(s, nil, nil, sign)
			}
			if st.weight != c.want || st.resum != c.resum {
				t.Errorf("weight %v resum %v, want %v %v", st.weight, st.resum, c.want, c.resum)
			}
		})
	}
	ev := []evidenceRow{{"c2", 0.1}, {"c1", 0.7}, {"c3", 0.2}}
	if got, want := sumEvidence(ev), (0.7+0.1)+0.2; got != want {
		t.Errorf("sumEvidence = %v, want %v (chunk id order)", got, want)
	}
}

func TestPrepareMerge(t *testing.T) {
	ce := func(id, key string) graphstore.ChunkExtraction {
		return graphstore.ChunkExtraction{ChunkID: id, Entities: []graphstore.EntityMention{{Key: key}}}
	}
	cases := []struct {
		name    string
		batch   []graphstore.ChunkExtraction
		wantIDs []string
		wantKey map[string]string
		wantErr error
	}{
		{"sorted by id", []graphstore.ChunkExtraction{ce("b", "x"), ce("a", "y")}, []string{"a", "b"}, map[string]string{"a": "y", "b": "x"}, nil},
		{"last occurrence wins", []graphstore.ChunkExtraction{ce("a", "first"), ce("b", "x"), ce("a", "last")}, []string{"a", "b"}, map[string]string{"a": "last", "b": "x"}, nil},
		{"empty", nil, nil, map[string]string{}, nil},
		{"invalid chunk", []graphstore.ChunkExtraction{ce("a", "x"), ce("", "y")}, nil, nil, graphstore.ErrInvalid},
		{"invalid key", []graphstore.ChunkExtraction{ce("a", "\xff")}, nil, nil, graphstore.ErrInvalid},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ws, err := prepareMerge(c.batch)
			if !errors.Is(err, c.wantErr) {
				t.Fatalf("error = %v, want %v", err, c.wantErr)
			}
			if err != nil {
				return
			}
			var ids []string
			keys := map[string]string{}
			for _, w := range ws {
				ids = append(ids, w.id)
				keys[w.id] = w.ct.Entities[0].Key
				if len(w.hash) != 64 {
					t.Errorf("hash %q is not a sha256", w.hash)
				}
			}
			if !reflect.DeepEqual(ids, c.wantIDs) || !reflect.DeepEqual(keys, c.wantKey) {
				t.Errorf("got ids %v keys %v, want %v %v", ids, keys, c.wantIDs, c.wantKey)
			}
		})
	}
}

func TestMakePlan(t *testing.T) {
	ws, err := prepareMerge([]graphstore.ChunkExtraction{
		{ChunkID: "same", Entities: []graphstore.EntityMention{{Key: "s"}}},
		{ChunkID: "new", Entities: []graphstore.EntityMention{{Key: "a", Name: "A"}},
			Relations: []graphstore.RelationMention{{SourceKey: "a", TargetKey: "b", Strength: 2}}},
		{ChunkID: "changed", Entities: []graphstore.EntityMention{{Key: "c"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var same chunkWrite
	for _, w := range ws {
		if w.id == "same" {
			same = w
		}
	}
	oldCt := &graphstore.Contribution{ChunkID: "changed",
		Entities:  []graphstore.EntityContribution{{Key: "c"}, {Key: "gone", Names: []string{"G"}}},
		Relations: []graphstore.RelationContribution{{SourceKey: "gone", TargetKey: "c", Strength: 1}}}
	old := map[string]oldChunk{
		"same":    {exists: true, hash: same.hash, ct: same.ct},
		"changed": {exists: true, hash: "old", ct: oldCt},
	}
	p := makePlan(append(ws, chunkWrite{id: "unknown"}), old) // removing an unknown chunk: nothing
	if got := changedIDs(p.changed); !reflect.DeepEqual(got, []string{"changed", "new"}) {
		t.Errorf("changed = %v, want [changed new] (the replay and the unknown removal skipped)", got)
	}
	if p.old[0] != oldCt || p.old[1] != nil {
		t.Errorf("old contributions = %v", p.old)
	}
	if want := []string{"a", "b", "c", "gone"}; !reflect.DeepEqual(p.keys, want) {
		t.Errorf("keys = %v, want %v", p.keys, want)
	}
	if want := []pairKey{{"a", "b"}, {"gone", "c"}}; !reflect.DeepEqual(p.pairs, want) {
		t.Errorf("pairs = %v, want %v", p.pairs, want)
	}
	ents := map[string]*entState{}
	for _, k := range p.keys {
		ents[k] = &entState{}
	}
	ents["gone"] = &entState{Mentions: 1, Names: tally{"G": 1}}
	ents["c"] = &entState{Mentions: 1}
	rels := map[pairKey]*relState{{"a", "b"}: {}, {"gone", "c"}: {Chunks: 1, weight: 1}}
	p.fold(ents, rels)
	if g, c, a := ents["gone"], ents["c"], ents["a"]; g.Mentions != 0 || len(g.Names) != 0 || c.Mentions != 1 ||
		a.Mentions != 1 || a.Names["A"] != 1 {
		t.Errorf("entity states after fold: gone %+v c %+v a %+v", g, c, a)
	}
	if ab, gc := rels[pairKey{"a", "b"}], rels[pairKey{"gone", "c"}]; ab.Chunks != 1 || ab.weight != 2 || gc.Chunks != 0 || gc.weight != 0 {
		t.Errorf("relationship states after fold: a->b %+v gone->c %+v", ab, gc)
	}
}

func changedIDs(ws []chunkWrite) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.id
	}
	return out
}

func TestWalk(t *testing.T) {
	// a-b, a-c, b-d, c-d, d-e: d is reached from b and c at distance 2.
	adj := map[string][]string{"a": {"b", "c"}, "b": {"a", "d"}, "c": {"a", "d"}, "d": {"b", "c", "e"}, "e": {"d"}}
	pr := map[string]float64{"b": 0.1, "c": 0.3, "d": 0.2, "e": 0}
	w := newWalk()
	w.start("a")
	w.start("a")
	for d := 1; d <= 3 && len(w.frontier) > 0; d++ {
		var hops []hop
		for _, u := range slices.Backward(w.frontier) { // the order rows arrive in must not matter
			for _, n := range adj[u] {
				hops = append(hops, hop{from: u, to: n, pagerank: pr[n]})
			}
		}
		w.step(d, hops)
	}
	var got []string
	for _, f := range w.ordered(0) {
		got = append(got, fmt.Sprint(f.key, f.dist, w.path(f.key, f.dist)))
	}
	want := []string{"c1 [a c]", "b1 [a b]", "d2 [a b d]", "e3 [a b d e]"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("walk = %v, want %v", got, want)
	}
	if got := w.ordered(2); len(got) != 2 || got[1].key != "b" {
		t.Errorf("ordered(2) = %v", got)
	}
}

func pathGraph(t *testing.T, n int) *wgraph.Graph {
	t.Helper()
	var edges []wgraph.Edge
	for u := 1; u < n; u++ {
		edges = append(edges, wgraph.Edge{U: u - 1, V: u, W: 1})
	}
	g, err := wgraph.FromEdges(n, edges)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestHierarchy(t *testing.T) {
	cases := []struct {
		name      string
		ids       [][]int64 // per node; the graph is the path 0-1-2-...
		maxLevels int
		want      [][]int
		wantErr   bool
	}{
		{"fine first", [][]int64{{10, 7}, {10, 7}, {11, 7}, {12, 9}}, 3, [][]int{{0, 0, 1, 2}, {0, 0, 0, 1}}, false},
		{"coarse first is reversed", [][]int64{{7, 10}, {7, 10}, {7, 11}, {9, 12}}, 3, [][]int{{0, 0, 1, 2}, {0, 0, 0, 1}}, false},
		{"repeated level dropped", [][]int64{{1, 1, 5}, {2, 2, 5}}, 3, [][]int{{0, 1}, {0, 0}}, false},
		{"capped keeps finest and coarsest", [][]int64{{0, 0, 0, 0}, {1, 0, 0, 0}, {2, 1, 0, 0}, {3, 2, 1, 0}}, 2,
			[][]int{{0, 1, 2, 3}, {0, 0, 0, 0}}, false},
		{"cap of one keeps coarsest", [][]int64{{0, 0}, {1, 0}}, 1, [][]int{{0, 0}}, false},
		{"single level", [][]int64{{4}, {4}, {2}}, 3, [][]int{{0, 0, 1}}, false},
		// GDS levels need not nest: the finer one is cut along the coarser one.
		{"not nested is made nested", [][]int64{{0, 0}, {0, 1}, {1, 1}}, 3, [][]int{{0, 1, 2}, {0, 1, 1}}, false},
		{"finer pieces split to connected ones", [][]int64{{0, 0}, {1, 0}, {1, 0}, {0, 0}}, 3, [][]int{{0, 1, 1, 2}, {0, 0, 0, 0}}, false},
		{"coarsest kept as GDS gave it", [][]int64{{0}, {1}, {0}}, 3, [][]int{{0, 1, 0}}, false},
		{"ragged", [][]int64{{0, 0}, {0}}, 3, nil, true},
		{"no nodes", nil, 3, nil, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := hierarchy(pathGraph(t, len(c.ids)), c.ids, c.maxLevels)
			if (err != nil) != c.wantErr {
				t.Fatalf("error = %v, want error %v", err, c.wantErr)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("levels = %v, want %v", got, c.want)
			}
		})
	}
}

func TestAssemble(t *testing.T) {
	// GDS node ids 30, 10, 20 with keys c, a, b; two parallel undirected
	// relationships a-c (c>a and a>c) each streamed in both directions, one to a
	// node that vanished; scores not normalized.
	res, err := assemble([]int64{30, 10, 20}, []string{"c", "a", "b"}, [][]int64{{1}, {2}, {2}},
		map[int64]float64{30: 1, 10: 2, 20: 1},
		[][2]int64{{30, 10}, {10, 30}, {10, 30}, {30, 10}, {20, 99}}, []float64{1, 1, 0.5, 0.5, 7}, 3)
	if err != nil {
		t.Fatal(err)
	}
	want := graphstore.AlgorithmResult{
		Snapshot: graphstore.Snapshot{Keys: []string{"a", "b", "c"}, Edges: []graphstore.Edge{{Source: 0, Target: 2, Weight: 1.5}}},
		Levels:   [][]int{{0, 0, 1}},
		PageRank: []float64{0.5, 0.25, 0.25},
	}
	if !reflect.DeepEqual(res, want) {
		t.Errorf("assemble = %+v, want %+v", res, want)
	}
}

func TestCountWithin(t *testing.T) {
	cs := []graphstore.Community{{ID: "x", Members: []string{"a", "b"}}, {ID: "y", Members: []string{"c"}}, {ID: "top", Level: 1}}
	membership := map[string][]string{"a": {"x", "top"}, "b": {"x", "top"}, "c": {"y", "top"}, "d": {"", "top"}}
	got := countWithin(cs, membership, []pairKey{{"a", "b"}, {"b", "a"}, {"a", "c"}, {"c", "d"}, {"d", "zz"}})
	if want := map[string]int{"x": 2, "top": 4}; !reflect.DeepEqual(got, want) {
		t.Errorf("countWithin = %v, want %v", got, want)
	}
}

func TestAlgorithmConfig(t *testing.T) {
	c, err := algorithmConfig(graphstore.AlgorithmOptions{Seed: 1<<64 - 1})
	if err != nil || c.gamma != 1 || c.damping != 0.85 || c.maxLevels != 3 || c.iterations != 20 || c.seed != -1 {
		t.Errorf("defaults = %+v, %v", c, err)
	}
	for _, o := range []graphstore.AlgorithmOptions{{Damping: 1}, {Damping: -0.5}, {Resolution: -1}, {MaxLevels: -1}, {MaxIterations: -1}} {
		if _, err := algorithmConfig(o); !errors.Is(err, graphstore.ErrInvalid) {
			t.Errorf("algorithmConfig(%+v) = %v, want ErrInvalid", o, err)
		}
	}
}

func TestTranslate(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	cases := []struct {
		name string
		ctx  context.Context
		err  error
		want error
	}{
		{"cancelled context", cancelled, errors.New("connection reset"), context.Canceled},
		{"closed driver", context.Background(), &neo4j.UsageError{Message: "Trying to create session on closed driver"}, graphstore.ErrClosed},
		{"statement error", context.Background(), &neo4j.Neo4jError{Code: "Neo.ClientError.Statement.TypeError"}, graphstore.ErrInvalid},
		{"constraint", context.Background(), &neo4j.Neo4jError{Code: "Neo.ClientError.Schema.ConstraintValidationFailed"}, graphstore.ErrInvalid},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := translate(c.ctx, c.err)
			if !errors.Is(got, c.want) || !errors.Is(got, c.err) {
				t.Errorf("translate = %v, want it to wrap %v and the original", got, c.want)
			}
		})
	}
	other := &neo4j.Neo4jError{Code: "Neo.TransientError.General.DatabaseUnavailable"}
	if got := translate(context.Background(), other); errors.Is(got, graphstore.ErrInvalid) || !errors.Is(got, other) {
		t.Errorf("translate(transient) = %v", got)
	}
}

func TestOpenRejectsBadOptions(t *testing.T) {
	if _, err := Open(t.Context(), "bolt://127.0.0.1:1", WithBatchRows(0)); !errors.Is(err, graphstore.ErrInvalid) {
		t.Errorf("Open with 0 batch rows = %v, want ErrInvalid", err)
	}
	if _, err := Open(t.Context(), "nope://x"); err == nil {
		t.Error("Open with a bad URI scheme succeeded")
	}
}

func TestMalformedProvenance(t *testing.T) {
	for i, v := range [][2]any{{[]any{"c1"}, []any{2.0, 3.0}}, {[]any{int64(1)}, []any{2.0}}, {"not a list", []any{1.0}}} {
		if _, err := evidenceRows(v[0], v[1]); err == nil {
			t.Errorf("evidenceRows(%d) accepted %v", i, v)
		}
	}
	rows, err := evidenceRows([]any{"c1"}, []any{int64(2)})
	if err != nil || len(rows) != 1 || rows[0].strength != 2 || rows[0].chunk != "c1" {
		t.Errorf("evidenceRows = %+v, %v", rows, err)
	}
	if _, err := decodeContribution("c1", "{"); err == nil {
		t.Error("decodeContribution accepted broken JSON")
	}
	for _, v := range []any{[]byte("not deflate"), nil, int64(3)} {
		if _, err := decodeContribution("c1", v); err == nil {
			t.Errorf("decodeContribution accepted %v", v)
		}
	}
}

// TestContributionEncodings reads back both stored forms: deflated JSON, and
// the plain JSON string of graphs written under ADR 0029.
func TestContributionEncodings(t *testing.T) {
	ct, err := graphstore.Contribute(randomChunk(rand.New(rand.NewPCG(1, 2))))
	if err != nil {
		t.Fatal(err)
	}
	packed, hash, err := encodeContribution(&ct)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := json.Marshal(&ct)
	if err != nil {
		t.Fatal(err)
	}
	if sum := sha256.Sum256(plain); hash != hex.EncodeToString(sum[:]) {
		t.Error("the hash is not that of the JSON: every stored chunk would look changed")
	}
	// Contributions stored before ADR 0041 were deflated by the standard library.
	var std bytes.Buffer
	w, err := stdflate.NewWriter(&std, stdflate.BestSpeed)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(plain); err != nil || w.Close() != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadAll(stdflate.NewReader(bytes.NewReader(packed))); err != nil {
		t.Errorf("the standard library cannot read a stored contribution: %v", err)
	}
	for _, stored := range []any{packed, std.Bytes(), string(plain)} {
		got, err := decodeContribution(ct.ChunkID, stored)
		if err != nil || !reflect.DeepEqual(*got, ct) {
			t.Errorf("decoding %T: %+v, %v; want %+v", stored, got, err, ct)
		}
	}
}

// loadRels is the stored state of each pair, as a Merge reads it (new pairs: empty).
func (s *simStore) loadRels(t *testing.T, pairs []pairKey) map[pairKey]*relState {
	t.Helper()
	rels := map[pairKey]*relState{}
	for _, pr := range pairs {
		st := new(relState)
		if agg, ok := s.rels[pr]; ok {
			if err := json.Unmarshal([]byte(agg), st); err != nil {
				t.Fatal(err)
			}
			st.weight = s.weights[pr]
			st.loaded()
		}
		rels[pr] = st
	}
	return rels
}
