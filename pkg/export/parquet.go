package export

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/graphrag/graphrag/pkg/chunking"
)

// File names of the parquet format: Microsoft GraphRAG's output tables.
const (
	EntitiesParquet         = "entities.parquet"
	RelationshipsParquet    = "relationships.parquet"
	CommunitiesParquet      = "communities.parquet"
	CommunityReportsParquet = "community_reports.parquet"
	TextUnitsParquet        = "text_units.parquet"
)

// Rows of the parquet tables. Column names, order and types follow Microsoft
// GraphRAG's *_FINAL_COLUMNS (graphrag/data_model/schemas.py); columns after those are
// this platform's own, which its loaders ignore.
type (
	pqEntity struct {
		ID              string   `parquet:"id"`
		HumanReadableID int64    `parquet:"human_readable_id"`
		Title           string   `parquet:"title"`
		Type            string   `parquet:"type"`
		Description     string   `parquet:"description"`
		TextUnitIDs     []string `parquet:"text_unit_ids,list"`
		Frequency       int64    `parquet:"frequency"`
		Degree          int64    `parquet:"degree"`
		PageRank        float64  `parquet:"pagerank"`
	}
	pqRelationship struct {
		ID              string   `parquet:"id"`
		HumanReadableID int64    `parquet:"human_readable_id"`
		Source          string   `parquet:"source"`
		Target          string   `parquet:"target"`
		Description     string   `parquet:"description"`
		Weight          float64  `parquet:"weight"`
		CombinedDegree  int64    `parquet:"combined_degree"`
		TextUnitIDs     []string `parquet:"text_unit_ids,list"`
		Type            string   `parquet:"type"`
	}
	pqCommunity struct {
		ID              string   `parquet:"id"`
		HumanReadableID int64    `parquet:"human_readable_id"`
		Community       int64    `parquet:"community"`
		Level           int64    `parquet:"level"`
		Parent          int64    `parquet:"parent"`
		Children        []int64  `parquet:"children,list"`
		Title           string   `parquet:"title"`
		EntityIDs       []string `parquet:"entity_ids,list"`
		RelationshipIDs []string `parquet:"relationship_ids,list"`
		TextUnitIDs     []string `parquet:"text_unit_ids,list"`
		Period          string   `parquet:"period"`
		Size            int64    `parquet:"size"`
	}
	pqFinding struct {
		Explanation string `parquet:"explanation"`
		Summary     string `parquet:"summary"`
	}
	pqReport struct {
		ID                string      `parquet:"id"`
		HumanReadableID   int64       `parquet:"human_readable_id"`
		Community         int64       `parquet:"community"`
		Level             int64       `parquet:"level"`
		Parent            int64       `parquet:"parent"`
		Children          []int64     `parquet:"children,list"`
		Title             string      `parquet:"title"`
		Summary           string      `parquet:"summary"`
		FullContent       string      `parquet:"full_content"`
		Rank              float64     `parquet:"rank"`
		RatingExplanation string      `parquet:"rating_explanation"`
		Findings          []pqFinding `parquet:"findings,list"`
		FullContentJSON   string      `parquet:"full_content_json"`
		Period            string      `parquet:"period"`
		Size              int64       `parquet:"size"`
	}
	pqTextUnit struct {
		ID              string `parquet:"id"`
		HumanReadableID int64  `parquet:"human_readable_id"`
		Text            string `parquet:"text"`
		NTokens         int64  `parquet:"n_tokens"`
		// DocumentID is GraphRAG 3's column, DocumentIDs GraphRAG 2's.
		DocumentID      string   `parquet:"document_id"`
		DocumentIDs     []string `parquet:"document_ids,list"`
		EntityIDs       []string `parquet:"entity_ids,list"`
		RelationshipIDs []string `parquet:"relationship_ids,list"`
		CovariateIDs    []string `parquet:"covariate_ids,list"`
	}
)

type parquetWriter struct {
	sink    Sink
	period  string
	written []string
	units   *parquet.GenericWriter[pqTextUnit]
	unitsF  io.WriteCloser
}

func newParquetWriter(sink Sink) *parquetWriter {
	return &parquetWriter{sink: sink, period: time.Now().UTC().Format(time.DateOnly)}
}

// table writes a whole table.
func table[T any](w *parquetWriter, name string, rows []T) error {
	f, err := w.sink.Create(name)
	if err != nil {
		return err
	}
	pw := parquet.NewGenericWriter[T](f, parquet.Compression(&parquet.Snappy))
	if _, err := pw.Write(rows); err != nil {
		_ = f.Close()
		return fmt.Errorf("writing %s: %w", name, err)
	}
	if err := pw.Close(); err != nil {
		_ = f.Close()
		return fmt.Errorf("writing %s: %w", name, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", name, err)
	}
	w.written = append(w.written, name)
	return nil
}

func (w *parquetWriter) graph(m *model) error {
	ents := make([]pqEntity, len(m.entities))
	for i, e := range m.entities {
		ents[i] = pqEntity{ID: e.Key, HumanReadableID: int64(e.HID), Title: e.Title, Type: e.Type, Description: e.Description,
			TextUnitIDs: nonNil(e.ChunkIDs), Frequency: int64(len(e.ChunkIDs)), Degree: int64(e.Degree), PageRank: e.PageRank}
	}
	if err := table(w, EntitiesParquet, ents); err != nil {
		return err
	}
	rels := make([]pqRelationship, len(m.rels))
	for i, r := range m.rels {
		rels[i] = pqRelationship{ID: r.ID, HumanReadableID: int64(r.HID), Source: m.byKey[r.SourceKey].Title, Target: m.byKey[r.TargetKey].Title,
			Description: r.Description, Weight: r.Weight, CombinedDegree: int64(r.CombinedDegree), TextUnitIDs: nonNil(r.ChunkIDs), Type: r.Type}
	}
	if err := table(w, RelationshipsParquet, rels); err != nil {
		return err
	}
	comms, reports, err := w.communityRows(m)
	if err != nil {
		return err
	}
	if err := table(w, CommunitiesParquet, comms); err != nil {
		return err
	}
	return table(w, CommunityReportsParquet, reports)
}

// communityRows maps the hierarchy to GraphRAG's: level 0 is the coarsest (as in every
// format: load renumbered them), communities are numbered across levels, the parent of
// a top community is -1.
func (w *parquetWriter) communityRows(m *model) ([]pqCommunity, []pqReport, error) {
	comms := make([]pqCommunity, 0, len(m.comms))
	var reports []pqReport
	for _, c := range m.comms {
		children := make([]int64, len(c.ChildHIDs))
		for i, h := range c.ChildHIDs {
			children[i] = int64(h)
		}
		level := int64(c.Level)
		title := fmt.Sprintf("Community %d", c.HID)
		if c.report != nil && c.report.Title != "" {
			title = c.report.Title
		}
		comms = append(comms, pqCommunity{ID: c.ID, HumanReadableID: int64(c.HID), Community: int64(c.HID), Level: level, Parent: int64(c.ParentHID),
			Children: children, Title: title, EntityIDs: nonNil(c.Members), RelationshipIDs: nonNil(c.RelationshipIDs), TextUnitIDs: nonNil(c.TextUnitIDs),
			Period: w.period, Size: int64(len(c.Members))})
		if c.report == nil {
			continue
		}
		findings := make([]pqFinding, len(c.report.Findings))
		for i, f := range c.report.Findings {
			findings[i] = pqFinding{Explanation: f.Explanation, Summary: f.Summary}
		}
		js, err := json.Marshal(c.report)
		if err != nil {
			return nil, nil, fmt.Errorf("encoding the report of community %s: %w", c.ID, err)
		}
		reports = append(reports, pqReport{ID: c.ID, HumanReadableID: int64(c.HID), Community: int64(c.HID), Level: level, Parent: int64(c.ParentHID),
			Children: children, Title: c.report.Title, Summary: c.report.Summary, FullContent: c.report.fullContent(), Rank: c.report.Rating,
			RatingExplanation: c.report.RatingExplanation, Findings: findings, FullContentJSON: string(js), Period: w.period, Size: int64(len(c.Members))})
	}
	return comms, reports, nil
}

func (w *parquetWriter) chunks(cs []chunk) error {
	if w.units == nil {
		f, err := w.sink.Create(TextUnitsParquet)
		if err != nil {
			return err
		}
		w.unitsF, w.units = f, parquet.NewGenericWriter[pqTextUnit](f, parquet.Compression(&parquet.Snappy))
	}
	rows := make([]pqTextUnit, len(cs))
	for i, c := range cs {
		n, err := chunking.CountTokens(c.Text)
		if err != nil {
			return fmt.Errorf("counting the tokens of chunk %s: %w", c.ID, err)
		}
		rows[i] = pqTextUnit{ID: c.ID, HumanReadableID: int64(c.HID), Text: c.Text, NTokens: int64(n), DocumentID: c.DocumentID,
			DocumentIDs: []string{c.DocumentID}, EntityIDs: nonNil(c.EntityKeys), RelationshipIDs: nonNil(c.RelationshipIDs), CovariateIDs: []string{}}
	}
	if _, err := w.units.Write(rows); err != nil {
		return fmt.Errorf("writing %s: %w", TextUnitsParquet, err)
	}
	return nil
}

func (w *parquetWriter) close() error {
	if w.units == nil {
		if err := w.chunks(nil); err != nil {
			return err
		}
	}
	if err := w.units.Close(); err != nil {
		_ = w.unitsF.Close()
		return fmt.Errorf("writing %s: %w", TextUnitsParquet, err)
	}
	if err := w.unitsF.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", TextUnitsParquet, err)
	}
	w.written = append(w.written, TextUnitsParquet)
	return nil
}

func (w *parquetWriter) files() []string { return w.written }
