package grapher

import (
	"context"
	"fmt"
)

// listPage is how many IDs one List call asks for while the grapher
// enumerates a collection.
const listPage = 4096

// deleteStale enumerates coll page by page and deletes the records whose ID
// keep rejects; it returns how many it deleted. Deleting a page before
// reading the next is safe: the cursor is the page's last ID, and nothing
// after it moves.
func deleteStale(ctx context.Context, vs VectorStore, coll string, keep func(id string) bool) (int, error) {
	deleted := 0
	after := ""
	for {
		ids, next, err := vs.List(ctx, coll, after, listPage)
		if err != nil {
			return deleted, fmt.Errorf("listing %s: %w", coll, err)
		}
		var stale []string
		for _, id := range ids {
			if !keep(id) {
				stale = append(stale, id)
			}
		}
		if len(stale) > 0 {
			if err := vs.Delete(ctx, coll, stale); err != nil {
				return deleted, fmt.Errorf("deleting %d stale records of %s: %w", len(stale), coll, err)
			}
			deleted += len(stale)
		}
		if next == "" {
			return deleted, nil
		}
		after = next
	}
}
