package graphstore

// The stores number community levels from the finest (Community.Level 0, the smallest
// communities, the order in which Leiden aggregates and Graph Data Science lists its
// intermediate communities). Everything a user reads numbers them from the coarsest:
// level 0 is the root, the fewest and largest communities, as Microsoft GraphRAG's
// tables and the GraphRAG paper (C0 the root-level communities) do. The query API, the
// console, the MCP tools and every export convert with the two functions below (ADR
// 0060); a community's id keeps the stored level it was created at.

// ShownLevel converts a level between the two numberings in a hierarchy of levels
// levels (Stats.Levels): a stored level to the one users read, or back. It is its own
// inverse.
func ShownLevel(level, levels int) int { return levels - 1 - level }

// ShownCommunities is an entity's community id per level (Entity.Communities, indexed by
// stored level) indexed by the level users read: ids[i] is the community at level i,
// 0 the coarsest; "" where the entity is in no community at that level. The result
// has levels entries (none when the hierarchy or ids is empty).
func ShownCommunities(ids []string, levels int) []string {
	if levels <= 0 || len(ids) == 0 {
		return nil
	}
	out := make([]string, levels)
	for stored, id := range ids {
		if shown := ShownLevel(stored, levels); shown >= 0 && shown < levels {
			out[shown] = id
		}
	}
	return out
}
