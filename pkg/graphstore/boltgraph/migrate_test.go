package boltgraph

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/graphrag/graphrag/pkg/graphstore"
)

// fixtureCorpora are the corpora buildFixture writes.
var fixtureCorpora = []string{"alpha", "beta"}

// buildFixture writes a small graph that exercises every record kind: replaced and
// removed chunks, several names, types and descriptions per entity, summaries
// (current and stale), PageRank and two community levels.
func buildFixture(ctx context.Context, s *Store) error {
	for _, corpus := range fixtureCorpora {
		batch := []graphstore.ChunkExtraction{
			{ChunkID: "c1", DocumentID: "d1", Entities: []graphstore.EntityMention{
				{Key: "ada", Name: "Ada", Type: "person", Description: "a mathematician"},
				{Key: "ada", Name: "Ada Lovelace", Type: "person", Description: "wrote the first program"},
				{Key: "engine", Name: "Analytical Engine", Type: "machine", Description: "a mechanical computer"},
			}, Relations: []graphstore.RelationMention{
				{SourceKey: "ada", TargetKey: "engine", Type: "programmed", Description: "wrote notes on", Strength: 8},
				{SourceKey: "engine", TargetKey: "babbage", Type: "designed by", Strength: 0},
			}},
			{ChunkID: "c2", DocumentID: "d1", Entities: []graphstore.EntityMention{
				{Key: "babbage", Name: "Charles Babbage", Type: "person", Description: "an inventor"},
				{Key: "ada", Name: "Ada", Type: "writer", Description: "a mathematician"},
			}, Relations: []graphstore.RelationMention{
				{SourceKey: "babbage", TargetKey: "ada", Type: "corresponded", Description: "letters", Strength: 3},
				{SourceKey: "ada", TargetKey: "babbage", Type: "corresponded", Description: "replies", Strength: 2.5},
			}},
			{ChunkID: "c3", DocumentID: "d2", Entities: []graphstore.EntityMention{
				{Key: "london", Name: "London", Type: "place", Description: "a city"},
			}, Relations: []graphstore.RelationMention{
				{SourceKey: "babbage", TargetKey: "london", Type: "lived in", Description: "lived in " + corpus},
			}},
			{ChunkID: "c4", DocumentID: "d2", Entities: []graphstore.EntityMention{
				{Key: "gone", Name: "Gone", Description: "removed again"},
			}},
		}
		if err := s.Merge(ctx, corpus, batch); err != nil {
			return err
		}
		replaced := batch[2]
		replaced.Entities = append(replaced.Entities, graphstore.EntityMention{Key: "thames", Name: "Thames", Type: "river"})
		replaced.Relations = append(replaced.Relations, graphstore.RelationMention{SourceKey: "london", TargetKey: "thames", Strength: 4})
		if err := s.Merge(ctx, corpus, []graphstore.ChunkExtraction{replaced}); err != nil {
			return err
		}
		if err := s.RemoveChunks(ctx, corpus, []string{"c4"}); err != nil {
			return err
		}
		if err := s.SetDescriptions(ctx, corpus, map[string]string{"ada": "Ada summarized", "london": "London summarized"}); err != nil {
			return err
		}
		// A new description makes london's summary stale.
		if err := s.Merge(ctx, corpus, []graphstore.ChunkExtraction{{ChunkID: "c5", Entities: []graphstore.EntityMention{
			{Key: "london", Name: "London", Description: "the capital"},
		}}}); err != nil {
			return err
		}
		if err := s.SetPageRank(ctx, corpus, map[string]float64{"ada": 0.4, "babbage": 0.3, "engine": 0.2, "london": 0.05, "thames": 0.05}); err != nil {
			return err
		}
		if err := s.ReplaceCommunities(ctx, corpus, []graphstore.Community{
			{ID: "top", Level: 1, Members: []string{"ada", "babbage", "engine", "london", "thames"}},
			{ID: "people", Level: 0, ParentID: "top", Members: []string{"babbage", "ada"}},
			{ID: "places", Level: 0, ParentID: "top", Members: []string{"london", "thames"}},
		}); err != nil {
			return err
		}
	}
	return nil
}

// storeDump is everything the public API reads back from a corpus.
type storeDump struct {
	Stats         graphstore.Stats
	Snapshot      graphstore.Snapshot
	Entities      []graphstore.Entity
	Relationships []graphstore.Relationship
	Among         []graphstore.Relationship
	Neighbors     []graphstore.Neighbor
	Communities   []graphstore.Community
	ChunkEntities map[string][]string
}

func dumpCorpus(ctx context.Context, s *Store, corpus string) (storeDump, error) {
	var d storeDump
	var err error
	if d.Stats, err = s.Stats(ctx, corpus); err != nil {
		return d, err
	}
	if d.Snapshot, err = s.Snapshot(ctx, corpus); err != nil {
		return d, err
	}
	keys := d.Snapshot.Keys
	if d.Entities, err = s.Entities(ctx, corpus, keys); err != nil {
		return d, err
	}
	if d.Relationships, err = s.RelationshipsOf(ctx, corpus, keys, 0); err != nil {
		return d, err
	}
	if d.Among, err = s.RelationshipsAmong(ctx, corpus, keys[:len(keys)/2+1]); err != nil {
		return d, err
	}
	if d.Neighbors, err = s.Neighborhood(ctx, corpus, keys[:1], 3, 0); err != nil {
		return d, err
	}
	if d.Communities, err = s.Communities(ctx, corpus, -1); err != nil {
		return d, err
	}
	d.ChunkEntities, err = s.ChunkEntities(ctx, corpus, []string{"c1", "c2", "c3", "c4", "c5"})
	return d, err
}

// openFixture opens a new store holding buildFixture's corpus, closed with the test.
func openFixture(t *testing.T) *Store {
	t.Helper()
	s, err := Open(filepath.Join(t.TempDir(), "fixture.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if err := buildFixture(t.Context(), s); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestWriteV1Fixture writes a store file with the layout of this build. It wrote
// testdata/v1.db (gzipped) once at commit fc2e472, layout version 1, and is skipped
// unless asked for.
func TestWriteV1Fixture(t *testing.T) {
	out := os.Getenv("BOLTGRAPH_WRITE_FIXTURE")
	if out == "" {
		t.Skip("set BOLTGRAPH_WRITE_FIXTURE to a file path to write the fixture")
	}
	s := openFixture(t)
	if err := s.Check(t.Context()); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// A compacted copy keeps the fixture small.
	if err := s.s.db.View(func(tx *bolt.Tx) error { _, err := tx.WriteTo(f); return err }); err != nil {
		t.Fatal(err)
	}
}

// TestWriteV1Dump writes what the fixture reads back as JSON, the expected result
// of every layout; it ran once at commit fc2e472 and is skipped unless asked for.
func TestWriteV1Dump(t *testing.T) {
	out := os.Getenv("BOLTGRAPH_WRITE_DUMP")
	if out == "" {
		t.Skip("set BOLTGRAPH_WRITE_DUMP to a file path to write the dump")
	}
	s := openFixture(t)
	b, err := dumpJSON(t.Context(), s)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func dumpJSON(ctx context.Context, s *Store) ([]byte, error) {
	all := map[string]storeDump{}
	for _, c := range fixtureCorpora {
		d, err := dumpCorpus(ctx, s, c)
		if err != nil {
			return nil, err
		}
		all[c] = d
	}
	return json.MarshalIndent(all, "", "  ")
}

// openFixtureV1 copies the layout 1 fixture to a temporary file.
func openFixtureV1(t *testing.T) string {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "v1.db.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "v1.db")
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func formatOf(t *testing.T, s *Store) string {
	t.Helper()
	var v string
	if err := s.s.db.View(func(tx *bolt.Tx) error {
		v = string(tx.Bucket(bucketInfo).Get(keyFormat))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestMigrateV1 opens a file written by layout 1 (JSON values): Open must migrate
// it, and every read must return what layout 1 returned (testdata/v1-dump.json,
// written by the layout 1 code from the same fixture; its Neighbors lost their
// Descriptions when Neighborhood stopped reading them), as must a fresh store.
func TestMigrateV1(t *testing.T) {
	want, err := os.ReadFile(filepath.Join("testdata", "v1-dump.json"))
	if err != nil {
		t.Fatal(err)
	}
	path := openFixtureV1(t)
	s, err := Open(path)
	if err != nil {
		t.Fatalf("Open of a layout 1 file: %v", err)
	}
	if got := formatOf(t, s); got != formatVersion {
		t.Errorf("layout after migration = %q, want %q", got, formatVersion)
	}
	if err := s.Check(t.Context()); err != nil {
		t.Errorf("Check after migration: %v", err)
	}
	got, err := dumpJSON(t.Context(), s)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("migrated store reads back differently from layout 1:\n%s", got)
	}
	// Writes keep working on migrated records and reopening does not migrate again.
	if err := s.Merge(t.Context(), "alpha", []graphstore.ChunkExtraction{{ChunkID: "c6", Entities: []graphstore.EntityMention{
		{Key: "ada", Name: "Ada", Type: "person", Description: "a countess"}}}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if s, err = Open(path); err != nil {
		t.Fatalf("reopening the migrated file: %v", err)
	}
	defer s.Close()
	if err := s.Check(t.Context()); err != nil {
		t.Errorf("Check after a write to the migrated file: %v", err)
	}

	fresh := openTemp(t)
	if err := buildFixture(t.Context(), fresh); err != nil {
		t.Fatal(err)
	}
	if got, err = dumpJSON(t.Context(), fresh); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("layout %s store reads back differently from layout 1:\n%s", formatVersion, got)
	}
}
