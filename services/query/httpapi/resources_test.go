package httpapi

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"slices"
	"strings"
	"testing"

	"github.com/graphrag/graphrag/pkg/catalog"
	"github.com/graphrag/graphrag/pkg/pipeline"
	"github.com/graphrag/graphrag/services/query/access"
)

// resourceRoutes are the corpus, document, export and chat routes with a request each
// answers with 200 or 202 (TestHTTPOpenAPI checks them against openapi.json).
var resourceRoutes = []struct{ method, pattern, path, body string }{
	{http.MethodGet, "/v1/corpora", "/v1/corpora", ""},
	{http.MethodDelete, "/v1/corpora/{corpus}", "/v1/corpora/demo", ""},
	{http.MethodGet, "/v1/corpora/{corpus}/status", "/v1/corpora/demo/status", ""},
	{http.MethodGet, "/v1/corpora/{corpus}/documents", "/v1/corpora/demo/documents?limit=1", ""},
	{http.MethodPost, "/v1/corpora/{corpus}/documents", "/v1/corpora/demo/documents", `{"id":"new","text":"New text."}`},
	{http.MethodGet, "/v1/corpora/{corpus}/documents/{id}", "/v1/corpora/demo/documents/notes/a.md", ""},
	{http.MethodDelete, "/v1/corpora/{corpus}/documents/{id}", "/v1/corpora/demo/documents/notes%2Fa.md", ""},
	{http.MethodGet, "/v1/corpora/{corpus}/export", "/v1/corpora/demo/export?format=parquet", ""},
	{http.MethodPost, "/v1/chat/completions", "/v1/chat/completions", `{"model":"demo","messages":[{"role":"user","content":"Who designed the Analytical Engine?"}]}`},
	{http.MethodGet, "/v1/models", "/v1/models", ""},
	{http.MethodGet, "/v1/models/{model}", "/v1/models/demo", ""},
}

func TestResourceRoutes(t *testing.T) {
	f := newFakes()
	srv := newTestAPI(t, DefaultConfig(), f.options()...)

	resp, body := call(t, srv, http.MethodGet, "/v1/corpora", "", "")
	var cl corpusList
	decodeOK(t, resp, body, &cl)
	if len(cl.Corpora) != 2 || cl.Corpora[0] != f.corpora[0] {
		t.Errorf("corpora = %+v", cl.Corpora)
	}

	resp, body = call(t, srv, http.MethodGet, "/v1/corpora/demo/documents?limit=1", "", "")
	var p catalog.Page
	decodeOK(t, resp, body, &p)
	if len(p.Documents) != 1 || p.Documents[0].ID != "d1" || p.Next != "d1" {
		t.Errorf("first page = %+v", p)
	}
	resp, body = call(t, srv, http.MethodGet, "/v1/corpora/demo/documents?limit=1&cursor="+p.Next, "", "")
	decodeOK(t, resp, body, &p)
	if len(p.Documents) != 1 || p.Documents[0].ID != "notes/a.md" || p.Documents[0].State != catalog.DocumentFailed || p.Documents[0].Reason != "poisoned" {
		t.Errorf("second page = %+v", p)
	}

	for _, path := range []string{"/v1/corpora/demo/documents/notes/a.md", "/v1/corpora/demo/documents/notes%2Fa.md"} {
		resp, body = call(t, srv, http.MethodGet, path, "", "")
		var d catalog.Document
		decodeOK(t, resp, body, &d)
		if d.ID != "notes/a.md" {
			t.Errorf("%s = %+v", path, d)
		}
	}

	resp, body = call(t, srv, http.MethodGet, "/v1/corpora/demo/status", "", "")
	var st map[string]any
	if err := json.Unmarshal(body, &st); err != nil || resp.StatusCode != 200 || st["state"] != "empty" || st["corpus"] != "demo" {
		t.Errorf("status %d %s", resp.StatusCode, body)
	}

	resp, body = call(t, srv, http.MethodGet, "/v1/corpora/poisoned/status", "", "")
	var pst catalog.Status
	decodeOK(t, resp, body, &pst)
	if pst.Quarantined != 1 || len(pst.QuarantinedRecords) != 1 || pst.QuarantinedRecords[0].ID != "all" || pst.QuarantinedRecords[0].Stage != pipeline.StageGrapher ||
		pst.QuarantinedRecords[0].Reason == "" || pst.QuarantinedRecords[0].Collection == "" {
		t.Errorf("quarantined records in the status: %s", body)
	}
	if pst.Graph.Failures != 2 || pst.Graph.FailingSince.IsZero() || pst.Graph.LastError == "" || pst.Graph.NextRetry.IsZero() ||
		!strings.HasPrefix(pst.Detection.Failing, "community detection failing since") || pst.Detection.NextRetry == nil {
		t.Errorf("failing detection in the status: %s", body)
	}

	resp, body = call(t, srv, http.MethodDelete, "/v1/corpora/demo/documents/notes%2Fa.md", "", "")
	var del deletion
	if resp.StatusCode != http.StatusAccepted || json.Unmarshal(body, &del) != nil || del.EventID != "ev-1" {
		t.Errorf("delete: %d %s", resp.StatusCode, body)
	}
	resp, body = call(t, srv, http.MethodDelete, "/v1/corpora/demo", "", "")
	if resp.StatusCode != http.StatusAccepted || json.Unmarshal(body, &del) != nil || del.EventID != "ev-2" {
		t.Errorf("drop: %d %s", resp.StatusCode, body)
	}
	if !slices.Equal(f.deleted, []string{"demo/notes/a.md", "demo"}) {
		t.Errorf("deleter got %v", f.deleted)
	}

	for _, tc := range []struct {
		name, method, path string
		want               int
		msg                string
	}{
		{"unknown document", http.MethodGet, "/v1/corpora/demo/documents/nope", 404, "nope"},
		{"bad limit", http.MethodGet, "/v1/corpora/demo/documents?limit=0", 400, "limit"},
		{"huge limit", http.MethodGet, "/v1/corpora/demo/documents?limit=5000", 400, "limit"},
		{"bad cursor", http.MethodGet, "/v1/corpora/demo/documents?cursor=bad", 400, "cursor"},
		{"bad corpus", http.MethodGet, "/v1/corpora/Bad!/status", 400, "corpus"},
		{"bad document id", http.MethodDelete, "/v1/corpora/demo/documents/%20x", 400, "id"},
		{"bad corpus drop", http.MethodDelete, "/v1/corpora/Bad!", 400, "corpus"},
		{"unknown document delete", http.MethodDelete, "/v1/corpora/demo/documents/nope", 404, "nope"},
		{"unknown corpus drop", http.MethodDelete, "/v1/corpora/nope", 404, "nope"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := call(t, srv, tc.method, tc.path, "", "")
			if resp.StatusCode != tc.want {
				t.Fatalf("status %d, body %s: want %d", resp.StatusCode, body, tc.want)
			}
			if msg := apiErrorOf(t, resp, body); !strings.Contains(msg, tc.msg) {
				t.Errorf("error %q does not mention %q", msg, tc.msg)
			}
		})
	}

	t.Run("without backends", func(t *testing.T) {
		bare := newTestAPI(t, DefaultConfig())
		for _, r := range resourceRoutes {
			if r.pattern == "/v1/chat/completions" {
				continue // needs only the engine
			}
			resp, body := call(t, bare, r.method, r.path, "", r.body)
			if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), "not available") {
				t.Errorf("%s %s: status %d, body %s: want 503 saying what is not available", r.method, r.path, resp.StatusCode, body)
			}
		}
	})
}

// multipartBody builds a multipart/form-data body of files (name -> content) and
// extra form fields.
func multipartBody(t *testing.T, files [][2]string, fields map[string]string) (string, string) {
	t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	for _, f := range files {
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="file"; filename=%q`, f[0]))
		h.Set("Content-Type", "application/octet-stream")
		w, err := mw.CreatePart(h)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.WriteString(w, f[1])
	}
	for k, v := range fields {
		_ = mw.WriteField(k, v)
	}
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.String(), mw.FormDataContentType()
}

func upload(t *testing.T, srvURL string, client *http.Client, body, ctype, token string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srvURL+"/v1/corpora/demo/documents", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", ctype)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

func TestUpload(t *testing.T) {
	f := newFakes()
	cfg := DefaultConfig()
	cfg.MaxUploadBytes = 4 << 10
	srv := newTestAPI(t, cfg, f.options()...)

	resp, body := upload(t, srv.URL, srv.Client(), `{"id":"notes/new.md","title":"New","text":"# New\n\nText.","content_type":"text/markdown","metadata":{"team":"a"}}`, "application/json", "")
	var ur uploadResponse
	if resp.StatusCode != http.StatusAccepted || json.Unmarshal(body, &ur) != nil || !slices.Equal(ur.IDs, []string{"notes/new.md"}) {
		t.Fatalf("JSON upload: %d %s", resp.StatusCode, body)
	}
	if d := f.published[0]; d.Corpus != "demo" || d.Title != "New" || d.Metadata["team"] != "a" || d.ContentType != "text/markdown" {
		t.Errorf("published %+v", d)
	}

	html := "<html><head><title>Keeper's log</title></head><body><h1>Log</h1><p>The light was lit.</p></body></html>"
	body2, ctype := multipartBody(t, [][2]string{{"03_notes.md", "# Notes\n\nSome notes."}, {"log.html", html}, {"plain.txt", "Plain title\n\nPlain text."}}, nil)
	resp, body = upload(t, srv.URL, srv.Client(), body2, ctype, "")
	if resp.StatusCode != http.StatusAccepted || json.Unmarshal(body, &ur) != nil || !slices.Equal(ur.IDs, []string{"03_notes.md", "log.html", "plain.txt"}) {
		t.Fatalf("multipart upload: %d %s", resp.StatusCode, body)
	}
	got := map[string]string{}
	for _, d := range f.published[1:] {
		got[d.ID] = d.Title + "|" + d.ContentType
	}
	want := map[string]string{"03_notes.md": "Notes|text/markdown", "log.html": "Keeper's log|text/markdown", "plain.txt": "Plain title|text/plain"}
	for id, w := range want {
		if got[id] != w {
			t.Errorf("%s published as %q, want %q (read as graphrag publish reads it)", id, got[id], w)
		}
	}
	// A file's path is its id, as graphrag publish makes it: spaces, accents and
	// scripts kept, a folder upload's relative path kept, a path out of its folder cut.
	names := [][2]string{{"My Notes/Réunion 2024 (final).md", "# R"}, {"Rèunion.md", "# R"}, {"会议/记录.md", "# H"},
		{"../../etc/up.md", "# U"}, {`C:\Users\ada\notes 1.md`, "# N"}}
	body3, ctype3 := multipartBody(t, names, nil)
	resp, body = upload(t, srv.URL, srv.Client(), body3, ctype3, "")
	wantIDs := []string{"My Notes/Réunion 2024 (final).md", "Rèunion.md", "会议/记录.md", "up.md", "notes 1.md"}
	if resp.StatusCode != http.StatusAccepted || json.Unmarshal(body, &ur) != nil || !slices.Equal(ur.IDs, wantIDs) {
		t.Errorf("upload of file names with paths, spaces and accents: %d %s, want ids %q", resp.StatusCode, body, wantIDs)
	}
	n := len(f.published)

	big := strings.Repeat("x", 5<<10)
	bad := []struct {
		name, body, ctype string
		want              int
		msg               string
	}{
		{"no text", `{"id":"a"}`, "application/json", 400, "text"},
		{"bad id", `{"id":" a","text":"x"}`, "application/json", 400, "id"},
		{"unknown field", `{"id":"a","text":"x","txt":"y"}`, "application/json", 400, "txt"},
		{"bad content type field", `{"id":"a","text":"x","content_type":"text/html"}`, "application/json", 400, "content_type"},
		{"not JSON", `{"id":`, "application/json", 400, "body"},
		{"not UTF-8", "{\"id\":\"a\",\"text\":\"Caf\xe9\"}", "application/json", 400, "not valid UTF-8 (at byte 21)"},
		{"too large", `{"id":"a","text":"` + big + `"}`, "application/json", 413, "too large"},
		{"unsupported body", "id,text", "text/csv", 415, "Content-Type"},
		{"no content type", "x", "", 415, "Content-Type"},
	}
	docx, docxType := multipartBody(t, [][2]string{{"good.md", "# Good"}, {"report.docx", "PK..."}}, nil)
	bad = append(bad, struct {
		name, body, ctype string
		want              int
		msg               string
	}{"unsupported file", docx, docxType, 415, "report.docx"})
	field, fieldType := multipartBody(t, [][2]string{{"good.md", "# Good"}}, map[string]string{"title": "x"})
	bad = append(bad, struct {
		name, body, ctype string
		want              int
		msg               string
	}{"form field", field, fieldType, 400, "not a file"})
	empty, emptyType := multipartBody(t, [][2]string{{"empty.txt", "   "}}, nil)
	bad = append(bad, struct {
		name, body, ctype string
		want              int
		msg               string
	}{"empty file", empty, emptyType, 400, "no text"})
	dup, dupType := multipartBody(t, [][2]string{{"a.md", "# A"}, {"a.md", "# A again"}}, nil)
	bad = append(bad, struct {
		name, body, ctype string
		want              int
		msg               string
	}{"same id twice", dup, dupType, 400, "same document id"})
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := upload(t, srv.URL, srv.Client(), tc.body, tc.ctype, "")
			if resp.StatusCode != tc.want {
				t.Fatalf("status %d, body %s: want %d", resp.StatusCode, body, tc.want)
			}
			if msg := apiErrorOf(t, resp, body); !strings.Contains(msg, tc.msg) {
				t.Errorf("error %q does not mention %q", msg, tc.msg)
			}
		})
	}
	if len(f.published) != n {
		t.Errorf("a refused upload published %d documents", len(f.published)-n)
	}
	f.pubErr = errBackend
	if resp, body := upload(t, srv.URL, srv.Client(), `{"id":"a","text":"x"}`, "application/json", ""); resp.StatusCode != 500 || strings.Contains(string(body), "backend down") || !strings.Contains(string(body), "internal error") {
		t.Errorf("a failing bus: %d %s, want 500 in the API's terms, without the backend's text", resp.StatusCode, body)
	}
}

func TestExportRoute(t *testing.T) {
	f := newFakes()
	srv := newTestAPI(t, DefaultConfig(), f.options()...)
	resp, body := call(t, srv, http.MethodGet, "/v1/corpora/demo/export?format=graphml", "", "")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/zip" ||
		!strings.Contains(resp.Header.Get("Content-Disposition"), "demo-graphml.zip") {
		t.Fatalf("export: %d %v", resp.StatusCode, resp.Header)
	}
	zr, err := zip.NewReader(bytes.NewReader(body), int64(len(body)))
	if err != nil || len(zr.File) != 1 || zr.File[0].Name != "entities.graphml" {
		t.Fatalf("archive: %v, %v", zr, err)
	}
	if resp, _ := call(t, srv, http.MethodGet, "/v1/corpora/demo/export", "", ""); resp.StatusCode != 200 || f.exported[1] != "demo jsonl" {
		t.Errorf("default format: %d, %v", resp.StatusCode, f.exported)
	}
	for path, want := range map[string]int{"/v1/corpora/demo/export?format=csv": 400, "/v1/corpora/nope/export": 404} {
		if resp, body := call(t, srv, http.MethodGet, path, "", ""); resp.StatusCode != want {
			t.Errorf("%s: %d %s, want %d", path, resp.StatusCode, body, want)
		}
	}
	f.exportErr = errBackend
	if resp, body := call(t, srv, http.MethodGet, "/v1/corpora/demo/export", "", ""); resp.StatusCode != 500 || strings.Contains(string(body), "backend down") || !strings.Contains(string(body), `"error"`) {
		t.Errorf("a failure before the first byte: %d %s, want a 500 JSON error without the backend's text", resp.StatusCode, body)
	}
	// After the first byte the status is sent: the connection is aborted, so the client
	// sees an error, never a complete-looking archive.
	f.exportN = 100 << 10
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+"/v1/corpora/demo/export", nil)
	r, err := srv.Client().Do(req)
	if err == nil {
		_, err = io.ReadAll(r.Body)
		r.Body.Close()
	}
	if err == nil {
		t.Error("a failure mid-stream reached the client as a complete response")
	}
}

// TestScopes: every route needs its scope on the corpus it touches, and a refusal is a
// 403 naming what was needed and what the token has.
func TestScopes(t *testing.T) {
	f := newFakes()
	cfg := DefaultConfig()
	cfg.Tokens = []string{"plain"}
	cfg.Scoped = []access.Token{
		{Secret: "reader", Grant: access.Grant{Scope: access.Read, Corpora: []string{"demo"}}},
		{Secret: "writer", Grant: access.Grant{Scope: access.Write, Corpora: []string{"demo"}}},
		{Secret: "admin", Grant: access.Grant{Scope: access.Admin, Corpora: []string{"*"}}},
	}
	srv := newTestAPI(t, cfg, f.options()...)
	query := `{"corpus":"%s","query":"Who designed the Analytical Engine?"}`
	chat := `{"model":"%s","messages":[{"role":"user","content":"Who designed the Analytical Engine?"}]}`
	tests := []struct {
		token, method, path, body string
		want                      int
	}{
		{"reader", http.MethodGet, "/v1/corpora/demo/status", "", 200},
		{"reader", http.MethodGet, "/v1/corpora/demo/stats", "", 200},
		{"reader", http.MethodGet, "/v1/corpora/demo/documents", "", 200},
		{"reader", http.MethodGet, "/v1/corpora/demo/export", "", 200},
		{"reader", http.MethodGet, entityPath("demo", "Ada Lovelace"), "", 200},
		{"reader", http.MethodPost, "/v1/query", fmt.Sprintf(query, "demo"), 200},
		{"reader", http.MethodPost, "/v1/chat/completions", fmt.Sprintf(chat, "demo"), 200},
		{"reader", http.MethodGet, "/v1/corpora/other/status", "", 403},
		{"reader", http.MethodGet, "/v1/corpora/other/documents/x", "", 403},
		{"reader", http.MethodGet, "/v1/corpora/other/export", "", 403},
		{"reader", http.MethodGet, entityPath("other", "Ada Lovelace"), "", 403},
		{"reader", http.MethodPost, "/v1/query", fmt.Sprintf(query, "other"), 403},
		{"reader", http.MethodPost, "/v1/retrieve", fmt.Sprintf(query, "other"), 403},
		{"reader", http.MethodPost, "/v1/chat/completions", fmt.Sprintf(chat, "other"), 403},
		{"reader", http.MethodPost, "/v1/corpora/demo/documents", `{"id":"a","text":"x"}`, 403},
		{"reader", http.MethodDelete, "/v1/corpora/demo/documents/d1", "", 403},
		{"reader", http.MethodDelete, "/v1/corpora/demo", "", 403},
		{"writer", http.MethodPost, "/v1/corpora/demo/documents", `{"id":"a","text":"x"}`, 202},
		{"writer", http.MethodDelete, "/v1/corpora/demo/documents/d1", "", 202},
		{"writer", http.MethodPost, "/v1/corpora/other/documents", `{"id":"a","text":"x"}`, 403},
		{"writer", http.MethodDelete, "/v1/corpora/demo", "", 403},
		{"admin", http.MethodDelete, "/v1/corpora/other", "", 202},
		{"plain", http.MethodDelete, "/v1/corpora/demo", "", 202},
		{"plain", http.MethodPost, "/v1/corpora/other/documents", `{"id":"a","text":"x"}`, 202},
	}
	for _, tc := range tests {
		t.Run(tc.token+" "+tc.method+" "+tc.path, func(t *testing.T) {
			resp, body := call(t, srv, tc.method, tc.path, tc.token, tc.body)
			if resp.StatusCode != tc.want {
				t.Fatalf("status %d, body %s: want %d", resp.StatusCode, body, tc.want)
			}
			if tc.want != http.StatusForbidden {
				return
			}
			msg := string(body)
			if !strings.Contains(msg, "may not") || !strings.Contains(msg, "the token has") {
				t.Errorf("403 body %s does not give the reason", body)
			}
		})
	}
	// Listings show only the corpora the token may read.
	for token, want := range map[string][]string{"reader": {"demo"}, "admin": {"demo", "other"}} {
		resp, body := call(t, srv, http.MethodGet, "/v1/corpora", token, "")
		var cl corpusList
		decodeOK(t, resp, body, &cl)
		var names []string
		for _, c := range cl.Corpora {
			names = append(names, c.Name)
		}
		if !slices.Equal(names, want) {
			t.Errorf("%s lists %v, want %v", token, names, want)
		}
		resp, body = call(t, srv, http.MethodGet, "/v1/models", token, "")
		var ml modelList
		decodeOK(t, resp, body, &ml)
		if len(ml.Data) != len(want) {
			t.Errorf("%s: models %+v, want %v", token, ml.Data, want)
		}
	}
}

// TestUnknownCorpus: one rule on every route that reads a corpus: a corpus the platform
// holds nothing of is a 404 with the code corpus_not_found, never an empty answer; one
// that exists but is still empty ("other": documents published, no passage yet) is a
// 200.
func TestUnknownCorpus(t *testing.T) {
	srv := newTestAPI(t, DefaultConfig(), newFakes().options()...)
	for _, path := range []string{"/stats", "/status", "/documents", "/documents/d1", "/entities?prefix=a", "/entities/Ada%20Lovelace",
		"/entities/Ada%20Lovelace/passages", "/chunks/c1", "/communities", "/communities/x", "/export"} {
		t.Run(path, func(t *testing.T) {
			resp, body := call(t, srv, http.MethodGet, "/v1/corpora/nope"+path, "", "")
			var e apiError
			if resp.StatusCode != http.StatusNotFound || json.Unmarshal(body, &e) != nil || e.Code != "corpus_not_found" || !strings.Contains(e.Error, "nope") {
				t.Errorf("unknown corpus: %d %s, want 404 corpus_not_found", resp.StatusCode, body)
			}
		})
	}
	for _, path := range []string{"/stats", "/status", "/documents", "/entities?prefix=a", "/communities"} {
		if resp, body := call(t, srv, http.MethodGet, "/v1/corpora/other"+path, "", ""); resp.StatusCode != http.StatusOK {
			t.Errorf("%s of a corpus without passages yet: %d %s, want 200", path, resp.StatusCode, body)
		}
	}
	// The engine's own 404 (a question to a corpus without passages) has the same code.
	resp, body := call(t, srv, http.MethodPost, "/v1/query", "", `{"corpus":"nope","query":"Who?"}`)
	if e := (apiError{}); resp.StatusCode != http.StatusNotFound || json.Unmarshal(body, &e) != nil || e.Code != "corpus_not_found" {
		t.Errorf("question to an unknown corpus: %d %s, want 404 corpus_not_found", resp.StatusCode, body)
	}
}
