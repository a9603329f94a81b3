package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/graphrag/graphrag/pkg/graphstore"
	"github.com/graphrag/graphrag/pkg/normalize"
	"github.com/graphrag/graphrag/services/query/ask"
	"github.com/graphrag/graphrag/services/query/engine"
	"github.com/graphrag/graphrag/services/query/explore"
	"github.com/graphrag/graphrag/services/query/internal/querytest"
)

// newTestServer serves an engine over querytest.Demo: corpus "demo", three passages about
// the Analytical Engine.
func newTestServer(t *testing.T, version string) *mcp.Server {
	t.Helper()
	st := querytest.Demo(t)
	e, err := ask.New(engine.Config{}, ask.Config{}, engine.Deps{Graph: st.Graph, Vectors: st.Vectors, Embedder: st.Embedder, Logger: querytest.Logger()}, nil)
	if err != nil {
		t.Fatalf("building engine: %v", err)
	}
	return New(e, explore.New(st.Graph, st.Vectors), version, querytest.Logger())
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
	cs := connectMCP(t, newTestServer(t, "v1.2.3"), nil)
	if got := cs.InitializeResult().ServerInfo; got.Name != serverName || got.Version != "v1.2.3" {
		t.Errorf("server info = %+v, want %s v1.2.3", got, serverName)
	}
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatalf("listing tools: %v", err)
	}
	// Required inputs and a few output properties each tool must declare.
	want := map[string]struct{ required, outProps []string }{
		ToolSearch:  {[]string{"corpus", "query"}, []string{"answer", "mode", "passages", "themes", "follow_ups", "context", "partial_answers"}},
		ToolExplore: {[]string{"corpus", "entity_name"}, []string{"entity", "resolved_from", "neighbors", "relationships", "truncated", "more"}},
		ToolStats:   {[]string{"corpus"}, []string{"chunks", "entities", "relationships", "communities", "reports"}},
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
	cs := connectMCP(t, newTestServer(t, "test"), nil)
	fixtureIDs := map[string]bool{"c1": true, "c2": true, "c3": true}
	tests := []struct {
		name    string
		tool    string
		args    map[string]any
		wantErr string // substring of the tool error; "" for success
		check   func(t *testing.T, res *mcp.CallToolResult)
	}{
		{name: "search local", tool: ToolSearch, args: map[string]any{"corpus": "demo", "query": "Who designed the Analytical Engine?", "mode": "local", "top_k": 2},
			check: func(t *testing.T, res *mcp.CallToolResult) {
				var r SearchResult
				structured(t, res, &r)
				if r.Mode != ask.ModeLocal || r.Answer == "" {
					t.Errorf("mode %q answer %q: want a local answer", r.Mode, r.Answer)
				}
				if len(r.Passages) == 0 || len(r.Passages) > 2 {
					t.Fatalf("got %d passages, want 1..2 (top_k 2)", len(r.Passages))
				}
				for _, p := range r.Passages {
					if !fixtureIDs[p.ID] || p.DocumentID == "" || p.Text == "" || p.Title == "" || p.Why == "" {
						t.Errorf("passage %+v is not a fixture passage with its title and why", p)
					}
				}
				if r.Passages[0].ID != "c3" {
					t.Errorf("top passage = %s, want c3 (the passage on who designed the engine)", r.Passages[0].ID)
				}
				if r.Passages[0].Marker != "1" || !strings.Contains(r.Answer, "[1]") {
					t.Errorf("answer %q, top passage marker %q: want it cited as [1]", r.Answer, r.Passages[0].Marker)
				}
				if r.Context != nil {
					t.Error("the concise result carries the whole context")
				}
				if !strings.Contains(toolText(res), r.Answer[:10]) {
					t.Errorf("text content does not carry the answer: %s", toolText(res))
				}
			}},
		{name: "search full detail", tool: ToolSearch, args: map[string]any{"corpus": "demo", "query": "Who designed the Analytical Engine?", "mode": "local", "detail": "full"},
			check: func(t *testing.T, res *mcp.CallToolResult) {
				var r SearchResult
				structured(t, res, &r)
				if r.Context == nil || len(r.Context.Chunks) != len(r.Passages) || len(r.Context.Entities) == 0 {
					t.Fatalf("full detail: context %+v for %d passages: want the whole context", r.Context, len(r.Passages))
				}
			}},
		{name: "search default mode", tool: ToolSearch, args: map[string]any{"corpus": "demo", "query": "What did Ada Lovelace write?"},
			check: func(t *testing.T, res *mcp.CallToolResult) {
				var r SearchResult
				structured(t, res, &r)
				if r.Mode != ask.ModeLocal && r.Mode != ask.ModeGlobal {
					t.Errorf("mode = %q, want the mode auto resolved to", r.Mode)
				}
				if len(r.Passages) == 0 || !fixtureIDs[r.Passages[0].ID] {
					t.Errorf("passages %+v: want fixture passages", r.Passages)
				}
			}},
		{name: "search naive bullets", tool: ToolSearch, args: map[string]any{"corpus": "demo", "query": "Who designed the Analytical Engine?", "mode": "naive", "response_type": "Bullet Points", "detail": "full"},
			check: func(t *testing.T, res *mcp.CallToolResult) {
				var r SearchResult
				structured(t, res, &r)
				if r.Mode != ask.ModeNaive || !strings.HasPrefix(r.Answer, "- ") {
					t.Errorf("mode %q answer %q: want a naive answer as a list", r.Mode, r.Answer)
				}
				if r.Context == nil || len(r.Context.Chunks) == 0 || len(r.Context.Entities) != 0 {
					t.Errorf("context %+v: want passages and no entity", r.Context)
				}
			}},
		{name: "search drift only context", tool: ToolSearch, args: map[string]any{"corpus": "demo", "query": "What did Ada Lovelace write?", "mode": "drift", "only_context": true},
			check: func(t *testing.T, res *mcp.CallToolResult) {
				var r SearchResult
				structured(t, res, &r)
				if r.Mode != ask.ModeDrift || r.Answer != "" || len(r.Passages) == 0 {
					t.Errorf("mode %q answer %q, %d passages: want drift's passages without an answer", r.Mode, r.Answer, len(r.Passages))
				}
			}},
		{name: "explore", tool: ToolExplore, args: map[string]any{"corpus": "demo", "entity_name": "charles BABBAGE", "depth": 1},
			check: func(t *testing.T, res *mcp.CallToolResult) {
				var nb explore.Neighborhood
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
		{name: "explore default depth", tool: ToolExplore, args: map[string]any{"corpus": "demo", "entity_name": "Ada Lovelace"},
			check: func(t *testing.T, res *mcp.CallToolResult) {
				var nb explore.Neighborhood
				structured(t, res, &nb)
				if len(nb.Neighbors) != 2 {
					t.Errorf("neighbours = %+v, want babbage and the engine", nb.Neighbors)
				}
			}},
		{name: "stats", tool: ToolStats, args: map[string]any{"corpus": "demo"},
			check: func(t *testing.T, res *mcp.CallToolResult) {
				var st engine.Stats
				structured(t, res, &st)
				if st.Corpus != "demo" || st.Chunks != 3 || st.Entities != 3 || st.Relationships != 3 || st.Reports != 0 {
					t.Errorf("stats = %+v, want 3 chunks, 3 entities, 3 relationships, 0 reports", st)
				}
			}},
		{name: "search unknown corpus", tool: ToolSearch, args: map[string]any{"corpus": "nope", "query": "anything"}, wantErr: "unknown corpus"},
		{name: "search invalid corpus name", tool: ToolSearch, args: map[string]any{"corpus": "Bad Corpus!", "query": "anything"}, wantErr: "invalid arguments: corpus"},
		{name: "search blank query", tool: ToolSearch, args: map[string]any{"corpus": "demo", "query": "   "}, wantErr: "query: is empty"},
		{name: "search missing query", tool: ToolSearch, args: map[string]any{"corpus": "demo"}, wantErr: "query"},
		{name: "search bad detail", tool: ToolSearch, args: map[string]any{"corpus": "demo", "query": "x", "detail": "everything"}, wantErr: "detail"},
		{name: "search bad mode", tool: ToolSearch, args: map[string]any{"corpus": "demo", "query": "x", "mode": "deep"}, wantErr: "mode"},
		{name: "search user_prompt too long", tool: ToolSearch, args: map[string]any{"corpus": "demo", "query": "x", "user_prompt": strings.Repeat("u", ask.MaxUserPromptBytes+1)}, wantErr: "user_prompt"},
		{name: "search top_k too large", tool: ToolSearch, args: map[string]any{"corpus": "demo", "query": "x", "top_k": 1000}, wantErr: "top_k"},
		{name: "search wrong type", tool: ToolSearch, args: map[string]any{"corpus": "demo", "query": 42}, wantErr: "query"},
		{name: "explore unknown entity", tool: ToolExplore, args: map[string]any{"corpus": "demo", "entity_name": "Grace Hopper"}, wantErr: "not found"},
		{name: "explore depth out of range", tool: ToolExplore, args: map[string]any{"corpus": "demo", "entity_name": "Ada Lovelace", "depth": 9}, wantErr: "depth"},
		{name: "explore limit out of range", tool: ToolExplore, args: map[string]any{"corpus": "demo", "entity_name": "Ada Lovelace", "limit": 501}, wantErr: "limit"},
		{name: "stats unknown corpus", tool: ToolStats, args: map[string]any{"corpus": "nope"}, wantErr: "unknown corpus"},
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
	cs := connectMCP(t, newTestServer(t, "test"), &mcp.ClientOptions{
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
	params := &mcp.CallToolParams{Name: ToolSearch, Arguments: map[string]any{"corpus": "demo", "query": "Who designed the Analytical Engine?", "mode": "local"}}
	params.SetProgressToken("tok-1")
	res, err := cs.CallTool(t.Context(), params)
	if err != nil || res.IsError {
		t.Fatalf("search: %v %s", err, toolText(res))
	}
	var r ask.Response
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
	srv := httptest.NewServer(HTTPHandler(newTestServer(t, "test")))
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
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: ToolStats, Arguments: map[string]any{"corpus": "demo"}})
	if err != nil || res.IsError {
		t.Fatalf("calling stats: %v %s", err, toolText(res))
	}
	var st engine.Stats
	structured(t, res, &st)
	if st.Chunks != 3 {
		t.Errorf("chunks = %d, want 3", st.Chunks)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: ToolExplore, Arguments: map[string]any{"corpus": "demo", "entity_name": "nobody"}})
	if err != nil || !res.IsError {
		t.Fatalf("unknown entity over HTTP: err %v, IsError %v: want a tool error", err, res != nil && res.IsError)
	}
}

// TestExploreIsBounded: explore_entity_graph answers at most limit neighbours (default
// 20) and relationship_limit relationships (default 40), the entity's own first, and
// says when it cut and how to get more; with larger limits it answers everything.
func TestExploreIsBounded(t *testing.T) {
	st := querytest.Open(t)
	const n = 60
	hub := querytest.Mention("Gullhead Lighthouse", "PLACE", "A lighthouse.")
	var xs []graphstore.ChunkExtraction
	for i := range n {
		name := fmt.Sprintf("Keeper %02d", i)
		rels := []graphstore.RelationMention{querytest.Relation("Gullhead Lighthouse", name, "KEPT_BY", "kept")}
		for j := max(0, i-2); j < i; j++ { // and to the two before: neighbours related among themselves
			rels = append(rels, querytest.Relation(name, fmt.Sprintf("Keeper %02d", j), "RELIEVED", strings.Repeat("relieved the keeper before ", 4)))
		}
		xs = append(xs, graphstore.ChunkExtraction{ChunkID: fmt.Sprintf("c%02d", i), DocumentID: "d",
			Entities: []graphstore.EntityMention{hub, querytest.Mention(name, "PERSON", "A keeper of the light.")}, Relations: rels})
	}
	if err := st.Graph.Merge(t.Context(), "lights", xs); err != nil {
		t.Fatal(err)
	}
	e, err := ask.New(engine.Config{}, ask.Config{}, engine.Deps{Graph: st.Graph, Vectors: st.Vectors, Embedder: st.Embedder, Logger: querytest.Logger()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs := connectMCP(t, New(e, explore.New(st.Graph, st.Vectors), "test", querytest.Logger()), nil)
	call := func(args map[string]any) (ExploreResult, int) {
		t.Helper()
		args["corpus"], args["entity_name"] = "lights", "Gullhead Lighthouse"
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: ToolExplore, Arguments: args})
		if err != nil || res.IsError {
			t.Fatalf("explore %v: %v %s", args, err, toolText(res))
		}
		var r ExploreResult
		structured(t, res, &r)
		return r, len(toolText(res))
	}
	r, size := call(map[string]any{})
	if len(r.Neighbors) != DefaultExploreLimit || len(r.Relationships) != DefaultExploreRelationshipLimit || !r.Truncated ||
		!strings.Contains(r.More, "raise limit") || !strings.Contains(r.More, "raise relationship_limit") {
		t.Errorf("default: %d neighbours, %d relationships, truncated %v, more %q: want %d, %d, true and how to get more",
			len(r.Neighbors), len(r.Relationships), r.Truncated, r.More, DefaultExploreLimit, DefaultExploreRelationshipLimit)
	}
	kept := map[string]bool{r.Entity.Key: true}
	for _, nb := range r.Neighbors {
		kept[nb.Key] = true
	}
	own := 0
	for i, rel := range r.Relationships {
		if !kept[rel.Source] || !kept[rel.Target] {
			t.Errorf("relationship %s -> %s has an end not returned", rel.Source, rel.Target)
		}
		if rel.Source == r.Entity.Key || rel.Target == r.Entity.Key {
			if i != own {
				t.Errorf("the entity's own relationship %d comes after another", i)
			}
			own++
		}
	}
	if own != DefaultExploreLimit {
		t.Errorf("%d of the entity's own relationships, want one per neighbour returned (%d)", own, DefaultExploreLimit)
	}
	t.Logf("default answer: %d bytes of text", size)
	if size > 16<<10 {
		t.Errorf("default answer is %d bytes of text, want under 16 KB", size)
	}
	r, _ = call(map[string]any{"limit": 100, "relationship_limit": 1000})
	if len(r.Neighbors) != n || len(r.Relationships) != 3*n-3 || r.Truncated || r.More != "" {
		t.Errorf("large limits: %d neighbours, %d relationships, truncated %v %q: want %d, %d, false", len(r.Neighbors), len(r.Relationships), r.Truncated, r.More, n, 3*n-3)
	}
}

// TestExploreResolvesCuratedNames: explore_entity_graph answers a name a curation
// merged away with the entity it is now, and says which name was asked for.
func TestExploreResolvesCuratedNames(t *testing.T) {
	st := querytest.Demo(t)
	aliases := map[string]string{normalize.Name("Lady Lovelace"): normalize.Name("Ada Lovelace")}
	x := explore.New(st.Graph, st.Vectors, explore.WithAliases(func(context.Context, string) (map[string]string, error) { return aliases, nil }))
	e, err := ask.New(engine.Config{}, ask.Config{}, engine.Deps{Graph: st.Graph, Vectors: st.Vectors, Embedder: st.Embedder, Logger: querytest.Logger()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs := connectMCP(t, New(e, x, "test", querytest.Logger()), nil)
	for name, from := range map[string]string{"Lady Lovelace": "Lady Lovelace", "Ada Lovelace": ""} {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: ToolExplore, Arguments: map[string]any{"corpus": "demo", "entity_name": name}})
		if err != nil || res.IsError {
			t.Fatalf("explore %s: %v %s", name, err, toolText(res))
		}
		var r ExploreResult
		structured(t, res, &r)
		if r.Entity.Name != "Ada Lovelace" || r.ResolvedFrom != from || len(r.Neighbors) == 0 {
			t.Errorf("explore %s: entity %s resolved from %q, %d neighbours: want Ada Lovelace from %q", name, r.Entity.Name, r.ResolvedFrom, len(r.Neighbors), from)
		}
	}
}
