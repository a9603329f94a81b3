package engine

import "sort"

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
