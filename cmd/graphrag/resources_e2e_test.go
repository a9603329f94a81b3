package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/graphrag/graphrag/pkg/catalog"
	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/pkg/export"
	"github.com/graphrag/graphrag/pkg/pipeline"
)

// apiCall sends one request to the test server and returns the status and body.
func apiCall(t *testing.T, srv *httptest.Server, method, path, ctype string, body io.Reader) (int, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, srv.URL+path, body)
	if err != nil {
		t.Fatal(err)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// uploadFiles posts files of examples/corpus as one multipart upload.
func uploadFiles(t *testing.T, srv *httptest.Server, corpus string, names ...string) []string {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join("../../examples/corpus", n))
		if err != nil {
			t.Fatal(err)
		}
		w, err := mw.CreateFormFile("file", n)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = w.Write(b)
	}
	_ = mw.Close()
	status, resp := apiCall(t, srv, http.MethodPost, "/v1/corpora/"+corpus+"/documents", mw.FormDataContentType(), &body)
	var out struct{ IDs []string }
	if status != http.StatusAccepted || json.Unmarshal(resp, &out) != nil {
		t.Fatalf("upload: %d %s", status, resp)
	}
	return out.IDs
}

// TestResourcesEndToEnd runs the platform with the query API, uploads documents over
// HTTP (and one broken document over NATS), and checks what the resource routes say
// against the pipeline: documents indexed or failed with the reason, the status JSON
// with the numbers of `graphrag status`, the corpus listing with the stores' counts,
// exports read by other libraries, and the chat endpoint with OpenAI's Python client.
func TestResourcesEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("end to end")
	}
	p := testPlatform(t, t.TempDir())
	st := startStack(t, p, fastConfig())
	mux := http.NewServeMux()
	st.Query.Mount(mux)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	ctx := t.Context()

	ids := uploadFiles(t, srv, "demo", "01_marrow_bay_overview.md", "02_gullhead_lighthouse.md", "05_marine_institute.md", "11_sellen_valley_railway.txt")
	status, body := apiCall(t, srv, http.MethodPost, "/v1/corpora/demo/documents", "application/json",
		strings.NewReader(`{"id":"notes/keeper","title":"The keeper","text":"Tom Arden keeps Gullhead Lighthouse. He trained at the Marrow Bay Marine Institute."}`))
	if status != http.StatusAccepted {
		t.Fatalf("JSON upload: %d %s", status, body)
	}
	ids = append(ids, "notes/keeper")
	// A document no upload would accept, published by another NATS client.
	if _, err := p.Bus.Publish(ctx, events.Subject(events.KindDocuments, "demo"),
		[]byte(`{"schema":"graphrag.document.v1","corpus":"demo","id":"blank","title":"Blank","text":"   "}`)); err != nil {
		t.Fatal(err)
	}

	waitIndexed(t, p, "demo")
	var cs catalog.Status
	status, body = apiCall(t, srv, http.MethodGet, "/v1/corpora/demo/status", "", nil)
	if status != 200 || json.Unmarshal(body, &cs) != nil {
		t.Fatalf("status: %d %s", status, body)
	}
	ps, err := pipeline.GetStatus(ctx, p.Bus, "demo")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cs.Stages, ps.Stages) || cs.Graph.Detections != ps.Graph.Detections || cs.Complete != ps.Complete {
		t.Errorf("status route %+v differs from pipeline.GetStatus %+v", cs.Status, ps)
	}
	if cs.State != catalog.StateFailed || len(cs.DeadLetters) != 1 || cs.DeadLetters[0].Stage != pipeline.StageChunker || !cs.Detection.Current || cs.Detection.Runs == 0 {
		t.Errorf("status %+v: want failed (one chunker dead letter), detection current", cs)
	}

	var page catalog.Page
	status, body = apiCall(t, srv, http.MethodGet, "/v1/corpora/demo/documents?limit=100", "", nil)
	if status != 200 || json.Unmarshal(body, &page) != nil {
		t.Fatalf("documents: %d %s", status, body)
	}
	byID := map[string]catalog.Document{}
	for _, d := range page.Documents {
		byID[d.ID] = d
	}
	for _, id := range ids {
		if d := byID[id]; d.State != catalog.DocumentIndexed || d.Chunks == 0 || d.Title == "" {
			t.Errorf("%s: %+v, want indexed with chunks and a title", id, d)
		}
	}
	if d := byID["02_gullhead_lighthouse.md"]; d.Title != "Gullhead Lighthouse and the Fenwick Family" {
		t.Errorf("title %q: want the Markdown heading, as graphrag publish reads it", d.Title)
	}
	if d := byID["blank"]; d.State != catalog.DocumentFailed || !strings.Contains(d.Reason, "text") {
		t.Errorf("blank: %+v, want failed with the chunker's reason", d)
	}

	var cl struct{ Corpora []catalog.Corpus }
	status, body = apiCall(t, srv, http.MethodGet, "/v1/corpora", "", nil)
	if status != 200 || json.Unmarshal(body, &cl) != nil || len(cl.Corpora) != 1 {
		t.Fatalf("corpora: %d %s", status, body)
	}
	gs, err := p.Graph.Stats(ctx, "demo")
	if err != nil {
		t.Fatal(err)
	}
	// The corpus counts what its listing shows: the indexed documents and the failed one.
	if c := cl.Corpora[0]; c.Documents != len(page.Documents) || c.Entities != gs.Entities || c.Relationships != gs.Relationships || c.Communities != gs.Communities || c.State != catalog.StateFailed {
		t.Errorf("corpus %+v, graph %+v: want %d documents and the graph's counts", c, gs, len(page.Documents))
	}

	t.Run("export read by other libraries", func(t *testing.T) { checkExports(t, srv, "demo") })
	t.Run("chat with the openai package", func(t *testing.T) {
		checkChatPython(t, srv.URL+"/v1", "demo", "Who keeps Gullhead Lighthouse?", "Arden")
	})
	t.Run("chat with the ollama package", func(t *testing.T) {
		checkOllamaPython(t, srv.URL, "demo", "Who keeps Gullhead Lighthouse?", "Arden")
	})
}

// checkExports exports the corpus through the API with `graphrag export -api` in two
// formats and reads them with networkx and pyarrow (scripts/export-check).
func checkExports(t *testing.T, srv *httptest.Server, corpus string) {
	root := t.TempDir()
	for _, f := range []export.Format{export.GraphML, export.Parquet, export.JSONL} {
		var out bytes.Buffer
		if err := dispatch(t.Context(), []string{"export", "-api", srv.URL, "-corpus", corpus, "-format", string(f), "-out", filepath.Join(root, string(f))}, &out, io.Discard); err != nil {
			t.Fatalf("graphrag export -format %s: %v", f, err)
		}
		t.Logf("%s", strings.TrimSpace(out.String()))
	}
	want := map[string]int{}
	for name, file := range map[string]string{"entities": export.EntitiesJSONL, "relationships": export.RelationshipsJSONL, "communities": export.CommunitiesJSONL, "chunks": export.ChunksJSONL} {
		b, err := os.ReadFile(filepath.Join(root, "jsonl", file))
		if err != nil {
			t.Fatal(err)
		}
		want[name] = bytes.Count(b, []byte("\n"))
	}
	b, _ := os.ReadFile(filepath.Join(root, "jsonl", export.CommunitiesJSONL))
	want["reports"] = bytes.Count(b, []byte(`"report":{`))
	if want["entities"] == 0 || want["chunks"] == 0 || want["reports"] == 0 {
		t.Fatalf("the JSON Lines export is empty: %v", want)
	}
	checkLevels(t, srv, corpus, filepath.Join(root, "jsonl", export.CommunitiesJSONL))
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed: the export readers cannot run")
	}
	wantJSON, _ := json.Marshal(want)
	out, err := exec.CommandContext(t.Context(), "../../scripts/export-check/run.sh", root, string(wantJSON)).CombinedOutput()
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == 3 {
		t.Skipf("the Python readers could not be installed from PyPI: %s", out)
	}
	if err != nil {
		t.Fatalf("the readers refused the export: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}

// checkChatPython asks the chat endpoint with OpenAI's official Python client
// (scripts/chat-check), streamed and not.
func checkChatPython(t *testing.T, baseURL, model, question, expect string) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed: the openai package cannot run")
	}
	start := time.Now()
	out, err := exec.CommandContext(t.Context(), "../../scripts/chat-check/run.sh", baseURL, "", model, question, expect).CombinedOutput()
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == 3 {
		t.Skipf("the openai package could not be installed from PyPI: %s", out)
	}
	if err != nil {
		t.Fatalf("the openai client failed: %v\n%s", err, out)
	}
	t.Logf("%s(%s)", out, fmt.Sprint(time.Since(start).Round(time.Millisecond)))
}

// checkOllamaPython asks the Ollama-compatible routes with Ollama's official Python
// client (scripts/ollama-check): chat and generate, streamed and not, the model list.
func checkOllamaPython(t *testing.T, host, model, question, expect string) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed: the ollama package cannot run")
	}
	start := time.Now()
	out, err := exec.CommandContext(t.Context(), "../../scripts/ollama-check/run.sh", host, "", model, question, expect).CombinedOutput()
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == 3 {
		t.Skipf("the ollama package could not be installed from PyPI: %s", out)
	}
	if err != nil {
		t.Fatalf("the ollama client failed: %v\n%s", err, out)
	}
	t.Logf("%s(%s)", out, fmt.Sprint(time.Since(start).Round(time.Millisecond)))
}

// checkLevels: a community has the same level in the API (the hierarchy, one community,
// the reports a global answer used) as in the export, 0 the roots.
func checkLevels(t *testing.T, srv *httptest.Server, corpus, communitiesJSONL string) {
	t.Helper()
	b, err := os.ReadFile(communitiesJSONL)
	if err != nil {
		t.Fatal(err)
	}
	exported, root := map[string]int{}, map[string]bool{}
	for line := range bytes.Lines(b) {
		var c struct {
			ID     string `json:"id"`
			Level  int    `json:"level"`
			Parent string `json:"parent"`
		}
		if err := json.Unmarshal(line, &c); err != nil {
			t.Fatal(err)
		}
		exported[c.ID], root[c.ID] = c.Level, c.Parent == ""
		if (c.Parent == "") != (c.Level == 0) {
			t.Errorf("exported community %s at level %d, parent %q: want level 0 exactly at the root", c.ID, c.Level, c.Parent)
		}
	}
	code, body := apiCall(t, srv, http.MethodGet, "/v1/corpora/"+corpus+"/communities", "", nil)
	var tree struct {
		Communities []struct {
			ID    string `json:"id"`
			Level int    `json:"level"`
		} `json:"communities"`
	}
	if err := json.Unmarshal(body, &tree); code != http.StatusOK || err != nil || len(tree.Communities) != len(exported) {
		t.Fatalf("communities: %d, %v, %d of %d exported", code, err, len(tree.Communities), len(exported))
	}
	for _, c := range tree.Communities {
		if l, ok := exported[c.ID]; !ok || l != c.Level {
			t.Errorf("community %s: level %d in the API, %d exported", c.ID, c.Level, l)
		}
	}
	one := tree.Communities[len(tree.Communities)-1]
	code, body = apiCall(t, srv, http.MethodGet, "/v1/corpora/"+corpus+"/communities/"+one.ID, "", nil)
	var c struct {
		Level int `json:"level"`
	}
	if err := json.Unmarshal(body, &c); code != http.StatusOK || err != nil || c.Level != exported[one.ID] {
		t.Errorf("community %s: %d, level %d in the API, %d exported", one.ID, code, c.Level, exported[one.ID])
	}
	for level := range 2 {
		q := fmt.Sprintf(`{"corpus":%q,"query":"What are the main themes?","mode":"global","level":%d}`, corpus, level)
		code, body = apiCall(t, srv, http.MethodPost, "/v1/query", "application/json", strings.NewReader(q))
		var r struct {
			Context struct {
				Communities []struct {
					ID    string `json:"id"`
					Level int    `json:"level"`
				} `json:"communities"`
			} `json:"context"`
		}
		if err := json.Unmarshal(body, &r); code != http.StatusOK || err != nil || len(r.Context.Communities) == 0 {
			t.Fatalf("global query at level %d: %d, %v: %s", level, code, err, body)
		}
		for _, c := range r.Context.Communities {
			if c.Level != level || exported[c.ID] != level || root[c.ID] != (level == 0) {
				t.Errorf("global query at level %d used community %s at level %d (a root: %v), exported at %d", level, c.ID, c.Level, root[c.ID], exported[c.ID])
			}
		}
	}
}
