package costestimate

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/graphrag/graphrag/pkg/community"
	"github.com/graphrag/graphrag/pkg/graphstore"
	"github.com/graphrag/graphrag/pkg/prompts"
)

// graphFigures are what the offline extractor's graph of the corpus says about the
// model's work after extraction: each a sum the calibration (calibration.go) scales.
type graphFigures struct {
	entities, relationships int
	// entityLines and relationshipLines are the tokens of the graph as a report's
	// context renders it (services/summarizer: "- name (type) [PR:…] - description",
	// "- a --[type]--> b: description").
	entityLines, relationshipLines int64
	// entityTexts are the tokens of one embedding text per entity under the option.
	entityTexts int64
	// descriptionCalls, descriptionPrompt and descriptionAnswer: the grapher's
	// summaries of entities with many descriptions.
	descriptionCalls, descriptionPrompt, descriptionAnswer int64
	// reports and reportContext: the communities the grapher's detection finds on this
	// graph (each gets a report) and the tokens of their rendered contexts.
	reports, reportContext int64
}

func (e *Estimator) graph(ctx context.Context) (graphFigures, error) {
	g := graphFigures{entities: len(e.entities), relationships: len(e.pairs)}
	sys := tokens(prompts.DescriptionSystem)
	for _, en := range e.entities {
		descs := make([]string, 0, len(en.descs))
		for d := range en.descs {
			descs = append(descs, d)
		}
		sort.Strings(descs)
		desc := longest(descs)
		if e.opts.Chat && len(descs) >= e.opts.SummarizeAfter { // offline, the longest description stands
			kept := smallest(descs, graphstore.MaxDescriptions)
			g.descriptionCalls++
			g.descriptionPrompt += sys + tokens(prompts.Description(en.name, kept))
			summary := strings.Join(kept[:min(3, len(kept))], " ")
			g.descriptionAnswer += min(tokens(summary), prompts.DescriptionMaxTokens)
			desc = summary
		}
		en.line = tokens("- " + en.name + " (" + en.typ + ") [PR:0.0000] - " + desc)
		en.summary = firstSentence(desc)
		g.entityLines += en.line
		text := en.name + " (" + strings.ToLower(en.typ) + ")"
		if e.opts.EntityEmbed == EntityEmbedDescription {
			text += ": " + desc
		}
		g.entityTexts += tokens(text)
	}
	for p, r := range e.pairs {
		r.line = tokens("- " + e.entities[p[0]].nameOr(p[0]) + " --[" + r.typ + "]--> " + e.entities[p[1]].nameOr(p[1]) + ": " + r.desc)
		g.relationshipLines += r.line
	}
	if err := e.communities(ctx, &g); err != nil {
		return g, err
	}
	return g, nil
}

func (en *entity) nameOr(key string) string {
	if en == nil {
		return key
	}
	return en.name
}

func longest(xs []string) string {
	best := ""
	for _, x := range xs {
		if len(x) > len(best) {
			best = x
		}
	}
	return best
}

// smallest returns the first n of the sorted xs: the descriptions the store keeps.
func smallest(xs []string, n int) []string { return xs[:min(n, len(xs))] }

// communities runs the grapher's detection (package community, with the grapher's
// default options) on the offline graph and renders every community's context as the
// summarizer does (services/summarizer: sub-community reports, members by PageRank,
// internal relationships by weight, within the context budget), a sub-community's
// report line sized as its three most central members' names and first sentences.
func (e *Estimator) communities(ctx context.Context, g *graphFigures) error {
	keys := make([]string, 0, len(e.entities))
	for k := range e.entities {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	index := make(map[string]int, len(keys))
	for i, k := range keys {
		index[k] = i
	}
	pairs := make([][2]string, 0, len(e.pairs))
	for p := range e.pairs {
		if _, ok := index[p[0]]; !ok {
			continue
		}
		if _, ok := index[p[1]]; !ok {
			continue
		}
		pairs = append(pairs, p)
	}
	sort.Slice(pairs, func(i, j int) bool {
		a, b := pairs[i], pairs[j]
		if index[a[0]] != index[b[0]] {
			return index[a[0]] < index[b[0]]
		}
		return index[a[1]] < index[b[1]]
	})
	snap := graphstore.Snapshot{Keys: keys, Edges: make([]graphstore.Edge, len(pairs))}
	for i, p := range pairs {
		snap.Edges[i] = graphstore.Edge{Source: index[p[0]], Target: index[p[1]], Weight: e.pairs[p].strength}
	}
	res, err := community.OnSnapshot(ctx, snap, community.Options{Resolution: 1, Seed: 42, MaxLevels: 3, Damping: 0.85, MinSize: 3})
	if err != nil {
		return fmt.Errorf("detecting communities: %w", err)
	}
	// Relationships by member, for the internal ones of each community.
	adj := map[string][][2]string{}
	for _, p := range pairs {
		adj[p[0]] = append(adj[p[0]], p)
	}
	byID := make(map[string]graphstore.Community, len(res.Communities))
	for _, c := range res.Communities {
		byID[c.ID] = c
	}
	budget := int64(e.opts.ReportContextTokens)
	for _, c := range res.Communities {
		if twin(c, byID) {
			continue // the summarizer copies its child's report (services/summarizer/twin.go)
		}
		members := append([]string(nil), c.Members...)
		sort.SliceStable(members, func(i, j int) bool { return res.PageRank[members[i]] > res.PageRank[members[j]] })
		used := int64(0)
		add := func(t int64) bool {
			if used+t > budget {
				return false
			}
			used += t
			return true
		}
		if len(c.ChildIDs) > 0 {
			add(tokens("## Sub-community reports"))
			for _, id := range c.ChildIDs {
				if !add(e.subReportLine(byID[id], res.PageRank)) {
					break
				}
			}
		}
		add(tokens("## Entities"))
		for _, m := range members {
			if !add(e.entities[m].line) {
				break
			}
		}
		add(tokens("## Relationships"))
		in := make(map[string]bool, len(members))
		for _, m := range members {
			in[m] = true
		}
		var rels []*relation
		for _, m := range c.Members {
			for _, p := range adj[m] {
				if in[p[1]] {
					rels = append(rels, e.pairs[p])
				}
			}
		}
		sort.SliceStable(rels, func(i, j int) bool { return rels[i].strength > rels[j].strength })
		for _, r := range rels {
			if !add(r.line) {
				break
			}
		}
		g.reports++
		g.reportContext += used
	}
	return nil
}

// subReportLine sizes "- title: summary" of a community's report as its three most
// central members' names and the first sentences of their descriptions.
func (e *Estimator) subReportLine(c graphstore.Community, pr map[string]float64) int64 {
	members := append([]string(nil), c.Members...)
	sort.SliceStable(members, func(i, j int) bool { return pr[members[i]] > pr[members[j]] })
	var names, sums []string
	for _, m := range members[:min(3, len(members))] {
		names = append(names, e.entities[m].name)
		sums = append(sums, e.entities[m].summary)
	}
	return tokens("- " + strings.Join(names, ", ") + ": " + strings.Join(sums, " "))
}

// twin says whether c has a child with exactly its members.
func twin(c graphstore.Community, byID map[string]graphstore.Community) bool {
	for _, id := range c.ChildIDs {
		if ch, ok := byID[id]; ok && slices.Equal(ch.Members, c.Members) {
			return true
		}
	}
	return false
}
