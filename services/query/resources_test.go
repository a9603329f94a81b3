package query_test

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/bus/bustest"
	"github.com/graphrag/graphrag/pkg/catalog"
	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/pkg/pipeline"
	"github.com/graphrag/graphrag/services/query"
	"github.com/graphrag/graphrag/services/query/internal/querytest"
	"github.com/graphrag/graphrag/services/query/mcpserver"
)

// scopedService serves the demo stores with a bus, behind a tokens file with a reader
// of demo, a writer of notes and an admin.
func scopedService(t *testing.T) (*httptest.Server, *bus.Bus) {
	t.Helper()
	b, err := bus.New(bustest.Connect(t, bustest.StartServer(t)))
	if err != nil {
		t.Fatal(err)
	}
	if err := pipeline.Provision(t.Context(), b, pipeline.DefaultTopology()); err != nil {
		t.Fatal(err)
	}
	tokens := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(tokens, []byte("# scoped\nreader read demo\nwriter write notes\nboss\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := query.DefaultConfig()
	cfg.API.TokensFile = tokens
	st := querytest.Demo(t)
	svc, err := query.New(cfg, query.Deps{Graph: st.Graph, Vectors: st.Vectors, Embedder: st.Embedder, OfflineEmbedder: true,
		Logger: querytest.Logger(), Version: "v1", Bus: b})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	svc.Mount(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv, b
}

func connectAs(t *testing.T, srv *httptest.Server, token string) *mcp.ClientSession {
	t.Helper()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "v0"}, nil).Connect(t.Context(),
		&mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp", HTTPClient: &http.Client{Transport: bearerTransport{token}}, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatalf("connecting to /mcp: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func toolText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// TestMCPScopes: over HTTP, every MCP tool refuses a corpus the token may not read, and
// list_corpora shows only the corpora it may.
func TestMCPScopes(t *testing.T) {
	srv, _ := scopedService(t)
	reader := connectAs(t, srv, "reader")
	tools, err := reader.ListTools(t.Context(), nil)
	if err != nil || len(tools.Tools) != 5 {
		t.Fatalf("tools %v, %v: want 5 with the bus", tools, err)
	}
	for _, tc := range []struct {
		tool    string
		args    map[string]any
		refused bool
	}{
		{mcpserver.ToolSearch, map[string]any{"corpus": "demo", "query": "Who designed the Analytical Engine?"}, false},
		{mcpserver.ToolSearch, map[string]any{"corpus": "notes", "query": "anything"}, true},
		{mcpserver.ToolExplore, map[string]any{"corpus": "notes", "entity_name": "Ada Lovelace"}, true},
		{mcpserver.ToolStats, map[string]any{"corpus": "notes"}, true},
		{mcpserver.ToolStats, map[string]any{"corpus": "demo"}, false},
		{mcpserver.ToolListDocuments, map[string]any{"corpus": "notes"}, true},
		{mcpserver.ToolListDocuments, map[string]any{"corpus": "demo"}, false},
	} {
		res, err := reader.CallTool(t.Context(), &mcp.CallToolParams{Name: tc.tool, Arguments: tc.args})
		if err != nil {
			t.Fatalf("%s: protocol error %v", tc.tool, err)
		}
		text := toolText(res)
		if tc.refused != (res.IsError && strings.Contains(text, "may not read corpus notes")) || (!tc.refused && res.IsError) {
			t.Errorf("%s %v: IsError %v, %q; want refused=%v", tc.tool, tc.args, res.IsError, text, tc.refused)
		}
	}
	res, err := reader.CallTool(t.Context(), &mcp.CallToolParams{Name: mcpserver.ToolListCorpora, Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("list_corpora: %v %s", err, toolText(res))
	}
	var cl mcpserver.CorpusList
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &cl); err != nil || len(cl.Corpora) != 1 || cl.Corpora[0].Name != "demo" || cl.Corpora[0].Chunks != 3 {
		t.Errorf("list_corpora for the reader of demo: %s", b)
	}
}

// TestUploadThroughTheBus: an upload over HTTP is published on the corpus subject and
// listed as pending; a reader may not upload; the export of the demo corpus is a zip;
// deletions of a document and of the corpus are published as events.
func TestUploadThroughTheBus(t *testing.T) {
	srv, b := scopedService(t)
	do := func(method, path, token, ctype, body string) (*http.Response, []byte) {
		req, _ := http.NewRequestWithContext(t.Context(), method, srv.URL+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, b
	}
	doc := `{"id":"notes/keeper.md","title":"The keeper","text":"# The keeper\n\nTom keeps Gullhead Lighthouse."}`
	if resp, body := do(http.MethodPost, "/v1/corpora/notes/documents", "reader", "application/json", doc); resp.StatusCode != 403 {
		t.Errorf("a reader uploads: %d %s", resp.StatusCode, body)
	}
	if resp, body := do(http.MethodPost, "/v1/corpora/notes/documents", "writer", "application/json", doc); resp.StatusCode != 202 {
		t.Fatalf("upload: %d %s", resp.StatusCode, body)
	}
	resp, body := do(http.MethodGet, "/v1/corpora/notes/documents", "writer", "", "")
	var p catalog.Page
	if resp.StatusCode != 200 || json.Unmarshal(body, &p) != nil || len(p.Documents) != 1 {
		t.Fatalf("listing: %d %s", resp.StatusCode, body)
	}
	if d := p.Documents[0]; d.ID != "notes/keeper.md" || d.Title != "The keeper" || d.State != catalog.DocumentPending {
		t.Errorf("listed %+v, want the upload, pending (no pipeline runs here)", d)
	}
	resp, body = do(http.MethodGet, "/v1/corpora/notes/status", "writer", "", "")
	var st catalog.Status
	if resp.StatusCode != 200 || json.Unmarshal(body, &st) != nil || st.State != catalog.StateIndexing || st.Stages[0].Total != 1 {
		t.Errorf("status: %d %s", resp.StatusCode, body)
	}
	resp, body = do(http.MethodGet, "/v1/corpora/demo/export?format=parquet", "reader", "", "")
	zr, err := zip.NewReader(bytes.NewReader(body), int64(len(body)))
	if resp.StatusCode != 200 || err != nil {
		t.Fatalf("export: %d, %v", resp.StatusCode, err)
	}
	var names []string
	for _, f := range zr.File {
		names = append(names, f.Name)
	}
	if !slices.Contains(names, "entities.parquet") || !slices.Contains(names, "text_units.parquet") {
		t.Errorf("archive holds %v", names)
	}
	// A file larger than a message goes through the object store, as graphrag publish does.
	big := "# Big\n\n" + strings.Repeat("The lamp turns every night and the keeper writes it down. ", 40000)
	var mb bytes.Buffer
	mw := multipart.NewWriter(&mb)
	fw, _ := mw.CreateFormFile("file", "big.md")
	_, _ = io.WriteString(fw, big)
	_ = mw.Close()
	if resp, body := do(http.MethodPost, "/v1/corpora/notes/documents", "writer", mw.FormDataContentType(), mb.String()); resp.StatusCode != 202 {
		t.Fatalf("large upload (%d bytes): %d %s", len(big), resp.StatusCode, body)
	}
	msgs := bustest.Messages(t, b, pipeline.StreamName(events.KindDocuments), events.Subject(events.KindDocuments, "notes"))
	var ev events.Document
	if err := json.Unmarshal(msgs[len(msgs)-1], &ev); err != nil || ev.ID != "big.md" || ev.Object == nil || ev.Object.Size != int64(len(big)) || ev.Text != "" {
		t.Errorf("the large upload's event: %+v, %v: want a reference to the object store", ev.Object, err)
	}
	// Deletions are events on the corpus subject; deleting nothing is a 404.
	if resp, body := do(http.MethodDelete, "/v1/corpora/notes/documents/never.md", "writer", "", ""); resp.StatusCode != 404 {
		t.Errorf("delete of an unknown document: %d %s, want 404", resp.StatusCode, body)
	}
	if resp, body := do(http.MethodDelete, "/v1/corpora/notes", "writer", "", ""); resp.StatusCode != 403 {
		t.Errorf("a writer drops the corpus: %d %s, want 403", resp.StatusCode, body)
	}
	resp, body = do(http.MethodDelete, "/v1/corpora/notes/documents/notes/keeper.md", "writer", "", "")
	var del struct {
		EventID string `json:"event_id"`
	}
	if resp.StatusCode != 202 || json.Unmarshal(body, &del) != nil || del.EventID == "" {
		t.Fatalf("delete: %d %s, want 202 with the event id", resp.StatusCode, body)
	}
	resp, body = do(http.MethodDelete, "/v1/corpora/notes", "boss", "", "")
	var drop struct {
		EventID string `json:"event_id"`
	}
	if resp.StatusCode != 202 || json.Unmarshal(body, &drop) != nil || drop.EventID == "" {
		t.Fatalf("drop: %d %s, want 202 with the event id", resp.StatusCode, body)
	}
	msgs = bustest.Messages(t, b, pipeline.StreamName(events.KindDocuments), events.Subject(events.KindDocuments, "notes"))
	var deleted events.DocumentDeleted
	var dropped events.CorpusDropped
	if len(msgs) < 2 || json.Unmarshal(msgs[len(msgs)-2], &deleted) != nil || json.Unmarshal(msgs[len(msgs)-1], &dropped) != nil ||
		deleted.Schema != events.SchemaDocumentDeleted || deleted.ID != "notes/keeper.md" || deleted.EventID != del.EventID ||
		dropped.Schema != events.SchemaCorpusDropped || dropped.EventID != drop.EventID {
		t.Errorf("the last events on the corpus subject: %+v, %+v", deleted, dropped)
	}
}

// TestMCPUnknownCorpus: the MCP tools follow the API's rule: a corpus the platform holds
// nothing of is a tool error on every tool, one that exists but is still empty (a
// document published, no passage yet) is answered.
func TestMCPUnknownCorpus(t *testing.T) {
	srv, b := scopedService(t)
	if _, err := pipeline.PublishDocument(t.Context(), b, events.Document{Corpus: "notes", ID: "n", Text: "A note."}); err != nil {
		t.Fatal(err)
	}
	admin := connectAs(t, srv, "boss")
	for _, tool := range []string{mcpserver.ToolStats, mcpserver.ToolListDocuments} {
		res, err := admin.CallTool(t.Context(), &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"corpus": "nope"}})
		if err != nil || !res.IsError || !strings.Contains(toolText(res), "unknown corpus") {
			t.Errorf("%s of an unknown corpus: %v %+v, want a tool error", tool, err, res)
		}
		res, err = admin.CallTool(t.Context(), &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"corpus": "notes"}})
		if err != nil || res.IsError {
			t.Errorf("%s of a corpus without passages yet: %v %s, want an answer", tool, err, toolText(res))
		}
	}
}
