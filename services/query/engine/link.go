package engine

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"unicode"

	"golang.org/x/sync/errgroup"

	"github.com/graphrag/graphrag/pkg/graphstore"
	"github.com/graphrag/graphrag/pkg/normalize"
	"github.com/graphrag/graphrag/pkg/schema"
	"github.com/graphrag/graphrag/pkg/vectorstore"
)

// normalizeName is THE normalization (pkg/normalize), the one the grapher writes with.
func normalizeName(s string) string { return normalize.Name(s) }

// linkedEntity is an entity of the graph that the query refers to.
type linkedEntity struct {
	key    string
	score  float64 // 1 for an exact name match, the cosine similarity for an embedding link
	by     string  // exact, embedding, llm, proper_noun
	chunks int     // how many chunks mention it (specificity)
	// nearest marks the entity whose vector is the most similar to the question's (the
	// walk's entity seed when it carries the text lists, walkSeeds).
	nearest bool
}

const maxGram = 6

// link finds the graph entities the query refers to:
//  1. every word n-gram of the query, normalized, that names an entity (exact match, the
//     longest non-overlapping ones win);
//  2. entities whose vector (their description, or name and type with the grapher's
//     -entity-embed name) is similar to the query (top-k, minimum similarity, margin);
//     offline, none (NoEmbeddingLinks);
//  3. if both found nothing: the entity lister's names (fallbackLinks): the model's list
//     of the query's entities when there is a model, then capitalized phrases (proper
//     nouns).
//
// Every candidate is checked against the graph through the same normalization the grapher
// writes with. Steps 1 and 2 are independent lookups and run concurrently.
func (e *Engine) link(ctx context.Context, corpus, query string, qvec []float32) ([]linkedEntity, error) {
	var exact []graphstore.Entity
	var hits []vectorstore.Hit
	words := queryWords(query)
	cands, spans := ngramCandidates(words)
	if e.deps.Aliases != nil {
		aliases, err := e.deps.Aliases(ctx, corpus)
		if err != nil {
			return nil, fmt.Errorf("reading curated aliases: %w", err)
		}
		for i, c := range cands {
			if a, ok := aliases[c]; ok {
				cands[i] = a
			}
		}
	}
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) {
		if exact, err = e.deps.Graph.Entities(gctx, corpus, cands); err != nil {
			return fmt.Errorf("linking query entities: %w", err)
		}
		return nil
	})
	g.Go(func() (err error) {
		if qvec == nil || e.cfg.EntityMinSim >= NoEmbeddingLinks {
			return nil // exact names only
		}
		hits, err = e.deps.Vectors.Search(gctx, schema.Collection(corpus, schema.Entities), qvec, e.cfg.EntityTopK, vectorstore.Filter{})
		if err != nil && !errors.Is(err, vectorstore.ErrNotFound) {
			return fmt.Errorf("searching entities: %w", err)
		}
		return nil
	})
	if err := g.Wait(); err != nil {
		return nil, err
	}

	l := newLinks()
	for _, en := range exact {
		l.exists[en.Key] = len(en.ChunkIDs)
	}
	for _, k := range longestFirst(len(words), cands, spans, l.exists) {
		l.add(k, 1, "exact")
	}
	if err := e.verify(ctx, corpus, e.embeddingLinks(hits), func(k string, n int) { l.add(k, scoreOf(hits, k), "embedding"); l.exists[k] = n }); err != nil {
		return nil, err
	}
	if len(hits) > 0 {
		if f, ok := l.found[hits[0].ID]; ok {
			f.nearest = true
		}
	}
	if err := e.fallbackLinks(ctx, corpus, query, l); err != nil {
		return nil, err
	}
	return l.sorted(), nil
}

// links collects the entities linked from one question.
type links struct {
	found  map[string]*linkedEntity
	exists map[string]int // key → how many chunks mention it
}

func newLinks() *links {
	return &links{found: map[string]*linkedEntity{}, exists: map[string]int{}}
}

// add links key, keeping the best score (and how it was found) of a key linked twice.
func (l *links) add(key string, score float64, by string) {
	if key == "" {
		return
	}
	if f, ok := l.found[key]; ok {
		if score > f.score {
			f.score, f.by = score, by
		}
		return
	}
	l.found[key] = &linkedEntity{key: key, score: score, by: by}
}

// sorted returns the links best score first, then by key.
func (l *links) sorted() []linkedEntity {
	out := make([]linkedEntity, 0, len(l.found))
	for _, f := range l.found {
		f.chunks = l.exists[f.key]
		out = append(out, *f)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].score != out[j].score {
			return out[i].score > out[j].score
		}
		return out[i].key < out[j].key
	})
	return out
}

// span is the word range [i, j) of an n-gram in the query.
type span struct{ i, j int }

// ngramCandidates returns the normalized word n-grams of a query (longest first, up to
// maxGram words) that could name an entity, with the words each covers.
func ngramCandidates(words []string) ([]string, map[string]span) {
	var cands []string
	spanOf := map[string]span{}
	for n := min(maxGram, len(words)); n >= 1; n-- {
		for i := 0; i+n <= len(words); i++ {
			// An n-gram with a stopword at an edge normalizes to the shorter one
			// without it, enumerated anyway; its wider span would make it overlap (and
			// so shut out) the name next to it: "King Vidor and Géza von Cziffra".
			if n > 1 && (normalize.IsEdgeStopword(normalizeName(words[i])) || normalize.IsEdgeStopword(normalizeName(words[i+n-1]))) {
				continue
			}
			k := normalizeName(strings.Join(words[i:i+n], " "))
			if k == "" || isQueryStopword(k) {
				continue
			}
			if _, ok := spanOf[k]; !ok {
				spanOf[k] = span{i, i + n}
				cands = append(cands, k)
			}
		}
	}
	return cands, spanOf
}

// longestFirst returns the candidates (longest first) that exist in the graph and do
// not overlap a longer one already taken.
func longestFirst(nwords int, cands []string, spans map[string]span, exists map[string]int) []string {
	var out []string
	covered := make([]bool, nwords)
	for _, k := range cands {
		if _, ok := exists[k]; !ok {
			continue
		}
		sp := spans[k]
		overlap := false
		for i := sp.i; i < sp.j; i++ {
			overlap = overlap || covered[i]
		}
		if overlap {
			continue
		}
		for i := sp.i; i < sp.j; i++ {
			covered[i] = true
		}
		out = append(out, k)
	}
	return out
}

// embeddingLinks returns the entity hits at least EntityMinSim similar to the query and
// within EntityMargin of the best hit.
func (e *Engine) embeddingLinks(hits []vectorstore.Hit) []string {
	var out []string
	best := 0.0
	for _, h := range hits {
		best = max(best, h.Score)
	}
	for _, h := range hits {
		if h.Score >= e.cfg.EntityMinSim && h.Score >= best-e.cfg.EntityMargin {
			out = append(out, h.ID)
		}
	}
	return out
}

// fallbackLinks runs when neither exact names nor embeddings linked anything: the
// names the entity lister gives (Deps.Entities: the model's list of the query's
// entities, then its proper nouns; offline, the proper nouns alone), each list only
// when those before it linked nothing.
func (e *Engine) fallbackLinks(ctx context.Context, corpus, query string, l *links) error {
	if len(l.found) > 0 {
		return nil
	}
	lists, err := e.deps.Entities.QueryEntities(ctx, query)
	if err != nil {
		e.log.WarnContext(ctx, "listing the query's entities failed; falling back to proper nouns", "err", err)
	}
	for _, ns := range lists {
		if len(l.found) > 0 {
			break
		}
		if err := e.verify(ctx, corpus, normalizeAll(ns.Names), func(k string, n int) { l.add(k, ns.Score, ns.By); l.exists[k] = n }); err != nil {
			return err
		}
	}
	return nil
}

func scoreOf(hits []vectorstore.Hit, id string) float64 {
	for _, h := range hits {
		if h.ID == id {
			return h.Score
		}
	}
	return 0
}

// verify calls ok for each key that exists in the graph.
func (e *Engine) verify(ctx context.Context, corpus string, keys []string, ok func(key string, chunks int)) error {
	if len(keys) == 0 {
		return nil
	}
	ents, err := e.deps.Graph.Entities(ctx, corpus, keys)
	if err != nil {
		return fmt.Errorf("checking linked entities against the graph: %w", err)
	}
	for _, en := range ents {
		ok(en.Key, len(en.ChunkIDs))
	}
	return nil
}

func normalizeAll(names []string) []string {
	out := make([]string, 0, len(names))
	for _, n := range names {
		if k := normalizeName(n); k != "" {
			out = append(out, k)
		}
	}
	return out
}

// queryWords splits a query into words, keeping inner apostrophes and hyphens.
func queryWords(q string) []string {
	return strings.FieldsFunc(q, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '\'' && r != '-' && r != '.' && r != '&'
	})
}

var queryStop = map[string]bool{}

func init() {
	for w := range strings.FieldsSeq(`what which who whom whose when where why how is are was were be been being do does did
		the a an of and or in on at to for from by with about as into than then that this these those it its
		there their they them he she his her him i you we our your my me not no yes both either neither same
		same one first also many much more most other such can could would should will shall may might
		between among during before after since until while name named called known`) {
		queryStop[w] = true
	}
}

// isQueryStopword is true for n-grams made only of question words and stopwords.
func isQueryStopword(k string) bool {
	for w := range strings.FieldsSeq(k) {
		if !queryStop[w] {
			return false
		}
	}
	return true
}

var properNounRE = regexp.MustCompile(`\b\p{Lu}[\p{L}\p{M}'’-]*(?:\s+(?:of|the|de|da|van|von|del|la|le|du|and|&)?\s*\p{Lu}[\p{L}\p{M}'’-]*)*`)

// ProperNouns returns the capitalized phrases of a text (the last-resort linking
// fallback): "What did Sapolsky say about stress?" → ["What", "Sapolsky"]; the caller
// checks them against the graph, which drops the noise.
func ProperNouns(s string) []string {
	var out []string
	for _, m := range properNounRE.FindAllString(s, -1) {
		out = append(out, strings.TrimSpace(m))
	}
	return out
}
