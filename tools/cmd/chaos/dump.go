package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/graphrag/graphrag/pkg/graphstore"
	"github.com/graphrag/graphrag/pkg/pipeline"
	"github.com/graphrag/graphrag/pkg/schema"
	"github.com/graphrag/graphrag/pkg/vectorstore"
)

// item is one thing a run indexed: what must be equal in every run (fields), and
// numbers compared with a tolerance (float sums depend on the order of merges in their
// last bits).
type item struct {
	fields string
	nums   []float64
}

// dump is everything a run indexed, by category and key. Nothing in it names the corpus,
// so runs on different corpora of one store compare.
type dump map[string]map[string]item

// The categories of a dump.
const (
	catEntities      = "entities"
	catRelationships = "relationships"
	catCommunities   = "communities"
	catReports       = "reports"
	catChunks        = "chunks"
	catEntityRecords = "entity records"
)

var categories = []string{catEntities, catRelationships, catCommunities, catReports, catChunks, catEntityRecords}

// dumpStores reads a corpus from its graph and vector stores: entities (name, type,
// mention count, chunks, community per level, PageRank), relationships (type, weight,
// mentions), communities (level, parent, members), which communities have a report,
// chunks (document and text) and entity records.
func dumpStores(ctx context.Context, g graphstore.Store, v vectorstore.Store, corpus string) (dump, error) {
	d := dump{}
	for _, c := range categories {
		d[c] = map[string]item{}
	}
	snap, err := g.Snapshot(ctx, corpus)
	if err != nil {
		return nil, fmt.Errorf("reading the graph: %w", err)
	}
	comms, err := g.Communities(ctx, corpus, -1)
	if err != nil {
		return nil, fmt.Errorf("reading communities: %w", err)
	}
	canon := canonicalNames(comms)
	for part := range slices.Chunk(snap.Keys, 1000) {
		ents, err := g.Entities(ctx, corpus, part)
		if err != nil {
			return nil, fmt.Errorf("reading entities: %w", err)
		}
		for _, e := range ents {
			d[catEntities][e.Key] = item{fields: strings.Join([]string{e.Name, e.Type, strconv.Itoa(e.MentionCount),
				strings.Join(identities(e.ChunkIDs), ","), strings.Join(canon.all(e.Communities), ",")}, "|"), nums: []float64{e.PageRank}}
		}
	}
	rels, err := g.RelationshipsAmong(ctx, corpus, snap.Keys)
	if err != nil {
		return nil, fmt.Errorf("reading relationships: %w", err)
	}
	for _, r := range rels {
		d[catRelationships][r.SourceKey+" -> "+r.TargetKey+" "+r.Type] = item{
			fields: "mentions " + strconv.Itoa(len(r.ChunkIDs)) + "|" + strings.Join(identities(r.ChunkIDs), ","), nums: []float64{r.Weight}}
	}
	for _, c := range comms {
		d[catCommunities][canon.of(c.ID)] = item{fields: fmt.Sprintf("level %d|parent %s|%s", c.Level, canon.of(c.ParentID), strings.Join(c.Members, ","))}
	}
	reports := map[string]item{}
	if err := dumpRecords(ctx, v, schema.Collection(corpus, schema.Communities), reports, false); err != nil {
		return nil, err
	}
	for id, it := range reports {
		d[catReports][canon.of(id)] = it
	}
	if err := dumpRecords(ctx, v, schema.Collection(corpus, schema.Chunks), d[catChunks], true); err != nil {
		return nil, err
	}
	if err := dumpRecords(ctx, v, schema.Collection(corpus, schema.Entities), d[catEntityRecords], false); err != nil {
		return nil, err
	}
	return d, nil
}

// dumpRecords lists a collection into out; with content, each record's document and a
// hash of its text are compared too.
func dumpRecords(ctx context.Context, v vectorstore.Store, coll string, out map[string]item, content bool) error {
	after := ""
	for {
		ids, next, err := v.List(ctx, coll, after, 1000)
		if errors.Is(err, vectorstore.ErrNotFound) {
			return nil // never written
		}
		if err != nil {
			return fmt.Errorf("listing %s: %w", coll, err)
		}
		if !content {
			for _, id := range ids {
				out[id] = item{}
			}
		} else if err := dumpContent(ctx, v, coll, ids, out); err != nil {
			return err
		}
		if next == "" {
			return nil
		}
		after = next
	}
}

func dumpContent(ctx context.Context, v vectorstore.Store, coll string, ids []string, out map[string]item) error {
	for part := range slices.Chunk(ids, 256) {
		recs, err := v.Get(ctx, coll, part)
		if err != nil {
			return fmt.Errorf("reading %s: %w", coll, err)
		}
		for _, r := range recs {
			sum := sha256.Sum256([]byte(r.Text))
			k := pipeline.ChunkIdentity(r.ID)
			for n := 2; ; n++ { // two versions of one chunk stay two records
				if _, dup := out[k]; !dup {
					break
				}
				k = pipeline.ChunkIdentity(r.ID) + "#" + strconv.Itoa(n)
			}
			out[k] = item{fields: r.Attrs[schema.ChunkDocumentID] + "|" + hex.EncodeToString(sum[:8])}
		}
	}
	return nil
}

func sorted(xs []string) []string {
	out := slices.Clone(xs)
	sort.Strings(out)
	return out
}

// identities are chunk ids without their versions, sorted. A version is the stream
// sequence of the document's message, which depends on what else was published
// meanwhile (other corpora, in the shards scenario); a chunk's identity (document,
// position, text hash) does not.
func identities(ids []string) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = pipeline.ChunkIdentity(id)
	}
	return sorted(out)
}

// diff is how a run's dump differs from the uninterrupted run's, per category.
type diff struct {
	lost, extra, changed map[string]int
	examples             []string
}

func (d diff) total() (lost, extra, changed int) {
	for _, c := range categories {
		lost += d.lost[c]
		extra += d.extra[c]
		changed += d.changed[c]
	}
	return lost, extra, changed
}

const maxExamples = 6

// compare finds what the run lost, gained or holds differently.
func compare(base, run dump) diff {
	d := diff{lost: map[string]int{}, extra: map[string]int{}, changed: map[string]int{}}
	note := func(format string, args ...any) {
		if len(d.examples) < maxExamples {
			d.examples = append(d.examples, fmt.Sprintf(format, args...))
		}
	}
	for _, c := range categories {
		for k, want := range base[c] {
			got, ok := run[c][k]
			switch {
			case !ok:
				d.lost[c]++
				note("lost %s %q", c, k)
			case !same(want, got):
				d.changed[c]++
				note("changed %s %q: %v -> %v", c, k, want, got)
			}
		}
		for k := range run[c] {
			if _, ok := base[c][k]; !ok {
				d.extra[c]++
				note("extra %s %q", c, k)
			}
		}
	}
	return d
}

func same(a, b item) bool {
	if a.fields != b.fields || len(a.nums) != len(b.nums) {
		return false
	}
	for i := range a.nums {
		if math.Abs(a.nums[i]-b.nums[i]) > 1e-6*math.Max(1e-9, math.Max(math.Abs(a.nums[i]), math.Abs(b.nums[i]))) {
			return false
		}
	}
	return true
}

// communityNames names communities by level and members: ids depend on the detection
// history (community.Stabilize keeps the id of a community that barely changed), so an
// interrupted run and an uninterrupted one may name one partition differently. An id
// that is no current community (a stale report) keeps its own name.
type communityNames map[string]string

func canonicalNames(cs []graphstore.Community) communityNames {
	out := communityNames{"": ""}
	for _, c := range cs {
		members := slices.Clone(c.Members)
		slices.Sort(members)
		sum := sha256.Sum256([]byte(strings.Join(members, "\n")))
		out[c.ID] = fmt.Sprintf("L%d-%x", c.Level, sum[:8])
	}
	return out
}

func (n communityNames) of(id string) string {
	if c, ok := n[id]; ok {
		return c
	}
	return id
}

func (n communityNames) all(ids []string) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = n.of(id)
	}
	return out
}

// selfCheck reports what an index must hold whatever happened to it: a report for every
// community and none for a community that is not there.
func selfCheck(d dump) []string {
	var problems []string
	for id := range d[catCommunities] {
		if _, ok := d[catReports][id]; !ok {
			problems = append(problems, "community without a report: "+id)
		}
	}
	for id := range d[catReports] {
		if _, ok := d[catCommunities][id]; !ok {
			problems = append(problems, "report of a community that does not exist: "+id)
		}
	}
	sort.Strings(problems)
	return problems
}

// sizes describes a dump in one line.
func (d dump) sizes() string {
	parts := make([]string, 0, len(categories))
	for _, c := range categories {
		parts = append(parts, fmt.Sprintf("%d %s", len(d[c]), c))
	}
	return strings.Join(parts, ", ")
}

// add counts o into d, its examples prefixed with where they come from.
func (d *diff) add(o diff, where string) {
	if d.lost == nil {
		d.lost, d.extra, d.changed = map[string]int{}, map[string]int{}, map[string]int{}
	}
	for _, c := range categories {
		d.lost[c] += o.lost[c]
		d.extra[c] += o.extra[c]
		d.changed[c] += o.changed[c]
	}
	for _, e := range o.examples {
		if len(d.examples) < maxExamples {
			d.examples = append(d.examples, where+": "+e)
		}
	}
}
