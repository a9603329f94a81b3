package main

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/graphrag/graphrag/pkg/graphstore"
	"github.com/graphrag/graphrag/pkg/pipeline"
	"github.com/graphrag/graphrag/pkg/schema"
	"github.com/graphrag/graphrag/pkg/vectorstore"
)

// corpusDump is everything the stores hold of a corpus, in a form two runs can be
// compared in: entities, relationships with their weights and mention counts,
// communities, chunks and the entity records. Chunk ids are reduced to their identity
// (document, position, content hash; pipeline.ChunkIdentity), since the version a chunk
// id carries differs when the same text is published again. Floats are rounded, since
// sums of weights merged in another order differ in their last bits.
type corpusDump struct {
	// Stats are the graph store's counts: its Chunks count contributions, so one left
	// behind (even an empty one) shows.
	Stats         graphstore.Stats
	Entities      []dumpEntity
	Relationships []dumpRelationship
	Communities   []dumpCommunity
	Chunks        []dumpChunk
	EntityRecords []string
}

type dumpEntity struct {
	Key, Name, Type, Description string
	Descriptions                 []string
	MentionCount                 int
	Chunks                       []string
	PageRank                     string
	Communities                  []string
}

type dumpRelationship struct {
	Source, Target, Type, Description string
	Descriptions                      []string
	Weight                            string
	Chunks                            []string
}

type dumpCommunity struct {
	ID, Parent    string
	Level         int
	Members       []string
	Relationships int
}

type dumpChunk struct {
	ID, Text string
	Attrs    map[string]string
}

// dumpCorpus reads the whole corpus from the stores.
func dumpCorpus(ctx context.Context, t testing.TB, g graphstore.Store, v vectorstore.Store, corpus string) corpusDump {
	t.Helper()
	var d corpusDump
	stats, err := g.Stats(ctx, corpus)
	if err != nil {
		t.Fatalf("dump: stats: %v", err)
	}
	d.Stats = stats
	snap, err := g.Snapshot(ctx, corpus)
	if err != nil {
		t.Fatalf("dump: snapshot: %v", err)
	}
	rels := map[[2]string]graphstore.Relationship{}
	for lo := 0; lo < len(snap.Keys); lo += 500 {
		keys := snap.Keys[lo:min(len(snap.Keys), lo+500)]
		ents, err := g.Entities(ctx, corpus, keys)
		if err != nil {
			t.Fatalf("dump: entities: %v", err)
		}
		for _, e := range ents {
			d.Entities = append(d.Entities, dumpEntity{Key: e.Key, Name: e.Name, Type: e.Type, Description: e.Description,
				Descriptions: e.Descriptions, MentionCount: e.MentionCount, Chunks: identities(e.ChunkIDs),
				PageRank: strconv.FormatFloat(e.PageRank, 'g', 6, 64), Communities: slices.Clone(e.Communities)})
		}
		rs, err := g.RelationshipsOf(ctx, corpus, keys, 0)
		if err != nil {
			t.Fatalf("dump: relationships: %v", err)
		}
		for _, r := range rs {
			rels[[2]string{r.SourceKey, r.TargetKey}] = r
		}
	}
	for _, r := range rels {
		d.Relationships = append(d.Relationships, dumpRelationship{Source: r.SourceKey, Target: r.TargetKey, Type: r.Type,
			Description: r.Description, Descriptions: r.Descriptions, Weight: strconv.FormatFloat(r.Weight, 'g', 9, 64),
			Chunks: identities(r.ChunkIDs)})
	}
	slices.SortFunc(d.Relationships, func(a, b dumpRelationship) int {
		if a.Source != b.Source {
			return strings.Compare(a.Source, b.Source)
		}
		return strings.Compare(a.Target, b.Target)
	})
	cs, err := g.Communities(ctx, corpus, -1)
	if err != nil {
		t.Fatalf("dump: communities: %v", err)
	}
	canon := canonicalCommunities(cs)
	for _, c := range cs {
		d.Communities = append(d.Communities, dumpCommunity{ID: canon[c.ID], Parent: canon[c.ParentID], Level: c.Level, Members: c.Members,
			Relationships: c.RelationshipCount})
	}
	slices.SortFunc(d.Communities, func(a, b dumpCommunity) int { return strings.Compare(a.ID, b.ID) })
	for i := range d.Entities {
		for j, id := range d.Entities[i].Communities {
			d.Entities[i].Communities[j] = canon[id]
		}
	}
	for _, r := range listRecords(ctx, t, v, schema.Collection(corpus, schema.Chunks)) {
		d.Chunks = append(d.Chunks, dumpChunk{ID: pipeline.ChunkIdentity(r.ID), Text: r.Text, Attrs: r.Attrs})
	}
	slices.SortFunc(d.Chunks, func(a, b dumpChunk) int { return strings.Compare(a.ID, b.ID) })
	d.EntityRecords = listIDs(ctx, t, v, schema.Collection(corpus, schema.Entities))
	return d
}

// canonicalCommunities names each community by its level and members instead of its id.
// A community's id depends on the detection history (community.Stabilize keeps the id
// of a community that barely changed), so two runs that end with the same partition may
// name it differently: dumps compare partitions, not names. The root's empty parent id
// stays empty.
func canonicalCommunities(cs []graphstore.Community) map[string]string {
	out := map[string]string{"": ""}
	for _, c := range cs {
		members := slices.Clone(c.Members)
		slices.Sort(members)
		sum := sha256.Sum256([]byte(strings.Join(members, "\n")))
		out[c.ID] = fmt.Sprintf("L%d-%x", c.Level, sum[:8])
	}
	return out
}

func identities(ids []string) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = pipeline.ChunkIdentity(id)
	}
	slices.Sort(out)
	return out
}

// listIDs returns every id of a collection (none when it does not exist).
func listIDs(ctx context.Context, t testing.TB, v vectorstore.Store, coll string) []string {
	t.Helper()
	var out []string
	after := ""
	for {
		ids, next, err := v.List(ctx, coll, after, 1000)
		if err != nil {
			if errors.Is(err, vectorstore.ErrNotFound) {
				return out
			}
			t.Fatalf("dump: listing %s: %v", coll, err)
		}
		out = append(out, ids...)
		if next == "" {
			return out
		}
		after = next
	}
}

// listRecords returns every record of a collection.
func listRecords(ctx context.Context, t testing.TB, v vectorstore.Store, coll string) []vectorstore.Record {
	t.Helper()
	ids := listIDs(ctx, t, v, coll)
	var out []vectorstore.Record
	for lo := 0; lo < len(ids); lo += 500 {
		recs, err := v.Get(ctx, coll, ids[lo:min(len(ids), lo+500)])
		if err != nil {
			t.Fatalf("dump: reading %s: %v", coll, err)
		}
		out = append(out, recs...)
	}
	return out
}

// diffDumps describes the first differences between two dumps ("" when equal).
func diffDumps(a, b corpusDump) string {
	var out string
	add := func(format string, args ...any) {
		if len(out) < 4000 {
			out += fmt.Sprintf(format, args...) + "\n"
		}
	}
	if a.Stats != b.Stats {
		add("graph stats: %+v and %+v", a.Stats, b.Stats)
	}
	if len(a.Entities) != len(b.Entities) {
		add("entities: %d and %d", len(a.Entities), len(b.Entities))
	}
	diffKeyed(a.Entities, b.Entities, func(e dumpEntity) string { return e.Key }, "entity", add)
	if len(a.Relationships) != len(b.Relationships) {
		add("relationships: %d and %d", len(a.Relationships), len(b.Relationships))
	}
	diffKeyed(a.Relationships, b.Relationships, func(r dumpRelationship) string { return r.Source + ">" + r.Target }, "relationship", add)
	if len(a.Communities) != len(b.Communities) {
		add("communities: %d and %d", len(a.Communities), len(b.Communities))
	}
	diffKeyed(a.Communities, b.Communities, func(c dumpCommunity) string { return c.ID }, "community", add)
	if len(a.Chunks) != len(b.Chunks) {
		add("chunks: %d and %d", len(a.Chunks), len(b.Chunks))
	}
	diffKeyed(a.Chunks, b.Chunks, func(c dumpChunk) string { return c.ID }, "chunk", add)
	if !slices.Equal(a.EntityRecords, b.EntityRecords) {
		add("entity records: %d and %d", len(a.EntityRecords), len(b.EntityRecords))
	}
	return out
}

func diffKeyed[T any](a, b []T, key func(T) string, what string, add func(string, ...any)) {
	ma, mb := map[string]T{}, map[string]T{}
	for _, x := range a {
		ma[key(x)] = x
	}
	for _, x := range b {
		mb[key(x)] = x
	}
	n := 0
	for k, x := range ma {
		y, ok := mb[k]
		switch {
		case !ok:
			add("%s %q only in the first: %+v", what, k, x)
		case !reflect.DeepEqual(x, y):
			add("%s %q differs:\n  %+v\n  %+v", what, k, x, y)
		default:
			continue
		}
		if n++; n >= 5 {
			return
		}
	}
	for k, y := range mb {
		if _, ok := ma[k]; !ok {
			add("%s %q only in the second: %+v", what, k, y)
			if n++; n >= 10 {
				return
			}
		}
	}
}
