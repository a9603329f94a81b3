package export

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
)

// File names of the jsonl format (and of the graphml format's side files).
const (
	EntitiesJSONL      = "entities.jsonl"
	RelationshipsJSONL = "relationships.jsonl"
	CommunitiesJSONL   = "communities.jsonl"
	ChunksJSONL        = "chunks.jsonl"
)

// Lines of the jsonl files.
type (
	entityLine struct {
		Key          string   `json:"key"`
		Name         string   `json:"name"`
		Type         string   `json:"type"`
		Description  string   `json:"description"`
		Descriptions []string `json:"descriptions"`
		Mentions     int      `json:"mentions"`
		PageRank     float64  `json:"pagerank"`
		Degree       int      `json:"degree"`
		// Communities holds the community id per level (0 the coarsest); "" where none.
		Communities []string `json:"communities"`
		ChunkIDs    []string `json:"chunk_ids"`
	}
	relationshipLine struct {
		ID           string   `json:"id"`
		Source       string   `json:"source"`
		Target       string   `json:"target"`
		Type         string   `json:"type"`
		Description  string   `json:"description"`
		Descriptions []string `json:"descriptions"`
		Weight       float64  `json:"weight"`
		ChunkIDs     []string `json:"chunk_ids"`
	}
	communityLine struct {
		ID                string   `json:"id"`
		Level             int      `json:"level"`
		Parent            string   `json:"parent"`
		Children          []string `json:"children"`
		Members           []string `json:"members"`
		RelationshipCount int      `json:"relationship_count"`
		Report            *report  `json:"report"`
	}
	chunkLine struct {
		ID         string   `json:"id"`
		DocumentID string   `json:"document_id"`
		Title      string   `json:"title"`
		Section    string   `json:"section"`
		Position   int      `json:"position"`
		Text       string   `json:"text"`
		Entities   []string `json:"entities"`
	}
)

// jsonlWriter writes the jsonl format; graphmlWriter uses it for its side files.
type jsonlWriter struct {
	sink    Sink
	written []string
	chunkW  io.WriteCloser
	chunkB  *bufio.Writer
}

func (w *jsonlWriter) graph(m *model) error {
	if err := w.entities(m); err != nil {
		return err
	}
	if err := w.relationships(m); err != nil {
		return err
	}
	return w.communities(m)
}

func (w *jsonlWriter) entities(m *model) error {
	return w.file(EntitiesJSONL, func(enc *json.Encoder) error {
		for _, e := range m.entities {
			if err := enc.Encode(entityLine{Key: e.Key, Name: e.Name, Type: e.Type, Description: e.Description, Descriptions: nonNil(e.Descriptions),
				Mentions: e.MentionCount, PageRank: e.PageRank, Degree: e.Degree, Communities: nonNil(e.Communities), ChunkIDs: nonNil(e.ChunkIDs)}); err != nil {
				return err
			}
		}
		return nil
	})
}

func (w *jsonlWriter) relationships(m *model) error {
	return w.file(RelationshipsJSONL, func(enc *json.Encoder) error {
		for _, r := range m.rels {
			if err := enc.Encode(relationshipLine{ID: r.ID, Source: r.SourceKey, Target: r.TargetKey, Type: r.Type, Description: r.Description,
				Descriptions: nonNil(r.Descriptions), Weight: r.Weight, ChunkIDs: nonNil(r.ChunkIDs)}); err != nil {
				return err
			}
		}
		return nil
	})
}

func (w *jsonlWriter) communities(m *model) error {
	return w.file(CommunitiesJSONL, func(enc *json.Encoder) error {
		for _, c := range m.comms {
			if err := enc.Encode(communityLine{ID: c.ID, Level: c.Level, Parent: c.ParentID, Children: nonNil(c.ChildIDs),
				Members: nonNil(c.Members), RelationshipCount: c.RelationshipCount, Report: c.report}); err != nil {
				return err
			}
		}
		return nil
	})
}

// file writes one whole file through fill.
func (w *jsonlWriter) file(name string, fill func(*json.Encoder) error) error {
	f, err := w.sink.Create(name)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(f)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	if err := fill(enc); err != nil {
		_ = f.Close()
		return fmt.Errorf("writing %s: %w", name, err)
	}
	if err := bw.Flush(); err != nil {
		_ = f.Close()
		return fmt.Errorf("writing %s: %w", name, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", name, err)
	}
	w.written = append(w.written, name)
	return nil
}

func (w *jsonlWriter) chunks(cs []chunk) error {
	if w.chunkW == nil {
		f, err := w.sink.Create(ChunksJSONL)
		if err != nil {
			return err
		}
		w.chunkW, w.chunkB = f, bufio.NewWriter(f)
	}
	enc := json.NewEncoder(w.chunkB)
	enc.SetEscapeHTML(false)
	for _, c := range cs {
		if err := enc.Encode(chunkLine{ID: c.ID, DocumentID: c.DocumentID, Title: c.Title, Section: c.Section, Position: c.Position,
			Text: c.Text, Entities: nonNil(c.EntityKeys)}); err != nil {
			return fmt.Errorf("writing %s: %w", ChunksJSONL, err)
		}
	}
	return nil
}

func (w *jsonlWriter) close() error {
	if w.chunkW == nil {
		// A corpus without chunks still gets the file, empty.
		if err := w.chunks(nil); err != nil {
			return err
		}
	}
	if err := w.chunkB.Flush(); err != nil {
		return fmt.Errorf("writing %s: %w", ChunksJSONL, err)
	}
	if err := w.chunkW.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", ChunksJSONL, err)
	}
	w.written = append(w.written, ChunksJSONL)
	return nil
}

func (w *jsonlWriter) files() []string { return w.written }

// nonNil makes a nil list an empty one, so every line has the same shape.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
