package graphstore

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// EntityContribution is what one chunk says about one entity after grouping its
// mentions.
type EntityContribution struct {
	Key string
	// Names are the distinct non-empty surface forms, sorted; empty when the entity
	// is only implied by a relationship end.
	Names []string
	// Types and Descriptions are distinct, non-empty and sorted.
	Types, Descriptions []string
}

// RelationContribution is what one chunk says about one directed pair.
type RelationContribution struct {
	SourceKey, TargetKey string
	Types, Descriptions  []string
	// Strength is the largest strength among the chunk's mentions of the pair, an
	// unspecified (0) one counting as 1.
	Strength float64
}

// Contribution is the normalized form of a ChunkExtraction that drivers store per
// chunk and aggregate over.
type Contribution struct {
	ChunkID, DocumentID string
	Entities            []EntityContribution   // sorted by Key
	Relations           []RelationContribution // sorted by (SourceKey, TargetKey)
}

// Contribute validates and normalizes one chunk's extraction: mentions are grouped
// by key (and relations by ordered pair), relationship ends not mentioned as
// entities become implied entities, self loops are dropped.
func Contribute(c ChunkExtraction) (Contribution, error) {
	if err := CheckKey("chunk id", c.ChunkID); err != nil {
		return Contribution{}, err
	}
	if !utf8.ValidString(c.DocumentID) {
		return Contribution{}, fmt.Errorf("chunk %q: document id is not UTF-8: %w", c.ChunkID, ErrInvalid)
	}
	type entAcc struct{ names, types, descs map[string]struct{} }
	ents := make(map[string]*entAcc)
	ent := func(key string) *entAcc {
		a := ents[key]
		if a == nil {
			a = &entAcc{map[string]struct{}{}, map[string]struct{}{}, map[string]struct{}{}}
			ents[key] = a
		}
		return a
	}
	add := func(set map[string]struct{}, s string) {
		if s != "" {
			set[s] = struct{}{}
		}
	}
	for _, m := range c.Entities {
		if err := CheckKey("entity key", m.Key); err != nil {
			return Contribution{}, fmt.Errorf("chunk %q: %w", c.ChunkID, err)
		}
		if !utf8.ValidString(m.Name) || !utf8.ValidString(m.Type) || !utf8.ValidString(m.Description) {
			return Contribution{}, fmt.Errorf("chunk %q: entity %q has text that is not UTF-8: %w", c.ChunkID, m.Key, ErrInvalid)
		}
		a := ent(m.Key)
		add(a.names, m.Name)
		add(a.types, m.Type)
		add(a.descs, m.Description)
	}
	type pair struct{ s, t string }
	type relAcc struct {
		types, descs map[string]struct{}
		strength     float64
	}
	rels := make(map[pair]*relAcc)
	for _, r := range c.Relations {
		if err := errors.Join(CheckKey("relation source", r.SourceKey), CheckKey("relation target", r.TargetKey)); err != nil {
			return Contribution{}, fmt.Errorf("chunk %q: %w", c.ChunkID, err)
		}
		if !utf8.ValidString(r.Type) || !utf8.ValidString(r.Description) {
			return Contribution{}, fmt.Errorf("chunk %q: relation %q->%q has text that is not UTF-8: %w",
				c.ChunkID, r.SourceKey, r.TargetKey, ErrInvalid)
		}
		if !(r.Strength >= 0 && r.Strength <= MaxStrength) {
			return Contribution{}, fmt.Errorf("chunk %q: relation %q->%q strength %v: %w",
				c.ChunkID, r.SourceKey, r.TargetKey, r.Strength, ErrInvalid)
		}
		if r.SourceKey == r.TargetKey {
			continue // self loops carry nothing a graph algorithm can use
		}
		ent(r.SourceKey)
		ent(r.TargetKey)
		p := pair{r.SourceKey, r.TargetKey}
		a := rels[p]
		if a == nil {
			a = &relAcc{types: map[string]struct{}{}, descs: map[string]struct{}{}}
			rels[p] = a
		}
		add(a.types, r.Type)
		add(a.descs, r.Description)
		s := r.Strength
		if s == 0 {
			s = 1
		}
		a.strength = max(a.strength, s)
	}
	out := Contribution{ChunkID: c.ChunkID, DocumentID: c.DocumentID}
	for k, a := range ents {
		out.Entities = append(out.Entities, EntityContribution{
			Key: k, Names: sortedSet(a.names), Types: sortedSet(a.types), Descriptions: sortedSet(a.descs),
		})
	}
	slices.SortFunc(out.Entities, func(a, b EntityContribution) int { return strings.Compare(a.Key, b.Key) })
	for p, a := range rels {
		out.Relations = append(out.Relations, RelationContribution{
			SourceKey: p.s, TargetKey: p.t, Types: sortedSet(a.types), Descriptions: sortedSet(a.descs), Strength: a.strength,
		})
	}
	slices.SortFunc(out.Relations, func(a, b RelationContribution) int {
		return cmp.Or(strings.Compare(a.SourceKey, b.SourceKey), strings.Compare(a.TargetKey, b.TargetKey))
	})
	return out, nil
}

// Extraction is a ChunkExtraction that Contribute turns back into ct: one mention per
// name, type and description of each entity (a bare key for an entity only implied),
// one per type and description of each relation (a bare pair for one with neither),
// each relation mention with the pair's strength.
func Extraction(ct Contribution) ChunkExtraction {
	ce := ChunkExtraction{ChunkID: ct.ChunkID, DocumentID: ct.DocumentID}
	for _, e := range ct.Entities {
		n := len(ce.Entities)
		for _, name := range e.Names {
			ce.Entities = append(ce.Entities, EntityMention{Key: e.Key, Name: name})
		}
		for _, t := range e.Types {
			ce.Entities = append(ce.Entities, EntityMention{Key: e.Key, Type: t})
		}
		for _, d := range e.Descriptions {
			ce.Entities = append(ce.Entities, EntityMention{Key: e.Key, Description: d})
		}
		if len(ce.Entities) == n {
			ce.Entities = append(ce.Entities, EntityMention{Key: e.Key})
		}
	}
	for _, r := range ct.Relations {
		n := len(ce.Relations)
		for _, t := range r.Types {
			ce.Relations = append(ce.Relations, RelationMention{SourceKey: r.SourceKey, TargetKey: r.TargetKey, Type: t, Strength: r.Strength})
		}
		for _, d := range r.Descriptions {
			ce.Relations = append(ce.Relations, RelationMention{SourceKey: r.SourceKey, TargetKey: r.TargetKey, Description: d, Strength: r.Strength})
		}
		if len(ce.Relations) == n {
			ce.Relations = append(ce.Relations, RelationMention{SourceKey: r.SourceKey, TargetKey: r.TargetKey, Strength: r.Strength})
		}
	}
	return ce
}

func sortedSet(m map[string]struct{}) []string {
	if len(m) == 0 {
		return nil
	}
	out := make([]string, 0, len(m))
	for s := range m {
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

// CheckKey reports, as ErrInvalid, a key (or id, or corpus name) that is empty,
// longer than MaxKeyLen or not UTF-8. what names it in the error.
func CheckKey(what, key string) error {
	switch {
	case key == "":
		return fmt.Errorf("empty %s: %w", what, ErrInvalid)
	case len(key) > MaxKeyLen:
		return fmt.Errorf("%s of %d bytes, over %d: %w", what, len(key), MaxKeyLen, ErrInvalid)
	case !utf8.ValidString(key):
		return fmt.Errorf("%s %q is not UTF-8: %w", what, key, ErrInvalid)
	}
	return nil
}

// MostFrequent returns the key with the highest count (ties: the smallest key), or
// "" when counts is empty. It implements the Name rule.
func MostFrequent(counts map[string]int) string {
	best, bestN := "", 0
	for s, n := range counts {
		if n > bestN || (n == bestN && s < best) {
			best, bestN = s, n
		}
	}
	return best
}

// MostFrequentType is MostFrequent among the keys other than TypeOther, or
// TypeOther when it is the only key with a count: the Type rule.
func MostFrequentType(counts map[string]int) string {
	best, bestN := "", 0
	for s, n := range counts {
		if s != TypeOther && (n > bestN || (n == bestN && s < best)) {
			best, bestN = s, n
		}
	}
	if best == "" && counts[TypeOther] > 0 {
		return TypeOther
	}
	return best
}

// Longest returns the longest string (ties: the smallest), or "" for none. It
// implements the Description rule.
func Longest(ss []string) string {
	best := ""
	for _, s := range ss {
		if len(s) > len(best) || (len(s) == len(best) && s < best) {
			best = s
		}
	}
	return best
}

// NormalizeCommunities validates a hierarchy for ReplaceCommunities and returns a
// copy sorted by (Level, ID) with Members sorted and de-duplicated and ChildIDs
// derived from the ParentID links. RelationshipCount is left for the driver to
// count. Input ChildIDs, when given, must agree with the ParentID links.
func NormalizeCommunities(cs []Community) ([]Community, error) {
	out := make([]Community, len(cs))
	byID := make(map[string]int, len(cs))
	for i, c := range cs {
		if err := CheckKey("community id", c.ID); err != nil {
			return nil, err
		}
		for _, k := range c.Members {
			if err := CheckKey("community member", k); err != nil {
				return nil, fmt.Errorf("community %q: %w", c.ID, err)
			}
		}
		if c.Level < 0 {
			return nil, fmt.Errorf("community %q level %d: %w", c.ID, c.Level, ErrInvalid)
		}
		if _, dup := byID[c.ID]; dup {
			return nil, fmt.Errorf("community %q given twice: %w", c.ID, ErrInvalid)
		}
		byID[c.ID] = i
		m := slices.Clone(c.Members)
		slices.Sort(m)
		out[i] = Community{ID: c.ID, Level: c.Level, ParentID: c.ParentID, Members: slices.Compact(m)}
	}
	for i, c := range out {
		if c.ParentID == "" {
			continue
		}
		p, ok := byID[c.ParentID]
		if !ok || out[p].Level != c.Level+1 {
			return nil, fmt.Errorf("community %q: parent %q is not a community at level %d: %w",
				c.ID, c.ParentID, c.Level+1, ErrInvalid)
		}
		out[p].ChildIDs = append(out[p].ChildIDs, out[i].ID)
	}
	for i := range out {
		slices.Sort(out[i].ChildIDs)
		if given := cs[i].ChildIDs; len(given) > 0 {
			g := slices.Clone(given)
			slices.Sort(g)
			if !slices.Equal(slices.Compact(g), out[i].ChildIDs) {
				return nil, fmt.Errorf("community %q: child ids disagree with parent links: %w", out[i].ID, ErrInvalid)
			}
		}
	}
	// One community per entity per level, so Entity.Communities is well defined.
	seen := make(map[string]map[int]string)
	for _, c := range out {
		for _, k := range c.Members {
			lv := seen[k]
			if lv == nil {
				lv = map[int]string{}
				seen[k] = lv
			}
			if other, ok := lv[c.Level]; ok {
				return nil, fmt.Errorf("entity %q in communities %q and %q at level %d: %w",
					k, other, c.ID, c.Level, ErrInvalid)
			}
			lv[c.Level] = c.ID
		}
	}
	slices.SortFunc(out, func(a, b Community) int {
		return cmp.Or(cmp.Compare(a.Level, b.Level), strings.Compare(a.ID, b.ID))
	})
	return out, nil
}
