package grapher

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/pkg/graphstore"
	"github.com/graphrag/graphrag/pkg/llm"
	"github.com/graphrag/graphrag/pkg/pipeline"
	"github.com/graphrag/graphrag/pkg/prompts"
	"github.com/graphrag/graphrag/pkg/schema"
	"github.com/graphrag/graphrag/pkg/taxonomy"
	"github.com/graphrag/graphrag/pkg/vectorstore"
)

// What Config.EntityEmbed may say is embedded for an entity.
const (
	EntityEmbedDescription = "description"
	EntityEmbedName        = "name"
)

// EntityText is what is embedded for an entity by default (Config.EntityEmbed
// EntityEmbedDescription): its name, type and description. Query-time entity linking
// searches these vectors (names are matched in the graph, so the collection has no
// lexical index: at 859k entities its segment merges were most of a detection run's
// writes). An entity is embedded again whenever its description changes.
func EntityText(e graphstore.Entity) string {
	if e.Description == "" {
		return e.Name
	}
	return e.Name + " (" + strings.ToLower(e.Type) + "): " + e.Description
}

// EntityNameText is what is embedded for an entity with Config.EntityEmbed
// EntityEmbedName: its name and type, a text that does not grow with the entity's
// mentions, so the entity is embedded once. Offline descriptions are the sentences that
// name an entity, so with EntityText one sentence is embedded once per entity it names:
// 45 % of the tokens embedded on MuSiQue, against 6 % with this text; with E5 the graph
// strategy's R@5 was lower with it (docs/adr/0050-embed-each-text-once.md).
func EntityNameText(e graphstore.Entity) string {
	if e.Type == "" {
		return e.Name
	}
	return e.Name + " (" + strings.ToLower(e.Type) + ")"
}

// entityText is what is embedded for e under the configuration.
func (s *Service) entityText(e graphstore.Entity) string {
	if s.cfg.EntityEmbed == EntityEmbedName {
		return EntityNameText(e)
	}
	return EntityText(e)
}

// entityWriteGroup is how many changed entities are embedded and upserted at once. Each
// upsert is a durable commit that also updates the dense index; a few large ones cost far
// less than many small ones (docs/benchmarks.md, 100k realistic chunks).
const entityWriteGroup = 4096

// embedEntities (re-)embeds entities whose text changed since they were last embedded and
// deletes records of entities that are gone.
func (s *Service) embedEntities(ctx context.Context, corpus string, keys []string) error {
	coll := schema.Collection(corpus, schema.Entities)
	if err := s.deps.Vectors.EnsureCollection(ctx, vectorstore.CollectionSpec{Name: coll, Dim: s.dim}); err != nil {
		return fmt.Errorf("ensuring entity collection: %w", err)
	}
	var todo []graphstore.Entity
	var texts []string
	var refused []vectorstore.Refused
	write := func() error {
		r, err := s.writeEntities(ctx, coll, todo, texts)
		refused = append(refused, r...)
		return err
	}
	for _, part := range batches(keys, 1024) {
		ents, err := s.deps.Graph.Entities(ctx, corpus, part, graphstore.Brief) // the text needs no lists
		if err != nil {
			return fmt.Errorf("reading entities: %w", err)
		}
		prev, err := s.deps.Vectors.Attrs(ctx, coll, part) // the text hash, without the vectors
		if err != nil {
			return fmt.Errorf("reading entity records: %w", err)
		}
		for _, e := range ents {
			t := s.entityText(e)
			if prev[e.Key][schema.EntityTextHash] == events.Hash(t)[:16] {
				continue
			}
			todo = append(todo, e)
			texts = append(texts, t)
		}
		if len(todo) >= entityWriteGroup {
			if err := write(); err != nil {
				return err
			}
			todo, texts = todo[:0], texts[:0]
		}
	}
	if err := write(); err != nil {
		return err
	}
	// Every record refused is tried again next run (it has no record, so its text
	// counts as changed): the list is this run's refusals.
	if err := pipeline.ReplaceQuarantine(ctx, s.kv, corpus, pipeline.StageGrapher, coll, refused); err != nil {
		return err
	}
	for _, r := range refused {
		s.log.Warn("entity record quarantined", "corpus", corpus, "entity", shortID(r.ID), "reason", r.Err)
	}
	n, err := s.deps.Vectors.Count(ctx, coll)
	if err != nil {
		return fmt.Errorf("counting entity records: %w", err)
	}
	if n > len(keys) {
		current := func(id string) bool {
			i := sort.SearchStrings(keys, id)
			return i < len(keys) && keys[i] == id
		}
		if _, err := deleteStale(ctx, s.deps.Vectors, coll, current); err != nil {
			return fmt.Errorf("deleting stale entity records: %w", err)
		}
	}
	return nil
}

// writeEntities embeds texts and upserts the entities' records in one write, and
// returns the records the store refused as invalid (written without them).
func (s *Service) writeEntities(ctx context.Context, coll string, ents []graphstore.Entity, texts []string) ([]vectorstore.Refused, error) {
	if len(ents) == 0 {
		return nil, nil
	}
	vecs, err := s.embedder.Embed(ctx, texts)
	if err != nil {
		return nil, fmt.Errorf("embedding %d entities: %w", len(ents), err)
	}
	recs := make([]vectorstore.Record, len(ents))
	for i, e := range ents {
		recs[i] = vectorstore.Record{ID: e.Key, Vector: vecs[i], Text: texts[i], Attrs: map[string]string{
			schema.EntityName: e.Name, schema.EntityType: e.Type, schema.EntityTextHash: events.Hash(texts[i])[:16]}}
	}
	refused, err := vectorstore.UpsertValid(ctx, s.deps.Vectors, coll, recs)
	if err != nil {
		return nil, fmt.Errorf("writing entity records: %w", err)
	}
	return refused, nil
}

// shortID shortens an id for a log line (an entity name can be a megabyte).
func shortID(id string) string {
	const n = 120
	if len(id) <= n {
		return id
	}
	return strings.ToValidUTF8(id[:n], "") + "…"
}

const describeSystem = prompts.DescriptionSystem

// summarizeDescriptions asks the LLM to merge the descriptions of entities that have
// accumulated many. Offline, the longest description stands (the store's default).
func (s *Service) summarizeDescriptions(ctx context.Context, corpus string, keys []string) error {
	if s.deps.LLM == nil {
		return nil
	}
	for _, part := range batches(keys, 256) {
		ents, err := s.deps.Graph.Entities(ctx, corpus, part)
		if err != nil {
			return fmt.Errorf("reading entities: %w", err)
		}
		out := map[string]string{}
		for _, e := range ents {
			if len(e.Descriptions) < s.cfg.SummarizeAfter {
				continue
			}
			user := prompts.Description(e.Name, e.Descriptions)
			resp, err := s.deps.LLM.Chat(ctx, llm.ChatRequest{Stage: "grapher", System: describeSystem, User: user, MaxTokens: prompts.DescriptionMaxTokens})
			if err != nil {
				return fmt.Errorf("summarizing the descriptions of %q: %w", e.Key, err)
			}
			if d := strings.TrimSpace(resp.Content); d != "" {
				out[e.Key] = d
			}
		}
		if len(out) > 0 {
			if err := s.deps.Graph.SetDescriptions(ctx, corpus, out); err != nil {
				return fmt.Errorf("writing summarized descriptions: %w", err)
			}
		}
	}
	return nil
}

// refreshTaxonomy recounts this corpus's entity types, stores the counts, and selects the
// consolidated types across every corpus with the configured strategy.
func (s *Service) refreshTaxonomy(ctx context.Context, corpus string, keys []string) error {
	counts := map[string]int{}
	for _, part := range batches(keys, 512) {
		ents, err := s.deps.Graph.Entities(ctx, corpus, part, graphstore.Brief)
		if err != nil {
			return err
		}
		for _, e := range ents {
			counts[e.Type] += e.MentionCount
		}
	}
	b, err := json.Marshal(counts)
	if err != nil {
		return err
	}
	if err := s.kv.Put(ctx, schema.TypeCountsKey(corpus), b); err != nil {
		return fmt.Errorf("writing type counts: %w", err)
	}
	all := taxonomy.Counts{}
	stored, err := s.kv.Keys(ctx, schema.TypeCountsPrefix)
	if err != nil {
		return fmt.Errorf("listing type counts: %w", err)
	}
	for _, k := range stored {
		v, err := s.kv.Get(ctx, k)
		if err != nil {
			return err
		}
		var c map[string]int
		if err := json.Unmarshal(v, &c); err != nil {
			return err
		}
		all[strings.TrimPrefix(k, schema.TypeCountsPrefix)] = c
	}
	types, err := taxonomy.Select(all, s.cfg.Taxonomy)
	if err != nil {
		return err
	}
	prev, err := taxonomy.Load(ctx, s.kv)
	if err != nil {
		return err
	}
	if strings.Join(prev.Types, ",") == strings.Join(types, ",") {
		return nil
	}
	return taxonomy.Save(ctx, s.kv, taxonomy.Taxonomy{Types: types, Strategy: s.cfg.Taxonomy.Strategy, UpdatedAt: time.Now().UTC()})
}
