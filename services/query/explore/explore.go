package explore

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/graphrag/graphrag/pkg/graphstore"
	"github.com/graphrag/graphrag/pkg/normalize"
	"github.com/graphrag/graphrag/pkg/schema"
	"github.com/graphrag/graphrag/pkg/vectorstore"
	"github.com/graphrag/graphrag/services/query/engine"
)

// GraphReader is what the read-model reads from a graph store; it never writes.
// A graphstore.Store has these methods (see it for their contracts).
type GraphReader interface {
	Entity(ctx context.Context, corpus, key string) (graphstore.Entity, error)
	Entities(ctx context.Context, corpus string, keys []string, opts ...graphstore.ReadOption) ([]graphstore.Entity, error)
	RelationshipsAmong(ctx context.Context, corpus string, keys []string, opts ...graphstore.ReadOption) ([]graphstore.Relationship, error)
	Neighborhood(ctx context.Context, corpus string, start []string, depth, limit int) ([]graphstore.Neighbor, error)
	Communities(ctx context.Context, corpus string, level int) ([]graphstore.Community, error)
	Community(ctx context.Context, corpus, id string) (graphstore.Community, error)
	Snapshot(ctx context.Context, corpus string) (graphstore.Snapshot, error)
	Stats(ctx context.Context, corpus string) (graphstore.Stats, error)
	Levels(ctx context.Context, corpus string) (int, error)
}

// VectorReader is what the read-model reads from a vector store: records by id.
type VectorReader interface {
	Get(ctx context.Context, coll string, ids []string) ([]vectorstore.Record, error)
}

var (
	_ GraphReader  = graphstore.Store(nil)
	_ VectorReader = vectorstore.Store(nil)
)

// DefaultNeighbors is the neighbourhood size when a request gives no limit: the query
// engine's default -max-neighbors.
const DefaultNeighbors = 200

// Reader serves the console's reads. It is safe for concurrent use.
type Reader struct {
	graph     GraphReader
	vectors   VectorReader
	neighbors int
	aliases   Aliases
	keys      keyIndexes // typeahead: entity keys per corpus
}

// Aliases gives a corpus's curated aliases: the key of every name a curation merged
// into another entity or renamed, to the key of the entity it is now (chains resolved:
// curation.State.Aliases of the applied state). It is the query engine's
// engine.Deps.Aliases.
type Aliases func(ctx context.Context, corpus string) (map[string]string, error)

// Option configures a Reader.
type Option interface{ apply(*Reader) }

type optionFunc func(*Reader)

func (f optionFunc) apply(r *Reader) { f(r) }

// WithDefaultNeighbors sets the neighbourhood size of a request that gives no limit
// (default DefaultNeighbors; n <= 0 keeps it).
func WithDefaultNeighbors(n int) Option {
	return optionFunc(func(r *Reader) {
		if n > 0 {
			r.neighbors = n
		}
	})
}

// WithAliases resolves a name the graph has no entity for through the corpus's curated
// aliases, so that the entity reads answer a name curation merged or renamed away with
// the entity it is now (nil: names are looked up as they are).
func WithAliases(a Aliases) Option {
	return optionFunc(func(r *Reader) { r.aliases = a })
}

// New builds a Reader over the stores.
func New(g GraphReader, v VectorReader, opts ...Option) *Reader {
	r := &Reader{graph: g, vectors: v, neighbors: DefaultNeighbors}
	for _, o := range opts {
		o.apply(r)
	}
	return r
}

// Neighborhood is an entity with the entities and relationships around it.
type Neighborhood struct {
	Entity engine.Entity `json:"entity"`
	// ResolvedFrom is the name asked for when it names no entity but one a curation
	// merged or renamed into Entity (see WithAliases); empty otherwise.
	ResolvedFrom  string                `json:"resolved_from,omitempty"`
	Neighbors     []engine.Entity       `json:"neighbors"`
	Relationships []engine.Relationship `json:"relationships"`
}

// entityOf is what the console shows of an entity: its mention count and community per
// level (0 the coarsest, in a hierarchy of levels levels), so a client can size and
// colour it.
func entityOf(en graphstore.Entity, dist, levels int) engine.Entity {
	return engine.Entity{Key: en.Key, Name: en.Name, Type: en.Type, Description: en.Description, PageRank: en.PageRank,
		Distance: dist, Mentions: en.MentionCount, Communities: graphstore.ShownCommunities(en.Communities, levels)}
}

// levels is how many community levels the corpus's hierarchy has: the reads number
// them from the coarsest (graphstore.ShownLevel), the store from the finest.
func (rd *Reader) levels(ctx context.Context, corpus string) (int, error) {
	n, err := rd.graph.Levels(ctx, corpus)
	if err != nil {
		return 0, fmt.Errorf("reading the community level count: %w", err)
	}
	return n, nil
}

// validCorpus checks the corpus (and the name asked for) as a query request would be.
func validCorpus(corpus, name string) error {
	return (&engine.Request{Corpus: corpus, Query: name}).Validate()
}

// Bounds of the exploration reads: what one request may ask for.
const (
	// MaxExploreNeighbors caps a neighbourhood: the console draws up to this many nodes.
	MaxExploreNeighbors = 5000
	// MaxExploreDepth is the deepest neighbourhood.
	MaxExploreDepth = 4
	// MaxEntityMatches caps a typeahead answer.
	MaxEntityMatches = 50
	// MaxPassages caps the passages of one entity.
	MaxPassages = 100
	// MaxCommunityMembers caps the members listed with one community.
	MaxCommunityMembers = 1000
	// keyIndexTTL bounds how long a corpus's key index is reused while the entity count
	// does not change (an entity removed and another added keep the count).
	keyIndexTTL = 30 * time.Second
)

// Neighborhood returns the neighbourhood of the entity a name normalizes to, with at
// most limit neighbours (0: the default, WithDefaultNeighbors). Entities carry their
// mention count and community per level, so a client can size and colour them.
func (rd *Reader) Neighborhood(ctx context.Context, corpus, name string, depth, limit int) (Neighborhood, error) {
	if err := validCorpus(corpus, name); err != nil {
		return Neighborhood{}, err
	}
	if depth < 1 || depth > MaxExploreDepth {
		return Neighborhood{}, engine.BadRequestf("depth: %d is outside 1..%d", depth, MaxExploreDepth)
	}
	if limit < 0 || limit > MaxExploreNeighbors {
		return Neighborhood{}, engine.BadRequestf("limit: %d is outside 0..%d", limit, MaxExploreNeighbors)
	}
	if limit == 0 {
		limit = rd.neighbors
	}
	en, from, err := rd.entityNamed(ctx, corpus, name)
	if err != nil {
		return Neighborhood{}, err
	}
	nb, err := rd.graph.Neighborhood(ctx, corpus, []string{en.Key}, depth, limit)
	if err != nil {
		return Neighborhood{}, fmt.Errorf("walking the graph: %w", err)
	}
	levels, err := rd.levels(ctx, corpus)
	if err != nil {
		return Neighborhood{}, err
	}
	out := Neighborhood{Entity: entityOf(en, 0, levels), ResolvedFrom: from, Neighbors: make([]engine.Entity, 0, len(nb))}
	keys := []string{en.Key}
	for _, n := range nb {
		out.Neighbors = append(out.Neighbors, entityOf(n.Entity, n.Distance, levels))
		keys = append(keys, n.Entity.Key)
	}
	rels, err := rd.graph.RelationshipsAmong(ctx, corpus, keys)
	if err != nil {
		return out, fmt.Errorf("reading relationships: %w", err)
	}
	sort.SliceStable(rels, func(i, j int) bool { return rels[i].Weight > rels[j].Weight })
	out.Relationships = make([]engine.Relationship, 0, len(rels))
	for _, r := range rels {
		out.Relationships = append(out.Relationships, engine.Relationship{Source: r.SourceKey, Target: r.TargetKey, Type: r.Type,
			Description: r.Description, Weight: r.Weight, Evidence: head(r.ChunkIDs, 3)})
	}
	return out, nil
}

// entityNamed reads the entity a name normalizes to or, when the graph has none, the
// entity a curation merged or renamed it into, with the name as asked for (from);
// ErrNotFound when there is neither. The graph is looked up first: it never holds a
// key curated away once the curation is applied, and most names asked for are
// entities, which need no read of the curation state.
func (rd *Reader) entityNamed(ctx context.Context, corpus, name string) (en graphstore.Entity, from string, err error) {
	key := normalize.Name(name)
	en, err = rd.graph.Entity(ctx, corpus, key)
	if err == nil {
		return en, "", nil
	}
	if !errors.Is(err, graphstore.ErrNotFound) {
		return en, "", fmt.Errorf("reading entity %q: %w", key, err)
	}
	to, err := rd.alias(ctx, corpus, key)
	if err != nil {
		return en, "", err
	}
	if to == "" {
		return en, "", fmt.Errorf("%w: entity %q (normalized %q) in corpus %s", engine.ErrNotFound, name, key, corpus)
	}
	en, err = rd.graph.Entity(ctx, corpus, to)
	if errors.Is(err, graphstore.ErrNotFound) {
		return en, "", fmt.Errorf("%w: entity %q (normalized %q, curated into %q) in corpus %s", engine.ErrNotFound, name, key, to, corpus)
	}
	if err != nil {
		return en, "", fmt.Errorf("reading entity %q: %w", to, err)
	}
	return en, name, nil
}

// alias is the key a curation folded key into; "" when none did (or no aliases are
// configured).
func (rd *Reader) alias(ctx context.Context, corpus, key string) (string, error) {
	if rd.aliases == nil {
		return "", nil
	}
	aliases, err := rd.aliases(ctx, corpus)
	if err != nil {
		return "", fmt.Errorf("reading curated aliases: %w", err)
	}
	if to := aliases[key]; to != key {
		return to, nil
	}
	return "", nil
}

// EntityMatch is an entity whose name matches a typed prefix.
type EntityMatch struct {
	Key      string  `json:"key"`
	Name     string  `json:"name"`
	Type     string  `json:"type"`
	PageRank float64 `json:"pagerank"`
	Mentions int     `json:"mentions"`
}

// Match classes, best first.
const (
	matchExact = iota
	matchPrefix
	matchWord
)

// SearchEntities returns up to limit entities whose normalized name starts with the
// normalized prefix, or has a word that does: exact names first, then whole-name
// prefixes, then word prefixes; within a class by PageRank.
func (rd *Reader) SearchEntities(ctx context.Context, corpus, prefix string, limit int) ([]EntityMatch, error) {
	if err := validCorpus(corpus, "x"); err != nil {
		return nil, err
	}
	if limit < 1 || limit > MaxEntityMatches {
		return nil, engine.BadRequestf("limit: %d is outside 1..%d", limit, MaxEntityMatches)
	}
	p := normalize.Name(prefix)
	if p == "" {
		return []EntityMatch{}, nil
	}
	idx, err := rd.keyIndex(ctx, corpus)
	if err != nil {
		return nil, err
	}
	cands := idx.match(p, max(4*limit, 40))
	keys := make([]string, len(cands))
	class := make(map[string]int, len(cands))
	for i, c := range cands {
		keys[i], class[c.key] = c.key, c.class
	}
	ents, err := rd.graph.Entities(ctx, corpus, keys)
	if err != nil {
		return nil, fmt.Errorf("reading matching entities: %w", err)
	}
	sort.SliceStable(ents, func(i, j int) bool {
		if ci, cj := class[ents[i].Key], class[ents[j].Key]; ci != cj {
			return ci < cj
		}
		if ents[i].PageRank != ents[j].PageRank {
			return ents[i].PageRank > ents[j].PageRank
		}
		return ents[i].Key < ents[j].Key
	})
	out := make([]EntityMatch, 0, min(limit, len(ents)))
	for _, en := range head(ents, limit) {
		out = append(out, EntityMatch{Key: en.Key, Name: en.Name, Type: en.Type, PageRank: en.PageRank, Mentions: en.MentionCount})
	}
	return out, nil
}

// keyIndex is a corpus's entity keys, sorted, with their degrees: enough to find the
// names a prefix starts and rank them before reading any entity.
type keyIndex struct {
	keys   []string
	degree []int
	built  time.Time
}

type candidate struct {
	key    string
	class  int
	degree int
}

// match returns up to n keys matching the normalized prefix p, best class first, then
// by degree.
func (ix *keyIndex) match(p string, n int) []candidate {
	var out []candidate
	i := sort.SearchStrings(ix.keys, p)
	for ; i < len(ix.keys) && strings.HasPrefix(ix.keys[i], p); i++ {
		c := matchPrefix
		if ix.keys[i] == p {
			c = matchExact
		}
		out = append(out, candidate{ix.keys[i], c, ix.degree[i]})
	}
	for i, k := range ix.keys {
		if !strings.HasPrefix(k, p) && strings.Contains(k, " "+p) {
			out = append(out, candidate{k, matchWord, ix.degree[i]})
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].class != out[j].class {
			return out[i].class < out[j].class
		}
		return out[i].degree > out[j].degree
	})
	return head(out, n)
}

// keyIndexes caches one keyIndex per corpus: a snapshot reads every key and edge.
type keyIndexes struct {
	mu sync.Mutex
	m  map[string]*keyIndex
}

func (c *keyIndexes) get(corpus string) *keyIndex {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[corpus]
}

func (c *keyIndexes) put(corpus string, ix *keyIndex) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string]*keyIndex{}
	}
	c.m[corpus] = ix
}

// keyIndex returns the corpus's key index, rebuilt when the entity count changed or
// it is older than keyIndexTTL.
func (rd *Reader) keyIndex(ctx context.Context, corpus string) (*keyIndex, error) {
	st, err := rd.graph.Stats(ctx, corpus)
	if err != nil {
		return nil, fmt.Errorf("counting entities: %w", err)
	}
	ix := rd.keys.get(corpus)
	if ix != nil && len(ix.keys) == st.Entities && time.Since(ix.built) < keyIndexTTL {
		return ix, nil
	}
	snap, err := rd.graph.Snapshot(ctx, corpus)
	if err != nil {
		return nil, fmt.Errorf("reading entity keys: %w", err)
	}
	ix = &keyIndex{keys: snap.Keys, degree: make([]int, len(snap.Keys)), built: time.Now()}
	for _, ed := range snap.Edges {
		ix.degree[ed.Source]++
		ix.degree[ed.Target]++
	}
	rd.keys.put(corpus, ix)
	return ix, nil
}

// Passage is a chunk of a document, as stored.
type Passage struct {
	ID         string `json:"id"`
	DocumentID string `json:"document_id"`
	Title      string `json:"title,omitempty"`
	Subject    string `json:"subject,omitempty"`
	Text       string `json:"text"`
}

// EntityPassages is an entity with its descriptions and the passages that mention it.
type EntityPassages struct {
	Entity engine.Entity `json:"entity"`
	// ResolvedFrom is as in Neighborhood.
	ResolvedFrom string    `json:"resolved_from,omitempty"`
	Passages     []Passage `json:"passages"`
}

// Passages returns the entity a name normalizes to, with all its descriptions, and up
// to limit of the passages that mention it.
func (rd *Reader) Passages(ctx context.Context, corpus, name string, limit int) (EntityPassages, error) {
	if err := validCorpus(corpus, name); err != nil {
		return EntityPassages{}, err
	}
	if limit < 1 || limit > MaxPassages {
		return EntityPassages{}, engine.BadRequestf("limit: %d is outside 1..%d", limit, MaxPassages)
	}
	en, from, err := rd.entityNamed(ctx, corpus, name)
	if err != nil {
		return EntityPassages{}, err
	}
	levels, err := rd.levels(ctx, corpus)
	if err != nil {
		return EntityPassages{}, err
	}
	out := EntityPassages{Entity: entityOf(en, 0, levels), ResolvedFrom: from}
	out.Entity.Descriptions = en.Descriptions
	recs, err := rd.vectors.Get(ctx, schema.Collection(corpus, schema.Chunks), head(en.ChunkIDs, limit))
	if err != nil && !errors.Is(err, vectorstore.ErrNotFound) {
		return out, fmt.Errorf("reading the passages of %q: %w", en.Key, err)
	}
	out.Passages = make([]Passage, 0, len(recs))
	for _, r := range recs {
		out.Passages = append(out.Passages, passageOf(r))
	}
	return out, nil
}

// Passage returns one stored chunk by id.
func (rd *Reader) Passage(ctx context.Context, corpus, id string) (Passage, error) {
	if err := validCorpus(corpus, "x"); err != nil {
		return Passage{}, err
	}
	if id == "" || len(id) > graphstore.MaxKeyLen {
		return Passage{}, engine.BadRequestf("chunk id: must be 1..%d bytes", graphstore.MaxKeyLen)
	}
	recs, err := rd.vectors.Get(ctx, schema.Collection(corpus, schema.Chunks), []string{id})
	if err != nil && !errors.Is(err, vectorstore.ErrNotFound) {
		return Passage{}, fmt.Errorf("reading chunk %q: %w", id, err)
	}
	if len(recs) == 0 {
		return Passage{}, fmt.Errorf("%w: chunk %q in corpus %s", engine.ErrNotFound, id, corpus)
	}
	return passageOf(recs[0]), nil
}

func passageOf(r vectorstore.Record) Passage {
	return Passage{ID: r.ID, DocumentID: r.Attrs[schema.ChunkDocumentID], Title: r.Attrs[schema.ChunkTitle],
		Subject: r.Attrs[schema.ChunkSubject], Text: r.Text}
}

// CommunitySummary is a node of the community hierarchy with its report's title and
// rating (empty until the summarizer wrote it).
type CommunitySummary struct {
	ID       string   `json:"id"`
	Level    int      `json:"level"`
	Parent   string   `json:"parent,omitempty"`
	Children []string `json:"children"`
	Title    string   `json:"title"`
	Rating   float64  `json:"rating"`
	Members  int      `json:"members"`
}

// CommunityLevels is the community hierarchy, one level or all.
type CommunityLevels struct {
	Levels      int                `json:"levels"`
	Communities []CommunitySummary `json:"communities"`
}

// CommunityTree returns the communities of one level (0 the coarsest; -1: every level)
// with their report titles and ratings, by level then id. A level the hierarchy does not
// have is the caller's mistake; without a hierarchy yet, every level is empty.
func (rd *Reader) CommunityTree(ctx context.Context, corpus string, level int) (CommunityLevels, error) {
	if err := validCorpus(corpus, "x"); err != nil {
		return CommunityLevels{}, err
	}
	if level < -1 || level > 16 {
		return CommunityLevels{}, engine.BadRequestf("level: %d is outside 0..16", level)
	}
	levels, err := rd.levels(ctx, corpus)
	if err != nil {
		return CommunityLevels{}, err
	}
	if levels == 0 {
		return CommunityLevels{Communities: []CommunitySummary{}}, nil
	}
	if level >= levels {
		return CommunityLevels{}, engine.BadRequestf("level: %d is outside 0..%d (corpus %s has %d levels; 0 is the coarsest)", level, levels-1, corpus, levels)
	}
	stored := -1
	if level >= 0 {
		stored = graphstore.ShownLevel(level, levels)
	}
	cs, err := rd.graph.Communities(ctx, corpus, stored)
	if err != nil {
		return CommunityLevels{}, fmt.Errorf("reading communities: %w", err)
	}
	ids := make([]string, len(cs))
	for i, c := range cs {
		ids[i] = c.ID
	}
	reports, err := rd.reports(ctx, corpus, ids)
	if err != nil {
		return CommunityLevels{}, err
	}
	out := CommunityLevels{Levels: levels, Communities: make([]CommunitySummary, 0, len(cs))}
	for _, c := range cs {
		r := reports[c.ID]
		out.Communities = append(out.Communities, CommunitySummary{ID: c.ID, Level: graphstore.ShownLevel(c.Level, levels), Parent: c.ParentID,
			Children: nonNil(c.ChildIDs), Title: r.Title, Rating: r.Rating, Members: len(c.Members)})
	}
	slices.SortStableFunc(out.Communities, func(a, b CommunitySummary) int {
		return cmp.Or(cmp.Compare(a.Level, b.Level), cmp.Compare(a.ID, b.ID))
	})
	return out, nil
}

// Finding is one finding of a community report as the API shows it: the stored
// report's (schema.Finding), its explanation omitted when empty.
type Finding struct {
	Summary     string `json:"summary"`
	Explanation string `json:"explanation,omitempty"`
}

// CommunityMember is an entity of a community.
type CommunityMember struct {
	Key      string  `json:"key"`
	Name     string  `json:"name"`
	Type     string  `json:"type"`
	PageRank float64 `json:"pagerank"`
}

// CommunityReport is one community with its report and members (by PageRank, at most
// MaxCommunityMembers; MemberCount counts them all).
type CommunityReport struct {
	ID          string            `json:"id"`
	Level       int               `json:"level"`
	Parent      string            `json:"parent,omitempty"`
	Children    []string          `json:"children"`
	Title       string            `json:"title"`
	Rating      float64           `json:"rating"`
	Summary     string            `json:"summary"`
	Findings    []Finding         `json:"findings"`
	MemberCount int               `json:"member_count"`
	Members     []CommunityMember `json:"members"`
}

// Community returns one community with its report and its members.
func (rd *Reader) Community(ctx context.Context, corpus, id string) (CommunityReport, error) {
	if err := validCorpus(corpus, "x"); err != nil {
		return CommunityReport{}, err
	}
	c, err := rd.graph.Community(ctx, corpus, id)
	if errors.Is(err, graphstore.ErrNotFound) {
		return CommunityReport{}, fmt.Errorf("%w: community %q in corpus %s", engine.ErrNotFound, id, corpus)
	}
	if err != nil {
		return CommunityReport{}, fmt.Errorf("reading community %q: %w", id, err)
	}
	reports, err := rd.reports(ctx, corpus, []string{id})
	if err != nil {
		return CommunityReport{}, err
	}
	ents, err := rd.graph.Entities(ctx, corpus, c.Members)
	if err != nil {
		return CommunityReport{}, fmt.Errorf("reading the members of %q: %w", id, err)
	}
	sort.SliceStable(ents, func(i, j int) bool { return ents[i].PageRank > ents[j].PageRank })
	levels, err := rd.levels(ctx, corpus)
	if err != nil {
		return CommunityReport{}, err
	}
	r := reports[id]
	out := CommunityReport{ID: c.ID, Level: graphstore.ShownLevel(c.Level, levels), Parent: c.ParentID, Children: nonNil(c.ChildIDs),
		Title: r.Title, Rating: r.Rating, Summary: r.Summary, Findings: findingsOf(r), MemberCount: len(c.Members),
		Members: make([]CommunityMember, 0, min(len(ents), MaxCommunityMembers))}
	for _, en := range head(ents, MaxCommunityMembers) {
		out.Members = append(out.Members, CommunityMember{Key: en.Key, Name: en.Name, Type: en.Type, PageRank: en.PageRank})
	}
	return out, nil
}

// reports reads the report records of communities by id: the report JSON (attribute
// schema.ReportJSON), falling back to the record's text and attributes. Communities
// without a report yet are absent.
func (rd *Reader) reports(ctx context.Context, corpus string, ids []string) (map[string]schema.Report, error) {
	out := map[string]schema.Report{}
	if len(ids) == 0 {
		return out, nil
	}
	recs, err := rd.vectors.Get(ctx, schema.Collection(corpus, schema.Communities), ids)
	if errors.Is(err, vectorstore.ErrNotFound) {
		return out, nil // no reports yet
	}
	if err != nil {
		return nil, fmt.Errorf("reading community reports: %w", err)
	}
	for _, r := range recs {
		var sr schema.Report
		if js := r.Attrs[schema.ReportJSON]; js == "" || json.Unmarshal([]byte(js), &sr) != nil {
			c := engine.CommunityOf(r, 0)
			sr = schema.Report{Title: c.Title, Summary: c.Summary, Rating: c.Rating}
		}
		if sr.Title == "" {
			sr.Title = r.Attrs[schema.ReportTitle]
		}
		if sr.Rating == 0 {
			sr.Rating, _ = strconv.ParseFloat(r.Attrs[schema.ReportRating], 64)
		}
		out[r.ID] = sr
	}
	return out, nil
}

// findingsOf is the findings of a report as the API shows them.
func findingsOf(r schema.Report) []Finding {
	out := make([]Finding, len(r.Findings))
	for i, f := range r.Findings {
		out[i] = Finding(f)
	}
	return out
}

func nonNil[T any](xs []T) []T {
	if xs == nil {
		return []T{}
	}
	return xs
}

// head returns the first n elements of xs (all when there are fewer).
func head[T any](xs []T, n int) []T {
	if len(xs) > n {
		return xs[:n]
	}
	return xs
}
