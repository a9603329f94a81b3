package query

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/graphrag/graphrag/pkg/graphstore"
	"github.com/graphrag/graphrag/pkg/graphstore/boltgraph"
	"github.com/graphrag/graphrag/pkg/hashembed"
	"github.com/graphrag/graphrag/pkg/normalize"
	"github.com/graphrag/graphrag/pkg/schema"
	"github.com/graphrag/graphrag/pkg/vectorstore"
	"github.com/graphrag/graphrag/pkg/vectorstore/embedded"
)

// mcpFixtureChunks is a tiny corpus "demo": three passages about the Analytical Engine.
var mcpFixtureChunks = []struct{ id, doc, title, text string }{
	{"c1", "d1", "Ada Lovelace", "Ada Lovelace\n\nAda Lovelace wrote the first published algorithm, a method for computing Bernoulli numbers on the Analytical Engine."},
	{"c2", "d1", "Ada Lovelace", "Ada Lovelace\n\nLovelace worked with Charles Babbage and translated a memoir by Luigi Menabrea, adding extensive notes."},
	{"c3", "d2", "Charles Babbage", "Charles Babbage\n\nCharles Babbage designed the Analytical Engine, a mechanical general-purpose computer with a mill and a store."},
}

func mcpMention(name, typ, desc string) graphstore.EntityMention {
	return graphstore.EntityMention{Key: normalize.Name(name), Name: name, Type: typ, Description: desc}
}

func mcpRelation(src, dst, typ, desc string) graphstore.RelationMention {
	return graphstore.RelationMention{SourceKey: normalize.Name(src), TargetKey: normalize.Name(dst), Type: typ, Description: desc, Strength: 1}
}

// newMCPTestEngine builds a real Engine over embedded stores holding the fixture.
func newMCPTestEngine(t *testing.T) *Engine {
	t.Helper()
	ctx := t.Context()
	dir := t.TempDir()
	g, err := boltgraph.Open(filepath.Join(dir, "graph.db"))
	if err != nil {
		t.Fatalf("opening graph store: %v", err)
	}
	t.Cleanup(func() { _ = g.Close() })
	v, err := embedded.Open(filepath.Join(dir, "vectors"))
	if err != nil {
		t.Fatalf("opening vector store: %v", err)
	}
	t.Cleanup(func() { _ = v.Close() })
	emb := hashembed.New(384)

	coll := schema.Collection("demo", schema.Chunks)
	if err := v.EnsureCollection(ctx, vectorstore.CollectionSpec{Name: coll, Dim: 384, Lexical: true}); err != nil {
		t.Fatalf("creating chunks collection: %v", err)
	}
	texts := make([]string, len(mcpFixtureChunks))
	for i, c := range mcpFixtureChunks {
		texts[i] = c.text
	}
	vecs, err := emb.Embed(ctx, texts)
	if err != nil {
		t.Fatalf("embedding fixture: %v", err)
	}
	recs := make([]vectorstore.Record, len(mcpFixtureChunks))
	for i, c := range mcpFixtureChunks {
		recs[i] = vectorstore.Record{ID: c.id, Vector: vecs[i], Text: c.text, Attrs: map[string]string{schema.ChunkDocumentID: c.doc, schema.ChunkTitle: c.title}}
	}
	if err := v.Upsert(ctx, coll, recs); err != nil {
		t.Fatalf("writing chunks: %v", err)
	}

	ada := mcpMention("Ada Lovelace", "PERSON", "Mathematician who wrote the first published algorithm.")
	babbage := mcpMention("Charles Babbage", "PERSON", "Inventor who designed the Analytical Engine.")
	engine := mcpMention("Analytical Engine", "ARTIFACT", "A mechanical general-purpose computer.")
	err = g.Merge(ctx, "demo", []graphstore.ChunkExtraction{
		{ChunkID: "c1", DocumentID: "d1", Entities: []graphstore.EntityMention{ada, engine},
			Relations: []graphstore.RelationMention{mcpRelation("Ada Lovelace", "Analytical Engine", "WROTE_PROGRAM_FOR", "Lovelace wrote an algorithm for the engine.")}},
		{ChunkID: "c2", DocumentID: "d1", Entities: []graphstore.EntityMention{ada, babbage},
			Relations: []graphstore.RelationMention{mcpRelation("Ada Lovelace", "Charles Babbage", "WORKED_WITH", "Lovelace worked with Babbage.")}},
		{ChunkID: "c3", DocumentID: "d2", Entities: []graphstore.EntityMention{babbage, engine},
			Relations: []graphstore.RelationMention{mcpRelation("Charles Babbage", "Analytical Engine", "DESIGNED", "Babbage designed the engine.")}},
	})
	if err != nil {
		t.Fatalf("merging graph: %v", err)
	}
	e, err := New(Config{}, Deps{Graph: g, Vectors: v, Embedder: emb, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatalf("building engine: %v", err)
	}
	return e
}

// connectMCP connects a client to s over in-memory transports; both ends are closed
// (and their goroutines waited for) at cleanup.
func connectMCP(t *testing.T, s *mcp.Server, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	ctx := context.WithoutCancel(t.Context())
	st, ct := mcp.NewInMemoryTransports()
	ss, err := s.Connect(ctx, st, nil)
	if err != nil {
		t.Fatalf("connecting server: %v", err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "v0"}, opts).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatalf("connecting client: %v", err)
	}
	t.Cleanup(func() {
		_ = cs.Close()
		_ = ss.Wait()
	})
	return cs
}

func toolText(res *mcp.CallToolResult) string {
	if res == nil {
		return ""
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// structured decodes a result's structured content into out.
func structured(t *testing.T, res *mcp.CallToolResult, out any) {
	t.Helper()
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatalf("re-encoding structured content: %v", err)
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("decoding structured content %s: %v", b, err)
	}
}

func TestMCPListTools(t *testing.T) {
	cs := connectMCP(t, NewMCPServer(newMCPTestEngine(t), "v1.2.3"), nil)
	if got := cs.InitializeResult().ServerInfo; got.Name != mcpServerName || got.Version != "v1.2.3" {
		t.Errorf("server info = %+v, want %s v1.2.3", got, mcpServerName)
	}
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatalf("listing tools: %v", err)
	}
	// Required inputs and a few output properties each tool must declare.
	want := map[string]struct{ required, outProps []string }{
		MCPToolSearch:  {[]string{"corpus", "query"}, []string{"answer", "mode", "citations", "context", "partial_answers", "timings_ms"}},
		MCPToolExplore: {[]string{"corpus", "entity_name"}, []string{"entity", "neighbors", "relationships"}},
		MCPToolStats:   {[]string{"corpus"}, []string{"chunks", "entities", "relationships", "communities", "reports"}},
	}
	if len(res.Tools) != len(want) {
		t.Fatalf("got %d tools, want %d", len(res.Tools), len(want))
	}
	for _, tool := range res.Tools {
		t.Run(tool.Name, func(t *testing.T) {
			w, ok := want[tool.Name]
			if !ok {
				t.Fatalf("unexpected tool %q", tool.Name)
			}
			if tool.Description == "" || tool.Annotations == nil || !tool.Annotations.ReadOnlyHint {
				t.Errorf("tool lacks a description or read-only annotation: %+v", tool)
			}
			in, _ := tool.InputSchema.(map[string]any)
			out, _ := tool.OutputSchema.(map[string]any)
			if in == nil || out == nil {
				t.Fatalf("input schema %v, output schema %v: both must be objects", tool.InputSchema, tool.OutputSchema)
			}
			var req []string
			for _, r := range in["required"].([]any) {
				req = append(req, r.(string))
			}
			slices.Sort(req)
			if !slices.Equal(req, w.required) {
				t.Errorf("required inputs = %v, want %v", req, w.required)
			}
			for name, p := range in["properties"].(map[string]any) {
				if d, _ := p.(map[string]any)["description"].(string); d == "" {
					t.Errorf("input %q has no description", name)
				}
			}
			props := out["properties"].(map[string]any)
			for _, p := range w.outProps {
				if _, ok := props[p]; !ok {
					t.Errorf("output schema lacks %q: %v", p, props)
				}
			}
		})
	}
}

func TestMCPCallTools(t *testing.T) {
	cs := connectMCP(t, NewMCPServer(newMCPTestEngine(t), "test"), nil)
	fixtureIDs := map[string]bool{"c1": true, "c2": true, "c3": true}
	tests := []struct {
		name    string
		tool    string
		args    map[string]any
		wantErr string // substring of the tool error; "" for success
		check   func(t *testing.T, res *mcp.CallToolResult)
	}{
		{name: "search local", tool: MCPToolSearch, args: map[string]any{"corpus": "demo", "query": "Who designed the Analytical Engine?", "mode": "local", "top_k": 2},
			check: func(t *testing.T, res *mcp.CallToolResult) {
				var r Response
				structured(t, res, &r)
				if r.Mode != ModeLocal || r.Answer == "" {
					t.Errorf("mode %q answer %q: want a local answer", r.Mode, r.Answer)
				}
				if len(r.Context.Chunks) == 0 || len(r.Context.Chunks) > 2 {
					t.Fatalf("got %d chunks, want 1..2 (top_k 2)", len(r.Context.Chunks))
				}
				for _, c := range r.Context.Chunks {
					if !fixtureIDs[c.ID] || c.DocumentID == "" || c.Text == "" {
						t.Errorf("chunk %+v is not a fixture passage", c)
					}
				}
				if r.Context.Chunks[0].ID != "c3" {
					t.Errorf("top chunk = %s, want c3 (the passage on who designed the engine)", r.Context.Chunks[0].ID)
				}
				if _, ok := r.Timings["total"]; !ok {
					t.Errorf("timings %v lack total", r.Timings)
				}
				if !strings.Contains(toolText(res), r.Answer[:10]) {
					t.Errorf("text content does not carry the answer: %s", toolText(res))
				}
			}},
		{name: "search default mode", tool: MCPToolSearch, args: map[string]any{"corpus": "demo", "query": "What did Ada Lovelace write?"},
			check: func(t *testing.T, res *mcp.CallToolResult) {
				var r Response
				structured(t, res, &r)
				if r.Mode != ModeLocal && r.Mode != ModeGlobal {
					t.Errorf("mode = %q, want the mode auto resolved to", r.Mode)
				}
				if len(r.Context.Chunks) == 0 || !fixtureIDs[r.Context.Chunks[0].ID] {
					t.Errorf("chunks %+v: want fixture passages", r.Context.Chunks)
				}
			}},
		{name: "explore", tool: MCPToolExplore, args: map[string]any{"corpus": "demo", "entity_name": "charles BABBAGE", "depth": 1},
			check: func(t *testing.T, res *mcp.CallToolResult) {
				var nb Neighborhood
				structured(t, res, &nb)
				if nb.Entity.Key != normalize.Name("Charles Babbage") {
					t.Errorf("entity = %+v, want charles babbage", nb.Entity)
				}
				var keys []string
				for _, n := range nb.Neighbors {
					keys = append(keys, n.Key)
				}
				slices.Sort(keys)
				if want := []string{normalize.Name("Ada Lovelace"), normalize.Name("Analytical Engine")}; !slices.Equal(keys, want) {
					t.Errorf("neighbours = %v, want %v", keys, want)
				}
				if len(nb.Relationships) == 0 {
					t.Error("no relationships among the neighbourhood")
				}
			}},
		{name: "explore default depth", tool: MCPToolExplore, args: map[string]any{"corpus": "demo", "entity_name": "Ada Lovelace"},
			check: func(t *testing.T, res *mcp.CallToolResult) {
				var nb Neighborhood
				structured(t, res, &nb)
				if len(nb.Neighbors) != 2 {
					t.Errorf("neighbours = %+v, want babbage and the engine", nb.Neighbors)
				}
			}},
		{name: "stats", tool: MCPToolStats, args: map[string]any{"corpus": "demo"},
			check: func(t *testing.T, res *mcp.CallToolResult) {
				var st Stats
				structured(t, res, &st)
				if st.Corpus != "demo" || st.Chunks != 3 || st.Entities != 3 || st.Relationships != 3 || st.Reports != 0 {
					t.Errorf("stats = %+v, want 3 chunks, 3 entities, 3 relationships, 0 reports", st)
				}
			}},
		{name: "search unknown corpus", tool: MCPToolSearch, args: map[string]any{"corpus": "nope", "query": "anything"}, wantErr: "unknown corpus"},
		{name: "search invalid corpus name", tool: MCPToolSearch, args: map[string]any{"corpus": "Bad Corpus!", "query": "anything"}, wantErr: "invalid arguments: corpus"},
		{name: "search blank query", tool: MCPToolSearch, args: map[string]any{"corpus": "demo", "query": "   "}, wantErr: "query: is empty"},
		{name: "search missing query", tool: MCPToolSearch, args: map[string]any{"corpus": "demo"}, wantErr: "query"},
		{name: "search bad mode", tool: MCPToolSearch, args: map[string]any{"corpus": "demo", "query": "x", "mode": "deep"}, wantErr: "mode"},
		{name: "search top_k too large", tool: MCPToolSearch, args: map[string]any{"corpus": "demo", "query": "x", "top_k": 1000}, wantErr: "top_k"},
		{name: "search wrong type", tool: MCPToolSearch, args: map[string]any{"corpus": "demo", "query": 42}, wantErr: "query"},
		{name: "explore unknown entity", tool: MCPToolExplore, args: map[string]any{"corpus": "demo", "entity_name": "Grace Hopper"}, wantErr: "not found"},
		{name: "explore depth out of range", tool: MCPToolExplore, args: map[string]any{"corpus": "demo", "entity_name": "Ada Lovelace", "depth": 9}, wantErr: "depth"},
		{name: "stats unknown corpus", tool: MCPToolStats, args: map[string]any{"corpus": "nope"}, wantErr: "unknown corpus"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tc.tool, Arguments: tc.args})
			if err != nil {
				t.Fatalf("protocol error: %v (tool failures must be tool results)", err)
			}
			if tc.wantErr != "" {
				if !res.IsError || !strings.Contains(toolText(res), tc.wantErr) {
					t.Fatalf("IsError %v, text %q: want a tool error mentioning %q", res.IsError, toolText(res), tc.wantErr)
				}
				t.Logf("tool error: %s", toolText(res))
				return
			}
			if res.IsError {
				t.Fatalf("tool error: %s", toolText(res))
			}
			tc.check(t, res)
		})
	}
}

// TestMCPSearchProgress checks that a client asking for progress receives the answer as
// it is generated.
func TestMCPSearchProgress(t *testing.T) {
	var (
		mu       sync.Mutex
		messages []string
		arrived  = make(chan struct{}, 1)
	)
	cs := connectMCP(t, NewMCPServer(newMCPTestEngine(t), "test"), &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			defer mu.Unlock()
			if req.Params.ProgressToken == "tok-1" {
				messages = append(messages, req.Params.Message)
				select {
				case arrived <- struct{}{}:
				default:
				}
			}
		},
	})
	params := &mcp.CallToolParams{Name: MCPToolSearch, Arguments: map[string]any{"corpus": "demo", "query": "Who designed the Analytical Engine?", "mode": "local"}}
	params.SetProgressToken("tok-1")
	res, err := cs.CallTool(t.Context(), params)
	if err != nil || res.IsError {
		t.Fatalf("search: %v %s", err, toolText(res))
	}
	var r Response
	structured(t, res, &r)
	// The client dispatches notifications asynchronously: wait until the streamed text
	// adds up to the answer. The bound only guards against a hang; it is not a speed goal.
	wait, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	for {
		mu.Lock()
		got := strings.Join(messages, "")
		mu.Unlock()
		if got == r.Answer {
			return
		}
		if len(got) > len(r.Answer) {
			t.Fatalf("progress messages %q exceed the answer %q", got, r.Answer)
		}
		select {
		case <-arrived:
		case <-wait.Done():
			t.Fatalf("progress messages %q, want the answer %q", got, r.Answer)
		}
	}
}

// TestMCPHTTP drives the streamable HTTP handler with the SDK's streamable client.
func TestMCPHTTP(t *testing.T) {
	srv := httptest.NewServer(MCPHTTPHandler(NewMCPServer(newMCPTestEngine(t), "test")))
	defer srv.Close()
	ctx := t.Context()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "v0"}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: srv.Client(), MaxRetries: -1}, nil)
	if err != nil {
		t.Fatalf("connecting over HTTP: %v", err)
	}
	defer func() {
		if err := cs.Close(); err != nil {
			t.Errorf("closing client: %v", err)
		}
	}()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("listing tools: %v", err)
	}
	if len(tools.Tools) != 3 {
		t.Fatalf("got %d tools, want 3", len(tools.Tools))
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: MCPToolStats, Arguments: map[string]any{"corpus": "demo"}})
	if err != nil || res.IsError {
		t.Fatalf("calling stats: %v %s", err, toolText(res))
	}
	var st Stats
	structured(t, res, &st)
	if st.Chunks != 3 {
		t.Errorf("chunks = %d, want 3", st.Chunks)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: MCPToolExplore, Arguments: map[string]any{"corpus": "demo", "entity_name": "nobody"}})
	if err != nil || !res.IsError {
		t.Fatalf("unknown entity over HTTP: err %v, IsError %v: want a tool error", err, res != nil && res.IsError)
	}
}
