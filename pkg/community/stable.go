package community

import (
	"slices"
	"sort"

	"github.com/graphrag/graphrag/pkg/graphstore"
)

// DefaultMaxChange is the share of a community's membership that may change before it
// is a new community (new id, new report): 1 − Jaccard(old members, new members), and
// the change of its size since its report was written.
const DefaultMaxChange = 0.2

// TolerantMembers is the change, in members, that is always tolerated (when maxChange
// is above 0), whatever share of the community it is. A share alone tolerates nothing
// below 1/maxChange members (5 at 0.2): every entity joining or leaving a community of
// 3 or 4 cost a new report, and those are the commonest communities. One entity more
// or less is the smallest change there is; the report still describes all the others.
const TolerantMembers = 1

// Stabilize gives each community of next the id of the community of prev at the same
// level that it barely differs from, so that its report stays (a report costs a model
// call; a community that gained or lost a few members of many is still described by
// it). A community of next keeps the id of a community of prev when
//
//   - the members in one and not the other are at most maxChange of the members in
//     either (their Jaccard similarity is at least 1 − maxChange), and
//   - reported, when it knows the member count of the report written for that id,
//     says the size changed since by at most maxChange of the larger of the two
//     counts (the same share, for a pure growth or shrink): a community that keeps
//     growing by small steps is renamed (and re-reported) once the steps add up;
//
// a change of TolerantMembers passes both tests whatever its share. Other communities
// keep their content-derived ids. Parent and child links follow the renaming. Each old
// id goes to one new community at most, the most similar first. The result is sorted
// by level, then id, as Hierarchy's is.
func Stabilize(prev, next []graphstore.Community, reported map[string]int, maxChange float64) []graphstore.Community {
	if len(prev) == 0 || len(next) == 0 || maxChange <= 0 {
		return next
	}
	rename := matchCommunities(prev, next, reported, maxChange)
	if len(rename) == 0 {
		return next
	}
	out := make([]graphstore.Community, len(next))
	for i, c := range next {
		c.ID = renamed(rename, c.ID)
		c.ParentID = renamed(rename, c.ParentID)
		if len(c.ChildIDs) > 0 {
			kids := make([]string, len(c.ChildIDs))
			for j, k := range c.ChildIDs {
				kids[j] = renamed(rename, k)
			}
			sort.Strings(kids)
			c.ChildIDs = kids
		}
		out[i] = c
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Level != out[j].Level {
			return out[i].Level < out[j].Level
		}
		return out[i].ID < out[j].ID
	})
	return out
}

func renamed(rename map[string]string, id string) string {
	if to, ok := rename[id]; ok {
		return to
	}
	return id
}

// match is a candidate pairing of a new community with an old one.
type match struct {
	next, prev int // indexes
	jaccard    float64
}

// matchCommunities returns new id -> old id for the communities to keep.
func matchCommunities(prev, next []graphstore.Community, reported map[string]int, maxChange float64) map[string]string {
	// Where each entity was at each level before.
	type slot struct {
		level int
		key   string
	}
	owner := make(map[slot]int, len(prev))
	for i, c := range prev {
		for _, k := range c.Members {
			owner[slot{c.Level, k}] = i
		}
	}
	nextIDs := make(map[string]bool, len(next))
	for _, c := range next {
		nextIDs[c.ID] = true
	}
	var cands []match
	overlap := map[int]int{}
	for i, c := range next {
		clear(overlap)
		for _, k := range c.Members {
			if j, ok := owner[slot{c.Level, k}]; ok {
				overlap[j]++
			}
		}
		for j, ov := range overlap {
			p := prev[j]
			union := len(p.Members) + len(c.Members) - ov
			if !SmallChange(union-ov, union, maxChange) || !sizeKept(reported, p.ID, len(c.Members), maxChange) {
				continue
			}
			// An old id that a different new community has as its own content id
			// would be given twice.
			if p.ID != c.ID && nextIDs[p.ID] {
				continue
			}
			cands = append(cands, match{next: i, prev: j, jaccard: float64(ov) / float64(union)})
		}
	}
	// Best pairs first; ties by index, so the result does not depend on map order.
	slices.SortFunc(cands, func(a, b match) int {
		switch {
		case a.jaccard != b.jaccard:
			if a.jaccard > b.jaccard {
				return -1
			}
			return 1
		case a.next != b.next:
			return a.next - b.next
		}
		return a.prev - b.prev
	})
	rename := map[string]string{}
	usedNext, usedPrev := map[int]bool{}, map[int]bool{}
	for _, m := range cands {
		if usedNext[m.next] || usedPrev[m.prev] {
			continue
		}
		usedNext[m.next], usedPrev[m.prev] = true, true
		if from, to := next[m.next].ID, prev[m.prev].ID; from != to {
			rename[from] = to
		}
	}
	return rename
}

// sizeKept reports whether a community of n members may keep id given the size its
// report was written for (unknown: yes).
func sizeKept(reported map[string]int, id string, n int, maxChange float64) bool {
	r, ok := reported[id]
	if !ok || r <= 0 {
		return true
	}
	d := n - r
	if d < 0 {
		d = -d
	}
	return SmallChange(d, max(n, r), maxChange)
}

// SmallChange reports whether changed members of size are few enough for a community
// to keep its id (and report) at maxChange.
func SmallChange(changed, size int, maxChange float64) bool {
	return changed <= TolerantMembers || float64(changed) <= maxChange*float64(size)
}
