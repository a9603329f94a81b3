package summarizer

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/graphrag/graphrag/pkg/graphstore"
	"github.com/graphrag/graphrag/pkg/schema"
	"github.com/graphrag/graphrag/pkg/vectorstore"
)

// A detection level that leaves a community whole records it again one level up: a
// community with exactly its only child's members (8.6 % of the dev set's final
// communities, docs/benchmarks.md). Its report would be written from the same entities
// and relationships, plus the child's report: it gets a copy of the child's report
// instead of a second model call.

// copyMethod starts the method of a report copied from a twin child; the child's id
// follows.
const copyMethod = "copy/"

// Copied reports whether a report record is a copy of a child's report rather than a
// report written for it (by the model or extractively).
func Copied(rec vectorstore.Record) bool {
	return strings.HasPrefix(rec.Attrs[schema.ReportMethod], copyMethod)
}

// twinReport returns the report of com's child when the child has exactly com's
// members and its report is written; ok is false otherwise.
func (s *Service) twinReport(ctx context.Context, corpus string, com graphstore.Community) (child vectorstore.Record, ok bool, err error) {
	if len(com.ChildIDs) != 1 {
		return child, false, nil
	}
	sub, err := s.deps.Graph.Community(ctx, corpus, com.ChildIDs[0])
	if errors.Is(err, graphstore.ErrNotFound) {
		return child, false, nil
	}
	if err != nil {
		return child, false, fmt.Errorf("community %s: reading its sub-community: %w", com.ID, err)
	}
	if !slices.Equal(sub.Members, com.Members) {
		return child, false, nil
	}
	recs, err := s.deps.Vectors.Get(ctx, schema.Collection(corpus, schema.Communities), []string{sub.ID})
	if errors.Is(err, vectorstore.ErrNotFound) || (err == nil && len(recs) == 0) {
		return child, false, nil // not written yet: the sub-report wait applies
	}
	if err != nil {
		return child, false, fmt.Errorf("community %s: reading the report of its sub-community: %w", com.ID, err)
	}
	return recs[0], true, nil
}

// copyReport writes child's report (text, title, findings, rating) as com's, with
// com's own level, parent and run.
func (s *Service) copyReport(ctx context.Context, corpus string, com graphstore.Community, child vectorstore.Record, run string) (vectorstore.Record, error) {
	attrs := maps.Clone(child.Attrs)
	attrs[schema.ReportLevel] = strconv.Itoa(com.Level)
	attrs[schema.ReportParent] = com.ParentID
	attrs[schema.ReportMembers] = strconv.Itoa(len(com.Members))
	attrs[schema.ReportRelationships] = strconv.Itoa(com.RelationshipCount)
	attrs[schema.ReportMethod] = copyMethod + child.ID
	attrs[schema.ReportRun] = run
	rec := vectorstore.Record{ID: com.ID, Text: child.Text, Attrs: attrs}
	if err := s.writer.write(ctx, s.reportSpec(corpus), &rec, s.embedTextOf(child)); err != nil {
		return vectorstore.Record{}, fmt.Errorf("community %s: writing the copy of its sub-community's report: %w", com.ID, err)
	}
	return rec, nil
}
