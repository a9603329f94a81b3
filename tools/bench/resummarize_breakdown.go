package bench

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"

	"github.com/graphrag/graphrag/pkg/community"
	"github.com/graphrag/graphrag/pkg/graphstore"
	"github.com/graphrag/graphrag/pkg/graphstore/boltgraph"
	"github.com/graphrag/graphrag/pkg/pipeline"
	"github.com/graphrag/graphrag/services/grapher"
)

// A complete wave's report writes are its new ids: its net new communities plus the
// old ids it retired. Why an old community of a complete wave's run lost its id; its
// successors are the new communities of the same level that hold its members, the
// main one the one holding most.
const (
	causeGrew      = "grew"      // all its members in the main successor, with others that had no community at that level
	causeMerged    = "merged"    // all its members in the main successor, with members of other old communities
	causeSplit     = "split"     // some of its members elsewhere or in no community
	causeDissolved = "dissolved" // none of its members in a community at that level
	causeRenamed   = "renamed"   // within the member threshold of a successor, renamed by the size since its report or an id clash
)

var retireCauses = []string{causeGrew, causeMerged, causeSplit, causeDissolved, causeRenamed}

// rewriteBreakdown counts, over the waves of a complete run, the old ids each wave's
// run retired, by level and cause.
type rewriteBreakdown struct {
	byLevel map[int]map[string]int
	// grew counts the grew cases by {k, n}: k members added to an old community of n.
	grew map[[2]int]int
	// newIDs counts the new ids, and twins those with the members of one of their
	// children (the same members one level up: a second report on the same entities).
	newIDs, twins int
}

func newRewriteBreakdown() *rewriteBreakdown {
	return &rewriteBreakdown{byLevel: map[int]map[string]int{}, grew: map[[2]int]int{}}
}

// slot is an entity at a level.
type slot struct {
	level int
	key   string
}

// owners maps each member of cs at its level to the index of its community.
func owners(cs []graphstore.Community) map[slot]int {
	out := map[slot]int{}
	for i, c := range cs {
		for _, k := range c.Members {
			out[slot{c.Level, k}] = i
		}
	}
	return out
}

// add classifies the ids of prev that next no longer has, and counts next's new ids.
func (b *rewriteBreakdown) add(prev, next []graphstore.Community) {
	was, now := owners(prev), owners(next)
	ids, old := map[string]graphstore.Community{}, map[string]bool{}
	for _, c := range next {
		ids[c.ID] = c
	}
	for _, p := range prev {
		old[p.ID] = true
	}
	for _, c := range next {
		if old[c.ID] {
			continue
		}
		b.newIDs++
		for _, k := range c.ChildIDs {
			if len(ids[k].Members) == len(c.Members) {
				b.twins++
			}
		}
	}
	for i, p := range prev {
		if _, ok := ids[p.ID]; ok {
			continue
		}
		if b.byLevel[p.Level] == nil {
			b.byLevel[p.Level] = map[string]int{}
		}
		b.byLevel[p.Level][b.retired(i, prev, next, was, now)]++
	}
}

// retired is why prev[i] lost its id.
func (b *rewriteBreakdown) retired(i int, prev, next []graphstore.Community, was, now map[slot]int) string {
	p := prev[i]
	dest := map[int]int{}
	for _, k := range p.Members {
		if j, ok := now[slot{p.Level, k}]; ok {
			dest[j]++
		}
	}
	main, held := -1, 0
	for j, n := range dest {
		if n > held || (n == held && j < main) {
			main, held = j, n
		}
	}
	if main < 0 {
		return causeDissolved
	}
	s := next[main]
	if union := len(p.Members) + len(s.Members) - held; community.SmallChange(union-held, union, community.DefaultMaxChange) {
		return causeRenamed
	}
	if held < len(p.Members) {
		return causeSplit
	}
	for _, k := range s.Members {
		if j, ok := was[slot{p.Level, k}]; ok && j != i {
			return causeMerged
		}
	}
	b.grew[[2]int{len(s.Members) - len(p.Members), len(p.Members)}]++
	return causeGrew
}

// rows is one table row per level, then a total.
func (b *rewriteBreakdown) rows(label string) [][]string {
	levels := make([]int, 0, len(b.byLevel))
	for l := range b.byLevel {
		levels = append(levels, l)
	}
	sort.Ints(levels)
	total := map[string]int{}
	var out [][]string
	row := func(level string, counts map[string]int) []string {
		sum := 0
		cells := []string{label, level, ""}
		for _, c := range retireCauses {
			sum += counts[c]
			cells = append(cells, strconv.Itoa(counts[c]))
		}
		cells[2] = strconv.Itoa(sum)
		return cells
	}
	for _, l := range levels {
		for c, n := range b.byLevel[l] {
			total[c] += n
		}
		out = append(out, row(strconv.Itoa(l), b.byLevel[l]))
	}
	return append(out, row("all", total))
}

// grewBy sums the grew cases by the share of members added (k/n): up to 1/3, up to
// 1 (doubled), more.
func (b *rewriteBreakdown) grewBy() string {
	var small, double, more, smallCommunity int
	for kn, n := range b.grew {
		switch f := float64(kn[0]) / float64(kn[1]); {
		case f <= 1.0/3:
			small += n
		case f <= 1:
			double += n
		default:
			more += n
		}
		if kn[1] <= 4 {
			smallCommunity += n
		}
	}
	return fmt.Sprintf("grew by at most a third: %d, by a third to double: %d, more than doubled: %d; of 3–4 members before: %d", small, double, more, smallCommunity)
}

// addWave reads the hierarchy after a complete wave, classifies its new ids against
// before (the hierarchy after the previous wave, nil for the first) and returns it.
func (b *rewriteBreakdown) addWave(ctx context.Context, store *boltgraph.Store, before []graphstore.Community) ([]graphstore.Community, error) {
	after, err := store.Communities(ctx, benchCorpus, -1)
	if err != nil {
		return nil, fmt.Errorf("reading the communities after a wave: %w", err)
	}
	if before != nil {
		b.add(before, after)
	}
	return after, nil
}

// resummarizeVariants are the configurations the section measures, in table order;
// mode ("complete", "streaming" or "" for both) selects some.
func resummarizeVariants(mode string) []wavesVariant {
	growth, mc := grapher.DefaultConfig().DetectGrowth, community.DefaultMaxChange
	var out []wavesVariant
	for _, v := range []wavesVariant{
		{false, mc, 0, growth, false}, {false, mc, 0, growth, true},
		{true, mc, 0, growth, false}, {true, mc, 0, growth, true},
		{true, mc, 100, growth, false}, {true, mc, 100, growth, true},
	} {
		if mode == "" || mode == v.mode() {
			out = append(out, v)
		}
	}
	return out
}

// runResummarizeVariants indexes docs in waves once per variant and writes the
// table, then the breakdown of the complete runs' rewrites.
func runResummarizeVariants(ctx context.Context, cfg *benchConfig, r *benchReport, docs []realDoc, waves int) error {
	var rows, causes [][]string
	var grew []string
	for i, v := range resummarizeVariants(cfg.wavesMode) {
		dir := filepath.Join(cfg.workDir, fmt.Sprintf("waves-%d", i))
		res, err := runWaves(ctx, dir, docs, waves, v, func(wave int, writes int64, st pipeline.Status) {
			cfg.progress("%s, wave %d: %d report writes so far, %d communities, %d detections", v, wave, writes, st.Graph.Communities, st.Graph.Detections)
		})
		if err != nil {
			return fmt.Errorf("%s: %w", v, err)
		}
		calls := res.writes - res.copies
		per := float64(calls) / float64(max(res.communities, 1))
		cfg.progress("%s: %d report writes (%d copies) for %d communities (%.2f model calls each), %d detections, modularity %.4f (cold %.4f)", v, res.writes, res.copies, res.communities, per, res.detections, res.modularity, res.coldModularity)
		rows = append(rows, []string{v.mode(), v.start(), strconv.FormatFloat(v.maxChange, 'g', -1, 64), v.maxChangesCell(), strconv.FormatFloat(v.growth, 'g', -1, 64), strconv.Itoa(res.detections),
			strconv.FormatInt(res.writes, 10), strconv.FormatInt(res.copies, 10), strconv.FormatInt(calls, 10), strconv.Itoa(res.communities), fmt.Sprintf("%.2f", per),
			fmt.Sprintf("%.4f", res.modularity), fmt.Sprintf("%.4f", res.coldModularity), benchRound(res.wall).String(),
			benchVerdict(per <= 1.2, "≤ 1.2 model calls per final community")})
		if res.rewrites != nil {
			causes = append(causes, res.rewrites.rows(v.start())...)
			grew = append(grew, fmt.Sprintf("%s: %d new ids, %d of them with the members of one of their children; %s", v.start(), res.rewrites.newIDs, res.rewrites.twins, res.rewrites.grewBy()))
		}
	}
	r.table([]string{"waves", "start", "max change", "detect-max-changes", "detect-growth", "detection runs", "report writes", "copies", "model calls", "final communities", "model calls per final community",
		"final modularity", "cold modularity, same graph", "wall", "target"}, rows)
	if len(causes) == 0 {
		return nil
	}
	r.line("")
	r.line("Complete waves 2 to the last: a wave's report writes are its new ids, i.e. its net new communities plus")
	r.line("the old ids its detection retired. Retired ids by level and cause (successors: the new communities of")
	r.line("that level holding the old one's members). _grew_: all its members in one, with entities that had no")
	r.line("community at that level; _merged_: all in one, with members of other old communities; _split_: some")
	r.line("elsewhere or in none; _dissolved_: none in a community at that level; _renamed_: within the member")
	r.line("threshold of a successor, renamed by the size since its report or an id clash.")
	r.line("")
	r.table(append([]string{"start", "level", "retired ids"}, retireCauses...), causes)
	r.line("")
	r.line("New ids over the same waves, those with exactly the members of one of their children (a second report")
	r.line("on the same entities, one level up), and the grew cases by how much the old community grew:")
	r.line("")
	for _, g := range grew {
		r.line("- " + g)
	}
	return nil
}
