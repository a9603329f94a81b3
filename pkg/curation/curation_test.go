package curation

import (
	"errors"
	"maps"
	"testing"

	"github.com/graphrag/graphrag/pkg/graphstore"
)

func entry(id string, op Op) Entry { return Entry{ID: id, Op: op} }

func holmes() graphstore.ChunkExtraction {
	return graphstore.ChunkExtraction{ChunkID: "c1", DocumentID: "d1",
		Entities: []graphstore.EntityMention{
			{Key: "holmes", Name: "Holmes", Type: "person", Description: "a detective"},
			{Key: "sherlock holmes", Name: "Sherlock Holmes", Type: "character"},
			{Key: "watson", Name: "Watson", Type: "person"},
		},
		Relations: []graphstore.RelationMention{
			{SourceKey: "holmes", TargetKey: "watson", Type: "friend"},
			{SourceKey: "holmes", TargetKey: "sherlock holmes"},
			{SourceKey: "watson", TargetKey: "london"},
			{SourceKey: "watson", TargetKey: "baker street"},
		}}
}

func keys(ce graphstore.ChunkExtraction) (ents []string, rels [][2]string) {
	for _, m := range ce.Entities {
		ents = append(ents, m.Key)
	}
	for _, r := range ce.Relations {
		rels = append(rels, [2]string{r.SourceKey, r.TargetKey})
	}
	return ents, rels
}

func TestApplyMergeRenameTypePinDelete(t *testing.T) {
	log := []Entry{
		entry("1", Op{Action: Merge, Entities: []string{"Holmes", "Mr. Holmes"}, Into: "Sherlock Holmes"}),
		entry("2", Op{Action: SetType, Entity: "Sherlock Holmes", Type: "detective"}),
		entry("3", Op{Action: Pin, Entity: "Baker Street", Description: "a street"}),
		entry("4", Op{Action: DeleteRelationship, Source: "London", Target: "Watson"}),
		entry("5", Op{Action: Rename, Entity: "Watson", Name: "Dr. Watson"}),
	}
	s := Fold(log, nil)
	got := s.Apply(holmes())
	ents, rels := keys(got)
	wantEnts := []string{"sherlock holmes", "sherlock holmes", "dr watson"}
	if len(ents) != 4 || ents[0] != wantEnts[0] || ents[1] != wantEnts[1] || ents[2] != wantEnts[2] || ents[3] != "baker street" {
		t.Fatalf("entity keys = %q, want %q then baker street (implied, pinned)", ents, wantEnts)
	}
	if len(rels) != 2 || rels[0] != [2]string{"sherlock holmes", "dr watson"} || rels[1] != [2]string{"dr watson", "baker street"} {
		t.Errorf("relations = %q, want the friendship and the street (self loop and deleted pair dropped)", rels)
	}
	for _, m := range got.Entities[:2] {
		if m.Type != "detective" {
			t.Errorf("merged mention %q has type %q, want detective", m.Name, m.Type)
		}
	}
	if got.Entities[2].Name != "Dr. Watson" {
		t.Errorf("renamed mention name = %q", got.Entities[2].Name)
	}
	if got.Entities[3].Description != "a street" {
		t.Errorf("pinned implied entity = %+v", got.Entities[3])
	}
	if Equal(got, holmes()) {
		t.Error("Apply changed nothing")
	}
	if !Equal(Fold(nil, nil).Apply(holmes()), holmes()) {
		t.Error("the empty log changes an extraction")
	}
}

func TestUndoAndSplit(t *testing.T) {
	merge := entry("1", Op{Action: Merge, Entities: []string{"Holmes"}, Into: "Sherlock Holmes"})
	for name, log := range map[string][]Entry{
		"undo":  {merge, entry("2", Op{Action: Undo, Undoes: "1"})},
		"split": {merge, entry("2", Op{Action: Split, Entity: "Holmes"})},
	} {
		t.Run(name, func(t *testing.T) {
			ents, _ := keys(Fold(log, nil).Apply(holmes()))
			if ents[0] != "holmes" {
				t.Errorf("after %s, Holmes is %q, want holmes again", name, ents[0])
			}
		})
	}
	// Chains: a key merged into one merged on follows it; a cycle cannot form.
	s := Fold([]Entry{merge, entry("2", Op{Action: Merge, Entities: []string{"Sherlock Holmes"}, Into: "Watson"}),
		entry("3", Op{Action: Merge, Entities: []string{"Watson"}, Into: "Holmes"})}, nil)
	if a, b := s.Resolve("holmes"), s.Resolve("watson"); a != b {
		t.Errorf("resolve holmes = %q, watson = %q; want one entity", a, b)
	}
}

func TestStatus(t *testing.T) {
	log := []Entry{
		entry("m", Op{Action: Merge, Entities: []string{"Holmes"}, Into: "Sherlock Holmes"}),
		entry("d", Op{Action: DeleteRelationship, Source: "Watson", Target: "London"}),
		entry("a", Op{Action: AddRelationship, Source: "Watson", Target: "Mary"}),
	}
	s := Fold(log, nil)
	st := s.Status([]graphstore.ChunkExtraction{holmes()})
	for id, want := range map[string]bool{"m": true, "d": true, "a": true} {
		if st[id].Active != want {
			t.Errorf("status %s = %+v, want active %v", id, st[id], want)
		}
	}
	// The passages naming "Sherlock Holmes" itself are gone: the merge acts on nothing.
	only := graphstore.ChunkExtraction{ChunkID: "c2", Entities: []graphstore.EntityMention{{Key: "holmes", Name: "Holmes"}}}
	st = s.Status([]graphstore.ChunkExtraction{only})
	if st["m"].Active || st["m"].Reason == "" {
		t.Errorf("merge with one side gone = %+v, want inactive with a reason", st["m"])
	}
	if st["d"].Active {
		t.Errorf("deletion of a pair no passage states = %+v, want inactive", st["d"])
	}
	// The graph is curated by the active operations alone: Holmes is itself again.
	ents, _ := keys(Fold(log, Inactive(st)).Apply(only))
	if ents[0] != "holmes" {
		t.Errorf("with the merge inactive, Holmes is %q", ents[0])
	}
}

func TestValidate(t *testing.T) {
	for _, op := range []Op{
		{},
		{Action: "explode"},
		{Action: Merge, Entities: []string{"Holmes"}, Into: "holmes"},
		{Action: Merge, Into: "Holmes"},
		{Action: Rename, Entity: "Holmes"},
		{Action: SetType, Entity: "Holmes"},
		{Action: DeleteRelationship, Source: "A", Target: "a"},
		{Action: AddRelationship, Source: "A", Target: "B", Strength: -1},
		{Action: Pin, Entity: "!!!", Description: "x"},
	} {
		if err := op.Validate(); !errors.Is(err, ErrInvalid) {
			t.Errorf("Validate(%+v) = %v, want ErrInvalid", op, err)
		}
	}
	if err := (Op{Action: Merge, Entities: []string{"Holmes", "Mr. Holmes"}, Into: "Sherlock Holmes"}).Validate(); err != nil {
		t.Errorf("a good merge: %v", err)
	}
}

// TestAliases: the query service resolves a name curation folded away through
// Aliases, so every key merged or renamed away maps to the key at the end of its chain
// and no key the graph holds is an alias.
func TestAliases(t *testing.T) {
	mergeAB := entry("1", Op{Action: Merge, Entities: []string{"A"}, Into: "B"})
	for _, tc := range []struct {
		name string
		log  []Entry
		want map[string]string
	}{
		{"merge", []Entry{mergeAB}, map[string]string{"a": "b"}},
		{"rename", []Entry{entry("1", Op{Action: Rename, Entity: "A", Name: "C"})}, map[string]string{"a": "c"}},
		{"merge then rename", []Entry{mergeAB, entry("2", Op{Action: Rename, Entity: "B", Name: "C"})},
			map[string]string{"a": "c", "b": "c"}},
		{"renamed to the name merged into it", []Entry{mergeAB, entry("2", Op{Action: Rename, Entity: "B", Name: "A"})},
			map[string]string{"b": "a"}},
		{"split", []Entry{mergeAB, entry("2", Op{Action: Split, Entity: "A"})}, map[string]string{}},
		{"undone", []Entry{mergeAB, entry("2", Op{Action: Undo, Undoes: "1"})}, map[string]string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Fold(tc.log, nil).Aliases(); !maps.Equal(got, tc.want) {
				t.Errorf("aliases = %v, want %v", got, tc.want)
			}
		})
	}
	if got := (*State)(nil).Aliases(); len(got) != 0 {
		t.Errorf("a corpus without a log has aliases %v", got)
	}
}
