package export

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/pkg/graphstore"
	"github.com/graphrag/graphrag/pkg/schema"
	"github.com/graphrag/graphrag/pkg/vectorstore"
)

// Format is an export format.
type Format string

// The formats.
const (
	JSONL   Format = "jsonl"
	GraphML Format = "graphml"
	Parquet Format = "parquet"
)

// Formats lists the formats.
var Formats = []Format{JSONL, GraphML, Parquet}

// ErrFormat is returned for a format name that is not one of Formats.
var ErrFormat = errors.New("unknown export format")

// ParseFormat reads a format name.
func ParseFormat(s string) (Format, error) {
	if f := Format(s); slices.Contains(Formats, f) {
		return f, nil
	}
	return "", fmt.Errorf("%w %q (want jsonl, graphml or parquet)", ErrFormat, s)
}

// GraphReader is what an export reads from a graph store (a graphstore.Store).
type GraphReader interface {
	Snapshot(ctx context.Context, corpus string) (graphstore.Snapshot, error)
	Entities(ctx context.Context, corpus string, keys []string, opts ...graphstore.ReadOption) ([]graphstore.Entity, error)
	RelationshipsOf(ctx context.Context, corpus string, keys []string, limit int) ([]graphstore.Relationship, error)
	Communities(ctx context.Context, corpus string, level int) ([]graphstore.Community, error)
	ChunkEntities(ctx context.Context, corpus string, chunkIDs []string) (map[string][]string, error)
}

// VectorReader is what an export reads from a vector store (a vectorstore.Store).
type VectorReader interface {
	List(ctx context.Context, coll, after string, limit int) ([]string, string, error)
	Get(ctx context.Context, coll string, ids []string) ([]vectorstore.Record, error)
}

var (
	_ GraphReader  = graphstore.Store(nil)
	_ VectorReader = vectorstore.Store(nil)
)

// Summary counts what an export wrote.
type Summary struct {
	Entities      int      `json:"entities"`
	Relationships int      `json:"relationships"`
	Communities   int      `json:"communities"`
	Reports       int      `json:"reports"`
	Chunks        int      `json:"chunks"`
	Files         []string `json:"files"`
}

// batch is how many entities, reports or chunks are read at a time.
const batch = 256

// Write exports corpus from the stores to sink in format f.
func Write(ctx context.Context, g GraphReader, v VectorReader, corpus string, f Format, sink Sink) (Summary, error) {
	if err := events.ValidateCorpus(corpus); err != nil {
		return Summary{}, err
	}
	var w writer
	switch f {
	case JSONL:
		w = &jsonlWriter{sink: sink}
	case GraphML:
		w = &graphmlWriter{jsonl: jsonlWriter{sink: sink}}
	case Parquet:
		w = newParquetWriter(sink)
	default:
		return Summary{}, fmt.Errorf("%w %q", ErrFormat, f)
	}
	m, err := load(ctx, g, v, corpus)
	if err != nil {
		return Summary{}, err
	}
	sum := Summary{Entities: len(m.entities), Relationships: len(m.rels), Communities: len(m.comms)}
	for _, c := range m.comms {
		if c.report != nil {
			sum.Reports++
		}
	}
	if err := w.graph(m); err != nil {
		return sum, err
	}
	err = eachChunkBatch(ctx, g, v, corpus, m, func(cs []chunk) error {
		sum.Chunks += len(cs)
		return w.chunks(cs)
	})
	if err != nil {
		return sum, err
	}
	if err := w.close(); err != nil {
		return sum, err
	}
	sum.Files = w.files()
	return sum, nil
}

// writer is one format.
type writer interface {
	// graph writes everything but the chunks.
	graph(m *model) error
	// chunks writes a batch of chunks; called until every chunk is written.
	chunks(cs []chunk) error
	close() error
	files() []string
}

// model is the corpus's graph, communities and reports, with what the formats derive
// from them.
type model struct {
	corpus   string
	entities []entity // by key
	byKey    map[string]*entity
	rels     []relationship
	relsOf   map[string][]int // chunk id -> indexes into rels
	comms    []community      // coarsest level (0) first, then by id
	levels   int
}

type entity struct {
	graphstore.Entity
	Title  string // Name, made unique among the corpus's titles
	Degree int    // distinct neighbours
	HID    int    // human-readable id: the index in entities
}

type relationship struct {
	graphstore.Relationship
	ID             string
	HID            int
	CombinedDegree int
}

type community struct {
	graphstore.Community
	HID             int // a number unique across levels
	ParentHID       int // -1 at the top
	ChildHIDs       []int
	RelationshipIDs []string // relationships with both ends among the members
	TextUnitIDs     []string // the chunks of those relationships
	report          *report
}

// report is a community report as the summarizer writes it (schema.ReportJSON), with
// the method it was written by (schema.ReportMethod).
type report struct {
	schema.Report
	Method string `json:"method,omitempty"`
}

type chunk struct {
	ID, DocumentID, Title, Section, Text string
	Position                             int
	HID                                  int
	EntityKeys                           []string
	RelationshipIDs                      []string
}

func load(ctx context.Context, g GraphReader, v VectorReader, corpus string) (*model, error) {
	m := &model{corpus: corpus, byKey: map[string]*entity{}, relsOf: map[string][]int{}}
	if err := m.loadEntities(ctx, g); err != nil {
		return nil, err
	}
	if err := m.loadRelationships(ctx, g); err != nil {
		return nil, err
	}
	if err := m.loadCommunities(ctx, g, v); err != nil {
		return nil, err
	}
	return m, nil
}

func (m *model) loadEntities(ctx context.Context, g GraphReader) error {
	snap, err := g.Snapshot(ctx, m.corpus)
	if err != nil {
		return fmt.Errorf("reading the graph of %s: %w", m.corpus, err)
	}
	titles := map[string]bool{}
	for lo := 0; lo < len(snap.Keys); lo += batch {
		ents, err := g.Entities(ctx, m.corpus, snap.Keys[lo:min(len(snap.Keys), lo+batch)])
		if err != nil {
			return fmt.Errorf("reading entities of %s: %w", m.corpus, err)
		}
		for _, e := range ents {
			title := e.Name
			if title == "" || titles[title] {
				title = e.Key // two keys with one surface name: titles must be unique
			}
			titles[title] = true
			m.entities = append(m.entities, entity{Entity: e, Title: title, HID: len(m.entities)})
		}
	}
	for i := range m.entities {
		m.byKey[m.entities[i].Key] = &m.entities[i]
	}
	return nil
}

func (m *model) loadRelationships(ctx context.Context, g GraphReader) error {
	neighbours := map[string]map[string]bool{}
	for lo := 0; lo < len(m.entities); lo += batch {
		keys := make([]string, 0, batch)
		in := map[string]bool{}
		for _, e := range m.entities[lo:min(len(m.entities), lo+batch)] {
			keys = append(keys, e.Key)
			in[e.Key] = true
		}
		rels, err := g.RelationshipsOf(ctx, m.corpus, keys, 0)
		if err != nil {
			return fmt.Errorf("reading relationships of %s: %w", m.corpus, err)
		}
		for _, r := range rels {
			if !in[r.SourceKey] || m.byKey[r.TargetKey] == nil {
				continue // written once, from its source's batch
			}
			m.rels = append(m.rels, relationship{Relationship: r, ID: relationshipID(r)})
			for _, pair := range [][2]string{{r.SourceKey, r.TargetKey}, {r.TargetKey, r.SourceKey}} {
				if neighbours[pair[0]] == nil {
					neighbours[pair[0]] = map[string]bool{}
				}
				neighbours[pair[0]][pair[1]] = true
			}
		}
	}
	slices.SortFunc(m.rels, func(a, b relationship) int {
		return cmp.Or(cmp.Compare(a.SourceKey, b.SourceKey), cmp.Compare(a.TargetKey, b.TargetKey), cmp.Compare(a.Type, b.Type))
	})
	for k, ns := range neighbours {
		m.byKey[k].Degree = len(ns)
	}
	for i := range m.rels {
		r := &m.rels[i]
		r.HID = i
		r.CombinedDegree = m.byKey[r.SourceKey].Degree + m.byKey[r.TargetKey].Degree
		for _, c := range r.ChunkIDs {
			m.relsOf[c] = append(m.relsOf[c], i)
		}
	}
	return nil
}

// relationshipID is a stable id of a relationship: a hash of its ends and type.
func relationshipID(r graphstore.Relationship) string {
	return events.Hash(r.SourceKey + "\x00" + r.TargetKey + "\x00" + r.Type)[:16]
}

func (m *model) loadCommunities(ctx context.Context, g GraphReader, v VectorReader) error {
	cs, err := g.Communities(ctx, m.corpus, -1)
	if err != nil {
		return fmt.Errorf("reading communities of %s: %w", m.corpus, err)
	}
	for _, c := range cs {
		m.levels = max(m.levels, c.Level+1)
	}
	// Every format numbers levels from the coarsest, 0 the root, as users read them
	// everywhere (graphstore.ShownLevel); the store numbers them from the finest.
	for i := range cs {
		cs[i].Level = graphstore.ShownLevel(cs[i].Level, m.levels)
	}
	for i := range m.entities {
		m.entities[i].Communities = graphstore.ShownCommunities(m.entities[i].Communities, m.levels)
	}
	slices.SortFunc(cs, func(a, b graphstore.Community) int {
		return cmp.Or(cmp.Compare(a.Level, b.Level), cmp.Compare(a.ID, b.ID))
	})
	hid := map[string]int{}
	for i, c := range cs {
		hid[c.ID] = i
	}
	adj := map[string][]int{} // entity key -> relationships it is the source of
	for i, r := range m.rels {
		adj[r.SourceKey] = append(adj[r.SourceKey], i)
	}
	for i, c := range cs {
		cm := community{Community: c, HID: i, ParentHID: -1}
		if p, ok := hid[c.ParentID]; ok && c.ParentID != "" {
			cm.ParentHID = p
		}
		for _, ch := range c.ChildIDs {
			cm.ChildHIDs = append(cm.ChildHIDs, hid[ch])
		}
		cm.RelationshipIDs, cm.TextUnitIDs = m.inside(c.Members, adj)
		m.comms = append(m.comms, cm)
	}
	return m.loadReports(ctx, v)
}

// inside returns the relationships with both ends among members and their chunks.
func (m *model) inside(members []string, adj map[string][]int) (rels, chunks []string) {
	in := make(map[string]bool, len(members))
	for _, k := range members {
		in[k] = true
	}
	seen := map[string]bool{}
	for _, k := range members {
		for _, i := range adj[k] {
			r := m.rels[i]
			if !in[r.TargetKey] {
				continue
			}
			rels = append(rels, r.ID)
			for _, c := range r.ChunkIDs {
				if !seen[c] {
					seen[c] = true
					chunks = append(chunks, c)
				}
			}
		}
	}
	slices.Sort(chunks)
	return rels, chunks
}

func (m *model) loadReports(ctx context.Context, v VectorReader) error {
	coll := schema.Collection(m.corpus, schema.Communities)
	for lo := 0; lo < len(m.comms); lo += batch {
		part := m.comms[lo:min(len(m.comms), lo+batch)]
		ids := make([]string, len(part))
		at := map[string]*community{}
		for i := range part {
			ids[i] = part[i].ID
			at[part[i].ID] = &part[i]
		}
		recs, err := v.Get(ctx, coll, ids)
		if errors.Is(err, vectorstore.ErrNotFound) {
			return nil // no report written yet
		}
		if err != nil {
			return fmt.Errorf("reading community reports of %s: %w", m.corpus, err)
		}
		for _, r := range recs {
			var rep report
			if err := json.Unmarshal([]byte(r.Attrs[schema.ReportJSON]), &rep); err != nil {
				return fmt.Errorf("decoding the report of community %s: %w", r.ID, err)
			}
			rep.Method = r.Attrs[schema.ReportMethod]
			at[r.ID].report = &rep
		}
	}
	return nil
}

// eachChunkBatch reads the chunk collection in id order, a batch at a time, with the
// entities and relationships each chunk contributed.
func eachChunkBatch(ctx context.Context, g GraphReader, v VectorReader, corpus string, m *model, fn func([]chunk) error) error {
	coll := schema.Collection(corpus, schema.Chunks)
	after, hid := "", 0
	for {
		ids, next, err := v.List(ctx, coll, after, batch)
		if errors.Is(err, vectorstore.ErrNotFound) {
			return nil // no chunk written
		}
		if err != nil {
			return fmt.Errorf("listing chunks of %s: %w", corpus, err)
		}
		if len(ids) > 0 {
			cs, err := readChunks(ctx, g, v, corpus, ids, m)
			if err != nil {
				return err
			}
			for i := range cs {
				cs[i].HID = hid
				hid++
			}
			if err := fn(cs); err != nil {
				return err
			}
		}
		if next == "" {
			return nil
		}
		after = next
	}
}

func readChunks(ctx context.Context, g GraphReader, v VectorReader, corpus string, ids []string, m *model) ([]chunk, error) {
	recs, err := v.Get(ctx, schema.Collection(corpus, schema.Chunks), ids)
	if err != nil {
		return nil, fmt.Errorf("reading chunks of %s: %w", corpus, err)
	}
	ents, err := g.ChunkEntities(ctx, corpus, ids)
	if err != nil {
		return nil, fmt.Errorf("reading the entities of chunks of %s: %w", corpus, err)
	}
	out := make([]chunk, 0, len(recs))
	for _, r := range recs {
		pos, _ := strconv.Atoi(r.Attrs[schema.ChunkPosition])
		c := chunk{ID: r.ID, DocumentID: r.Attrs[schema.ChunkDocumentID], Title: r.Attrs[schema.ChunkTitle],
			Section: r.Attrs[schema.ChunkSection], Text: r.Text, Position: pos, EntityKeys: ents[r.ID]}
		for _, i := range m.relsOf[r.ID] {
			c.RelationshipIDs = append(c.RelationshipIDs, m.rels[i].ID)
		}
		out = append(out, c)
	}
	return out, nil
}

// fullContent is a report as Markdown: Microsoft GraphRAG's full_content.
func (r *report) fullContent() string {
	var b strings.Builder
	b.WriteString("# " + r.Title + "\n\n" + r.Summary + "\n")
	for _, f := range r.Findings {
		b.WriteString("\n## " + f.Summary + "\n\n" + f.Explanation + "\n")
	}
	return b.String()
}
