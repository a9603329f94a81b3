package catalog

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/errkind"
	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/pkg/graphstore"
	"github.com/graphrag/graphrag/pkg/pipeline"
	"github.com/graphrag/graphrag/pkg/schema"
	"github.com/graphrag/graphrag/pkg/vectorstore"
)

// ErrNotFound is returned for a document or corpus the platform does not hold.
var ErrNotFound = errkind.Public(errkind.NotFound, "not found")

// GraphReader is what the catalog reads from a graph store (a graphstore.Store).
type GraphReader interface {
	Corpora(ctx context.Context) ([]string, error)
	Stats(ctx context.Context, corpus string) (graphstore.Stats, error)
}

// VectorReader is what the catalog reads from a vector store (a vectorstore.Store).
type VectorReader interface {
	Collections(ctx context.Context) ([]string, error)
	Count(ctx context.Context, coll string) (int, error)
	Attrs(ctx context.Context, coll string, ids []string) (map[string]map[string]string, error)
}

var (
	_ GraphReader  = graphstore.Store(nil)
	_ VectorReader = vectorstore.Store(nil)
)

// Catalog reads what the platform holds. It is safe for concurrent use.
type Catalog struct {
	bus     *bus.Bus
	graph   GraphReader
	vectors VectorReader
}

// New returns a catalog over the bus and the stores.
func New(b *bus.Bus, g GraphReader, v VectorReader) *Catalog {
	return &Catalog{bus: b, graph: g, vectors: v}
}

// Corpus is a corpus with its counts and its state (a Status state).
type Corpus struct {
	Name          string `json:"name"`
	Documents     int    `json:"documents"`
	Chunks        int    `json:"chunks"`
	Entities      int    `json:"entities"`
	Relationships int    `json:"relationships"`
	Communities   int    `json:"communities"`
	State         string `json:"state"`
}

// Names lists the corpora the platform holds, sorted: those with a document (one the
// document listing lists: pending, indexed or failed, not deleted), chunks, or
// entities. A corpus whose documents were all deleted, or that was dropped, is not
// one, although its events stay in the document stream and its collections may stay.
func (c *Catalog) Names(ctx context.Context) ([]string, error) {
	known, err := c.known(ctx)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(known))
	for _, n := range known {
		held, err := c.holds(ctx, n)
		if err != nil {
			return nil, err
		}
		if held {
			names = append(names, n)
		}
	}
	return names, nil
}

// Exists reports whether the platform holds anything of a corpus (Names would list
// it): a document, even one still pending or failed, a chunk or an entity. An unknown
// corpus and an existing one that is still empty are told apart by it.
func (c *Catalog) Exists(ctx context.Context, name string) (bool, error) {
	if err := events.ValidateCorpus(name); err != nil {
		return false, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return c.holds(ctx, name)
}

// holds reports whether the platform holds anything of a corpus.
func (c *Catalog) holds(ctx context.Context, name string) (bool, error) {
	n, err := c.vectors.Count(ctx, schema.Collection(name, schema.Chunks))
	if err != nil && !errors.Is(err, vectorstore.ErrNotFound) {
		return false, fmt.Errorf("counting the chunks of %s: %w", name, err)
	}
	if n > 0 {
		return true, nil
	}
	gs, err := c.graph.Stats(ctx, name)
	if err != nil {
		return false, fmt.Errorf("reading the graph of %s: %w", name, err)
	}
	if gs.Entities > 0 {
		return true, nil
	}
	docs, err := c.documentCount(ctx, name)
	return docs > 0, err
}

// known lists, sorted, the corpora with events in the document stream, a chunk
// collection or a graph: every corpus the platform may hold something of.
func (c *Catalog) known(ctx context.Context) ([]string, error) {
	seen := map[string]bool{}
	subjects, err := c.bus.SubjectCounts(ctx, pipeline.StreamName(events.KindDocuments), events.AllSubjects(events.KindDocuments))
	if err != nil && !errors.Is(err, bus.ErrNotFound) {
		return nil, fmt.Errorf("listing corpora: %w", err)
	}
	for subj := range subjects {
		if corpus, err := events.CorpusFromSubject(subj); err == nil {
			seen[corpus] = true
		}
	}
	colls, err := c.vectors.Collections(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing corpora: %w", err)
	}
	suffix := schema.Collection("", schema.Chunks)
	for _, coll := range colls {
		if name, ok := strings.CutSuffix(coll, suffix); ok && events.ValidateCorpus(name) == nil {
			seen[name] = true
		}
	}
	graphs, err := c.graph.Corpora(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing corpora: %w", err)
	}
	for _, g := range graphs {
		seen[g] = true
	}
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	slices.Sort(names)
	return names, nil
}

// Corpora describes every corpus for which keep returns true (nil: all), sorted by
// name.
func (c *Catalog) Corpora(ctx context.Context, keep func(string) bool) ([]Corpus, error) {
	names, err := c.Names(ctx)
	if err != nil {
		return nil, err
	}
	out := []Corpus{}
	for _, n := range names {
		if keep != nil && !keep(n) {
			continue
		}
		cp, err := c.corpus(ctx, n)
		if err != nil {
			return nil, err
		}
		out = append(out, cp)
	}
	return out, nil
}

// Corpus describes one corpus; ErrNotFound if the platform knows nothing of it.
func (c *Catalog) Corpus(ctx context.Context, name string) (Corpus, error) {
	if err := events.ValidateCorpus(name); err != nil {
		return Corpus{}, err
	}
	names, err := c.Names(ctx)
	if err != nil {
		return Corpus{}, err
	}
	if !slices.Contains(names, name) {
		return Corpus{}, fmt.Errorf("%w: corpus %s", ErrNotFound, name)
	}
	return c.corpus(ctx, name)
}

func (c *Catalog) corpus(ctx context.Context, name string) (Corpus, error) {
	cp := Corpus{Name: name}
	gs, err := c.graph.Stats(ctx, name)
	if err != nil {
		return cp, fmt.Errorf("reading the graph of %s: %w", name, err)
	}
	cp.Entities, cp.Relationships, cp.Communities = gs.Entities, gs.Relationships, gs.Communities
	if cp.Chunks, err = c.vectors.Count(ctx, schema.Collection(name, schema.Chunks)); err != nil && !errors.Is(err, vectorstore.ErrNotFound) {
		return cp, fmt.Errorf("counting the chunks of %s: %w", name, err)
	}
	if cp.Documents, err = c.documentCount(ctx, name); err != nil {
		return cp, err
	}
	st, err := pipeline.GetStatus(ctx, c.bus, name)
	if err != nil {
		return cp, fmt.Errorf("reading the status of %s: %w", name, err)
	}
	cp.State = State(st)
	return cp, nil
}

// Created is when a corpus began: when the document stream stored its first event
// after the corpus's last drop. It is the zero time when the stream holds none (the
// stream's limits removed them, or nothing was published since the drop).
func (c *Catalog) Created(ctx context.Context, name string) (time.Time, error) {
	if err := events.ValidateCorpus(name); err != nil {
		return time.Time{}, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	var from uint64
	kv, err := c.bus.KV(ctx, schema.StateBucket)
	switch {
	case err == nil:
		rec, _, err := pipeline.LoadCorpus(ctx, kv, name)
		if err != nil {
			return time.Time{}, err
		}
		if rec.DroppedAt > 0 {
			from = rec.DroppedAt + 1
		}
	case !errors.Is(err, bus.ErrNotFound): // no bucket: the pipeline never ran, no drop
		return time.Time{}, fmt.Errorf("reading when %s began: %w", name, err)
	}
	m, err := c.bus.FirstMessage(ctx, pipeline.StreamName(events.KindDocuments), events.Subject(events.KindDocuments, name), from)
	if errors.Is(err, bus.ErrNotFound) {
		return time.Time{}, nil
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("reading when %s began: %w", name, err)
	}
	return m.Time.UTC(), nil
}
