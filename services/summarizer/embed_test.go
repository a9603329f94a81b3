package summarizer

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/pkg/graphstore"
	"github.com/graphrag/graphrag/pkg/hashembed"
	"github.com/graphrag/graphrag/pkg/llm"
	"github.com/graphrag/graphrag/pkg/llm/llmtest"
	"github.com/graphrag/graphrag/pkg/schema"
)

// A report is embedded once: a redelivered or re-announced community whose report is
// written embeds nothing, and a twin's copy embeds the same text as its child's, which
// the embedding cache answers. The text is the whole report, or with -report-embed
// summary its title and summary.
func TestReportEmbeddedOnce(t *testing.T) {
	for _, mode := range []string{ReportEmbedFull, ReportEmbedSummary} {
		t.Run(mode, func(t *testing.T) {
			srv := llmtest.NewServer(llmtest.WithDimension(64), llmtest.WithRequestLog())
			t.Cleanup(srv.Close)
			c, err := llm.New(llm.Config{BaseURL: srv.URL(), EmbedModel: "embed", Timeout: 5 * time.Second}, llm.WithCache(llm.NewMemoryCache(64)))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = c.Close() })
			ts := newTestSummarizer(t, nil)
			ts.s.cfg.ReportEmbed = mode
			ts.s.writer.embedder = llm.NonZero(c)
			ctx := t.Context()
			if err := ts.g.ReplaceCommunities(ctx, "demo", []graphstore.Community{
				{ID: "c0-x", Level: 0, ParentID: "c1-x", Members: []string{"alpha", "beta"}},
				{ID: "c1-x", Level: 1, Members: []string{"alpha", "beta"}},
			}); err != nil {
				t.Fatal(err)
			}
			for range 2 {
				if err := ts.s.handleCommunity(ctx, "demo", communityMsg(t, "c0-x", "run1")); err != nil {
					t.Fatal(err)
				}
			}
			reqs := srv.Requests()
			if len(reqs) != 1 {
				t.Fatalf("%d embeddings requests for one report handled twice, want 1", len(reqs))
			}
			recs, err := ts.v.Get(ctx, schema.Collection("demo", schema.Communities), []string{"c0-x"})
			if err != nil || len(recs) != 1 {
				t.Fatalf("report %v (%v)", recs, err)
			}
			in, _ := reqs[0].Embed.Input.([]any)
			want := recs[0].Text
			if mode == ReportEmbedSummary {
				var rep schema.Report
				if err := json.Unmarshal([]byte(recs[0].Attrs[schema.ReportJSON]), &rep); err != nil {
					t.Fatal(err)
				}
				want = rep.Title + "\n\n" + rep.Summary
				if !strings.HasPrefix(recs[0].Text, want) || len(recs[0].Text) <= len(want) {
					t.Errorf("title and summary %q are not the report %q without its findings", want, recs[0].Text)
				}
			}
			if len(in) != 1 || in[0] != want {
				t.Errorf("embedded %q, want %q", in, want)
			}

			data, err := events.Encode(&events.Community{Schema: events.SchemaCommunity, Corpus: "demo", ID: "c1-x", Level: 1, MemberCount: 2, Run: "run1"})
			if err != nil {
				t.Fatal(err)
			}
			if err := ts.s.handleCommunity(ctx, "demo", &bus.Message{Subject: events.Subject(events.KindCommunities, "demo"), Data: data, Deliveries: 1}); err != nil {
				t.Fatal(err)
			}
			if n := len(srv.Requests()); n != 1 {
				t.Errorf("%d embeddings requests after the twin's copy, want 1 (the copy embeds its child's text)", n)
			}
		})
	}
}

// By default a report costs no embedding call: once the service has probed the model's
// dimension, a report is written with the offline embedder's vector of its title and
// summary, at that dimension.
func TestNoReportEmbeddedByDefault(t *testing.T) {
	srv := llmtest.NewServer(llmtest.WithDimension(48), llmtest.WithRequestLog())
	t.Cleanup(srv.Close)
	c, err := llm.New(llm.Config{BaseURL: srv.URL(), EmbedModel: "embed", Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	ts := newTestSummarizer(t, nil)
	if ts.s.cfg.ReportEmbed != ReportEmbedNone {
		t.Fatalf("default -report-embed %q, want %q", ts.s.cfg.ReportEmbed, ReportEmbedNone)
	}
	ts.s.deps.Embedder = c
	ts.s.writer.embedder = llm.NonZero(c) // as New sets it for the model's client
	ctx := t.Context()
	if err := ts.s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ts.s.Stop(context.WithoutCancel(ctx)) })
	probes := len(srv.Requests())
	if err := ts.g.ReplaceCommunities(ctx, "demo", []graphstore.Community{{ID: "c0-x", Level: 0, Members: []string{"alpha", "beta"}}}); err != nil {
		t.Fatal(err)
	}
	if err := ts.s.handleCommunity(ctx, "demo", communityMsg(t, "c0-x", "run1")); err != nil {
		t.Fatal(err)
	}
	if n := len(srv.Requests()) - probes; n != 0 {
		t.Errorf("%d embeddings requests for a report, want none", n)
	}
	recs, err := ts.v.Get(ctx, schema.Collection("demo", schema.Communities), []string{"c0-x"})
	if err != nil || len(recs) != 1 {
		t.Fatalf("report %v (%v)", recs, err)
	}
	var rep schema.Report
	if err := json.Unmarshal([]byte(recs[0].Attrs[schema.ReportJSON]), &rep); err != nil {
		t.Fatal(err)
	}
	want, err := hashembed.New(48).Embed(ctx, []string{rep.SummaryText()})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(recs[0].Vector, want[0]) {
		t.Errorf("report vector of %d dimensions is not the offline embedder's of its title and summary", len(recs[0].Vector))
	}
}
