package taxonomy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/schema"
)

// Strategies.
const (
	Global     = "global"
	Stratified = "stratified"
)

// Taxonomy is the consolidated list of entity types.
type Taxonomy struct {
	Types     []string          `json:"types"`
	Aliases   map[string]string `json:"aliases,omitempty"` // raw type → kept type
	Strategy  string            `json:"strategy"`
	UpdatedAt time.Time         `json:"updated_at"`
}

// Counts are entity mentions per corpus and type.
type Counts map[string]map[string]int

// Options tune the selection.
type Options struct {
	Strategy string
	// PerCorpus is the number of types kept per corpus (stratified) or in all (global × corpora).
	PerCorpus int
	// MinPercent is the minimum share of a corpus's mentions a type needs.
	MinPercent float64
	// Max bounds the final list.
	Max int
}

// DefaultOptions are the seeds' defaults: stratified, 12 types per corpus, 1% minimum.
func DefaultOptions() Options {
	return Options{Strategy: Stratified, PerCorpus: 12, MinPercent: 1.0, Max: 40}
}

// Select picks the kept types from the counts, deterministically.
func Select(c Counts, o Options) ([]string, error) {
	total := map[string]int{}
	for _, byType := range c {
		for t, n := range byType {
			total[t] += n
		}
	}
	var keep map[string]bool
	switch o.Strategy {
	case Global:
		keep = map[string]bool{}
		all := 0
		for _, n := range total {
			all += n
		}
		for _, t := range rank(total) {
			if len(keep) >= o.PerCorpus*max(1, len(c)) {
				break
			}
			if float64(total[t])*100 >= o.MinPercent*float64(all) {
				keep[t] = true
			}
		}
	case Stratified, "":
		keep = map[string]bool{}
		for _, byType := range c {
			all := 0
			for _, n := range byType {
				all += n
			}
			taken := 0
			for _, t := range rank(byType) {
				if taken >= o.PerCorpus {
					break
				}
				if float64(byType[t])*100 >= o.MinPercent*float64(all) {
					keep[t] = true
					taken++
				}
			}
		}
	default:
		return nil, fmt.Errorf("taxonomy: unknown strategy %q (want %s or %s)", o.Strategy, Global, Stratified)
	}
	kept := map[string]int{}
	for t := range keep {
		kept[t] = total[t]
	}
	out := rank(kept)
	if o.Max > 0 && len(out) > o.Max {
		out = out[:o.Max]
	}
	return out, nil
}

// rank orders types by count, then name.
func rank(m map[string]int) []string {
	out := make([]string, 0, len(m))
	for t := range m {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool {
		if m[out[i]] != m[out[j]] {
			return m[out[i]] > m[out[j]]
		}
		return out[i] < out[j]
	})
	return out
}

// Canonical maps a raw type through the aliases, upper-cased with underscores.
func (t Taxonomy) Canonical(raw string) string {
	k := strings.ToUpper(strings.Join(strings.Fields(raw), "_"))
	if a, ok := t.Aliases[k]; ok {
		return a
	}
	return k
}

// Load reads the taxonomy (zero value when none was written yet).
func Load(ctx context.Context, kv bus.KV) (Taxonomy, error) {
	var t Taxonomy
	v, err := kv.Get(ctx, schema.TaxonomyKey)
	if errors.Is(err, bus.ErrNotFound) {
		return t, nil
	}
	if err != nil {
		return t, fmt.Errorf("reading taxonomy: %w", err)
	}
	if err := json.Unmarshal(v, &t); err != nil {
		return t, fmt.Errorf("decoding taxonomy: %w", err)
	}
	return t, nil
}

// Save writes the taxonomy.
func Save(ctx context.Context, kv bus.KV, t Taxonomy) error {
	b, err := json.Marshal(t)
	if err != nil {
		return fmt.Errorf("encoding taxonomy: %w", err)
	}
	if err := kv.Put(ctx, schema.TaxonomyKey, b); err != nil {
		return fmt.Errorf("writing taxonomy: %w", err)
	}
	return nil
}
