package community

import (
	"sort"
	"strconv"

	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/pkg/graphstore"
)

// Hierarchy turns per-level memberships (level 0 finest; memberships[l][i] is the
// community of snap.Keys[i] at level l) into community records: ids derived from level
// and sorted member keys, parent and child links, internal relationship counts.
// Communities smaller than minSize get no record (their members still belong to the
// larger communities above them). The result is sorted by level, id.
func Hierarchy(snap graphstore.Snapshot, memberships [][]int, minSize int) []graphstore.Community {
	type key struct{ level, id int }
	byKey := map[key]*graphstore.Community{}
	var order []key
	for level, mem := range memberships {
		groups := map[int][]string{}
		for node, c := range mem {
			groups[c] = append(groups[c], snap.Keys[node])
		}
		ids := make([]int, 0, len(groups))
		for c := range groups {
			ids = append(ids, c)
		}
		sort.Ints(ids)
		for _, c := range ids {
			members := groups[c]
			if len(members) < minSize {
				continue
			}
			sort.Strings(members)
			byKey[key{level, c}] = &graphstore.Community{ID: ID(level, members), Level: level, Members: members}
			order = append(order, key{level, c})
		}
	}
	// Parent of (level, c) is the community at level+1 holding any of its members.
	for _, k := range order {
		if k.level+1 >= len(memberships) {
			continue
		}
		com := byKey[k]
		node := sort.SearchStrings(snap.Keys, com.Members[0])
		parent, ok := byKey[key{k.level + 1, memberships[k.level+1][node]}]
		if !ok {
			continue
		}
		com.ParentID = parent.ID
		parent.ChildIDs = append(parent.ChildIDs, com.ID)
	}
	// Internal relationship counts.
	for level, mem := range memberships {
		for _, e := range snap.Edges {
			if mem[e.Source] == mem[e.Target] {
				if c, ok := byKey[key{level, mem[e.Source]}]; ok {
					c.RelationshipCount++
				}
			}
		}
	}
	out := make([]graphstore.Community, 0, len(order))
	for _, k := range order {
		c := byKey[k]
		sort.Strings(c.ChildIDs)
		out = append(out, *c)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Level != out[j].Level {
			return out[i].Level < out[j].Level
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// ID is content-derived: the same members at the same level give the same id.
func ID(level int, sortedMembers []string) string {
	return "c" + strconv.Itoa(level) + "-" + events.Hash(sortedMembers...)[:20]
}
