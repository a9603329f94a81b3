package engine

import (
	"math"
	"slices"
	"sort"
)

// RankedList is one ranked result list: ids best first.
type RankedList struct {
	Name   string
	Weight float64
	IDs    []string
	Scores []float64 // optional, parallel to IDs
}

// Fused is a fused result.
type Fused struct {
	ID    string
	Score float64
	Hits  []ListHit
}

// RRF fuses ranked lists with Reciprocal Rank Fusion: score(d) = Σ_l w_l / (k + rank_l(d)),
// ranks 1-based. An id in several lists gets the sum of its contributions, so agreement
// between lists lifts it. Ties break by the best single rank, then by id.
func RRF(k float64, lists ...RankedList) []Fused {
	byID := map[string]*Fused{}
	best := map[string]int{}
	var order []string
	for _, l := range lists {
		if l.Weight == 0 {
			continue
		}
		seen := map[string]bool{}
		for i, id := range l.IDs {
			if seen[id] {
				continue // a list counts an id once, at its best rank
			}
			seen[id] = true
			rank := i + 1
			f, ok := byID[id]
			if !ok {
				f = &Fused{ID: id}
				byID[id] = f
				order = append(order, id)
				best[id] = rank
			}
			f.Score += l.Weight / (k + float64(rank))
			h := ListHit{List: l.Name, Rank: rank}
			if i < len(l.Scores) {
				h.Score = l.Scores[i]
			}
			f.Hits = append(f.Hits, h)
			if rank < best[id] {
				best[id] = rank
			}
		}
	}
	out := make([]Fused, 0, len(order))
	for _, id := range order {
		out = append(out, *byID[id])
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Score != out[j].Score {
			return out[i].Score > out[j].Score
		}
		if best[out[i].ID] != best[out[j].ID] {
			return best[out[i].ID] < best[out[j].ID]
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// FuseText fuses the lists that rank passages by their text (dense and lexical) with the
// lists that rank them by structure (graph, subject). With two text lists, they become one
// by their scores: each list's scores become standard scores (z = (s − mean) / sd over the
// list's own hits), summed with the list's weight (CombSUM of z-scores), so a list that is
// sure of a passage outweighs one that is not, where RRF with equal weights lets a weak
// list pull a strong one's best passages down. That list joins the structural lists by
// RRF at the text lists' summed weight, except for the passages the text lists are
// confident of: those whose weighted mean standard score is at least confidentZ come
// first, in the text lists' order, where the structural lists' votes cannot reorder them
// (the structural lists rank passages *about* the question's entities, which a
// single-fact question does not ask for, above the one the text states it in). The rest
// follows in RRF order, so the structural lists still bring the passages the text does
// not name. A passage's score is then the lists' total weight / (k + its fused rank).
// With one text list (the offline embedder: BM25 alone) there is no second list to agree
// with: all lists fuse by RRF. Hits record every original list.
func FuseText(k float64, text []RankedList, others ...RankedList) []Fused {
	if activeLists(text) < 2 {
		return RRF(k, append(text, others...)...) // nothing to combine
	}
	combined, hits := combineScores(text)
	lists := append([]RankedList{combined}, others...)
	fused := RRF(k, lists...)
	total := 0.0
	for _, l := range lists {
		total += l.Weight
	}
	confident := map[string]int{} // position among the confident passages
	for i, id := range combined.IDs {
		if combined.Scores[i] < confidentZ*combined.Weight {
			break
		}
		confident[id] = i
	}
	// A stable sort keeps the RRF order after the confident passages.
	sort.SliceStable(fused, func(i, j int) bool {
		pi, ci := confident[fused[i].ID]
		pj, cj := confident[fused[j].ID]
		if ci != cj {
			return ci
		}
		return ci && pi < pj
	})
	for i := range fused {
		// Replace the combined list's hit by the hits of the lists it was made of.
		rest := slices.Clone(hits[fused[i].ID])
		for _, x := range fused[i].Hits {
			if x.List != combined.Name {
				rest = append(rest, x)
			}
		}
		fused[i].Hits = rest
		fused[i].Score = total / (k + float64(i+1))
	}
	return fused
}

// FuseWalk fuses the text lists with structural lists that already carry them: a graph
// walk seeded by the text lists' passages (textSeeds) ranks a passage by its text score,
// kept by the walk's restart, and by what flows to it from the question's entities and
// from the passages that share entities with it, so the text lists voting again would
// count the text twice and pull the second hop the walk found back down. The passages
// both text lists are confident of (as in FuseText: weighted mean standard score at
// least confidentZ) come first in the text order; then the structural lists by RRF; then
// the text lists' other passages in the text order, so nothing a list returned is lost.
// With fewer than two text lists FuseWalk is FuseText. Hits record every original list.
func FuseWalk(k float64, text []RankedList, structural ...RankedList) []Fused {
	if activeLists(text) < 2 {
		return FuseText(k, text, structural...)
	}
	combined, hits := combineScores(text)
	total := combined.Weight
	for _, l := range structural {
		total += l.Weight
	}
	var order []string
	placed := map[string]bool{}
	for i, id := range combined.IDs {
		if combined.Scores[i] < confidentZ*combined.Weight {
			break
		}
		order = append(order, id)
		placed[id] = true
	}
	voted := RRF(k, structural...)
	for _, f := range voted {
		if !placed[f.ID] {
			order = append(order, f.ID)
			placed[f.ID] = true
		}
	}
	for _, id := range combined.IDs {
		if !placed[id] {
			order = append(order, id)
			placed[id] = true
		}
	}
	structHits := map[string][]ListHit{}
	for _, f := range voted {
		structHits[f.ID] = f.Hits
	}
	out := make([]Fused, len(order))
	for i, id := range order {
		h := append(slices.Clone(hits[id]), structHits[id]...)
		out[i] = Fused{ID: id, Score: total / (k + float64(i+1)), Hits: h}
	}
	return out
}

// activeLists counts the lists that weigh something and hold an id.
func activeLists(lists []RankedList) int {
	n := 0
	for _, l := range lists {
		if l.Weight != 0 && len(l.IDs) > 0 {
			n++
		}
	}
	return n
}

// confidentZ is the weighted mean standard score over the text lists from which FuseText
// keeps a passage ahead of the structural lists' votes: two standard deviations above
// each list's mean on average, the usual mark of an outlier.
const confidentZ = 2.0

// combineScores sums the weighted standard scores of lists into one list (weight: the
// lists' total), and returns each id's hits in the lists. A passage a list did not return
// gets nothing from it.
func combineScores(lists []RankedList) (RankedList, map[string][]ListHit) {
	out := RankedList{Name: "text"}
	score := map[string]float64{}
	hits := map[string][]ListHit{}
	var order []string
	for _, l := range lists {
		if l.Weight == 0 || len(l.IDs) == 0 {
			continue
		}
		out.Weight += l.Weight
		mean, sd := meanStd(l)
		seen := map[string]bool{}
		for i, id := range l.IDs {
			if seen[id] {
				continue
			}
			seen[id] = true
			norm := 0.0 // a list whose scores are all equal says nothing
			if sd > 0 {
				norm = (listScore(l, i) - mean) / sd
			}
			if _, ok := score[id]; !ok {
				order = append(order, id)
			}
			score[id] += l.Weight * norm
			hits[id] = append(hits[id], ListHit{List: l.Name, Rank: i + 1, Score: listScore(l, i)})
		}
	}
	bestRank := func(id string) int {
		r := math.MaxInt
		for _, h := range hits[id] {
			r = min(r, h.Rank)
		}
		return r
	}
	sort.SliceStable(order, func(i, j int) bool {
		if score[order[i]] != score[order[j]] {
			return score[order[i]] > score[order[j]]
		}
		if bi, bj := bestRank(order[i]), bestRank(order[j]); bi != bj {
			return bi < bj
		}
		return order[i] < order[j]
	})
	out.IDs = order
	for _, id := range order {
		out.Scores = append(out.Scores, score[id])
	}
	return out, hits
}

// meanStd returns the mean and standard deviation of l's scores.
func meanStd(l RankedList) (mean, sd float64) {
	n := float64(len(l.IDs))
	for i := range l.IDs {
		mean += listScore(l, i)
	}
	mean /= n
	for i := range l.IDs {
		d := listScore(l, i) - mean
		sd += d * d
	}
	return mean, math.Sqrt(sd / n)
}

// listScore is the score of l's i-th item: its score when the list has scores, else a
// rank-based one (1/rank).
func listScore(l RankedList, i int) float64 {
	if i < len(l.Scores) {
		return l.Scores[i]
	}
	return 1 / float64(i+1)
}
