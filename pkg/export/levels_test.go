package export

import (
	"encoding/xml"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestLevelsAgree: a community has one level in every format, 0 the root (the coarsest),
// and an entity's community at a level is a community of that level.
func TestLevelsAgree(t *testing.T) {
	s := fixture(t)
	jdir, _ := export(t, s, JSONL)
	gdir, _ := export(t, s, GraphML)
	pdir, _ := export(t, s, Parquet)

	level := map[string]int{}
	for _, c := range readLines[communityLine](t, filepath.Join(jdir, CommunitiesJSONL)) {
		level[c.ID] = c.Level
		if (c.Parent == "") != (c.Level == 0) {
			t.Errorf("JSON Lines community %s at level %d with parent %q: want level 0 exactly at the root", c.ID, c.Level, c.Parent)
		}
	}
	if len(level) != 3 {
		t.Fatalf("JSON Lines communities %v, want 3", level)
	}
	// The GraphML export carries a copy of communities.jsonl.
	for _, c := range readLines[communityLine](t, filepath.Join(gdir, CommunitiesJSONL)) {
		if level[c.ID] != c.Level {
			t.Errorf("community %s: level %d beside the GraphML, %d in JSON Lines", c.ID, c.Level, level[c.ID])
		}
	}
	for _, c := range readParquet[pqCommunity](t, filepath.Join(pdir, CommunitiesParquet)) {
		if int(c.Level) != level[c.ID] {
			t.Errorf("community %s: level %d in Parquet, %d in JSON Lines", c.ID, c.Level, level[c.ID])
		}
	}
	for _, r := range readParquet[pqReport](t, filepath.Join(pdir, CommunityReportsParquet)) {
		if int(r.Level) != level[r.ID] {
			t.Errorf("report %s: level %d in Parquet, %d in JSON Lines", r.ID, r.Level, level[r.ID])
		}
	}

	perLevel := map[string][]string{} // entity key -> community per level, from JSON Lines
	for _, e := range readLines[entityLine](t, filepath.Join(jdir, EntitiesJSONL)) {
		perLevel[e.Key] = e.Communities
		for l, c := range e.Communities {
			if c != "" && level[c] != l {
				t.Errorf("entity %s: community %s listed at level %d, which is at level %d", e.Key, c, l, level[c])
			}
		}
	}
	b, err := os.ReadFile(filepath.Join(gdir, GraphMLFile))
	if err != nil {
		t.Fatal(err)
	}
	var doc graphmlDoc
	if err := xml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	for _, n := range doc.Graph.Nodes {
		for _, d := range n.Data {
			l, ok := strings.CutPrefix(d.Key, "community_")
			if !ok {
				continue
			}
			i, _ := strconv.Atoi(l)
			if i >= len(perLevel[n.ID]) || perLevel[n.ID][i] != d.Value {
				t.Errorf("node %s: %s = %s in GraphML, JSON Lines has %v", n.ID, d.Key, d.Value, perLevel[n.ID])
			}
		}
	}
}
