package summarizer

import (
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/pkg/graphstore"
	"github.com/graphrag/graphrag/pkg/llm/llmtest"
	"github.com/graphrag/graphrag/pkg/schema"
)

// A community with exactly its only child's members gets a copy of the child's report,
// without a model call, once the child's is written (before, it waits as any parent).
func TestTwinCommunityCopiesItsChildsReport(t *testing.T) {
	srv := llmtest.NewServer(llmtest.WithChatReply(func(openai.ChatCompletionRequest) string { return modelReport }))
	t.Cleanup(srv.Close)
	ts := newTestSummarizer(t, nil)
	withModel(t, ts, srv, 5*time.Second)
	ctx := t.Context()
	if err := ts.g.ReplaceCommunities(ctx, "demo", []graphstore.Community{
		{ID: "c0-x", Level: 0, ParentID: "c1-x", Members: []string{"alpha", "beta"}},
		{ID: "c1-x", Level: 1, Members: []string{"alpha", "beta"}},
	}); err != nil {
		t.Fatal(err)
	}
	twin := func(deliveries uint64) *bus.Message {
		data, err := events.Encode(&events.Community{Schema: events.SchemaCommunity, Corpus: "demo", ID: "c1-x", Level: 1, MemberCount: 2, Run: "run1"})
		if err != nil {
			t.Fatal(err)
		}
		return &bus.Message{Subject: events.Subject(events.KindCommunities, "demo"), Data: data, Deliveries: deliveries}
	}
	if err := ts.s.handleCommunity(ctx, "demo", twin(1)); err == nil {
		t.Fatal("twin handled before its child's report: want a retry")
	}
	if err := ts.s.handleCommunity(ctx, "demo", communityMsg(t, "c0-x", "run1")); err != nil {
		t.Fatal(err)
	}
	calls := srv.ChatCalls()
	if err := ts.s.handleCommunity(ctx, "demo", twin(2)); err != nil {
		t.Fatal(err)
	}
	if n := srv.ChatCalls() - calls; n != 0 {
		t.Errorf("%d model calls for the twin's report, want 0", n)
	}
	recs, err := ts.v.Get(ctx, schema.Collection("demo", schema.Communities), []string{"c0-x", "c1-x"})
	if err != nil || len(recs) != 2 {
		t.Fatalf("reports %v (%v), want both", recs, err)
	}
	child, copied := recs[0], recs[1]
	if copied.ID != "c1-x" {
		child, copied = copied, child
	}
	if copied.Text != child.Text || copied.Attrs[schema.ReportLevel] != "1" || !Copied(copied) || Copied(child) ||
		copied.Attrs[schema.ReportMethod] != "copy/c0-x" || copied.Attrs[schema.ReportTitle] != child.Attrs[schema.ReportTitle] {
		t.Errorf("twin's report %+v, want a copy of %+v at level 1", copied.Attrs, child.Attrs)
	}
	var announced bool
	for _, s := range ts.summaries(t) {
		announced = announced || s.CommunityID == "c1-x"
	}
	if !announced {
		t.Error("the copied report was not announced")
	}
}
