package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/graphrag/graphrag/pkg/errkind"
	"github.com/graphrag/graphrag/pkg/extractsettings"
	"github.com/graphrag/graphrag/services/query/access"
)

// settingsRoutes are the extraction settings routes with a request each answers with
// 200 or 202 (TestHTTPOpenAPI checks them against openapi.json).
var settingsRoutes = []struct{ method, pattern, path, body string }{
	{http.MethodGet, "/v1/corpora/{corpus}/extraction-settings", "/v1/corpora/demo/extraction-settings", ""},
	{http.MethodPut, "/v1/corpora/{corpus}/extraction-settings", "/v1/corpora/demo/extraction-settings", `{"entity_types":["PERSON"]}`},
	{http.MethodPost, "/v1/corpora/{corpus}/extraction-settings/proposal", "/v1/corpora/demo/extraction-settings/proposal", `{"sample":3}`},
	{http.MethodPost, "/v1/corpora/{corpus}/reindex", "/v1/corpora/demo/reindex", ""},
}

// fakeSettings keeps settings in memory, validated and versioned as extractsettings.Save
// does, and records the re-extractions and proposals asked for.
type fakeSettings struct {
	mu        sync.Mutex
	recs      map[string]extractsettings.Record
	reindexed []string
	samples   []int
	noModel   bool
}

func (f *fakeSettings) Settings(_ context.Context, corpus string) (extractsettings.Record, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r, ok := f.recs[corpus]; ok {
		return r, nil
	}
	return extractsettings.Record{Corpus: corpus}, nil
}

func (f *fakeSettings) SaveSettings(_ context.Context, corpus string, s extractsettings.Settings) (extractsettings.Record, error) {
	if err := s.Validate(); err != nil {
		return extractsettings.Record{}, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.recs == nil {
		f.recs = map[string]extractsettings.Record{}
	}
	r := extractsettings.Record{Corpus: corpus, Version: f.recs[corpus].Version + 1, Settings: s}
	f.recs[corpus] = r
	return r, nil
}

func (f *fakeSettings) Reindex(_ context.Context, corpus string) (extractsettings.Reindexed, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reindexed = append(f.reindexed, corpus)
	return extractsettings.Reindexed{Corpus: corpus, SettingsVersion: f.recs[corpus].Version, Documents: 2, Chunks: 3}, nil
}

func (f *fakeSettings) Propose(_ context.Context, _ string, sample int) (extractsettings.Proposal, error) {
	if f.noModel {
		return extractsettings.Proposal{}, errkind.Public(errkind.Unavailable, "proposing extraction settings needs a chat model")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.samples = append(f.samples, sample)
	return extractsettings.Proposal{Settings: extractsettings.Settings{EntityTypes: []string{"PERSON"}}, Passages: sample, Model: "fake"}, nil
}

// TestExtractionSettingsRoutes: settings round-trip through PUT and GET, invalid ones
// are 400s naming the field, a re-extraction is 202, a proposal passes its sample
// size, and the scopes are read for GET and write for the others.
func TestExtractionSettingsRoutes(t *testing.T) {
	xs := &fakeSettings{}
	cfg := DefaultConfig()
	cfg.Scoped = []access.Token{
		{Secret: "reader", Grant: access.Grant{Scope: access.Read, Corpora: []string{"demo"}}},
		{Secret: "writer", Grant: access.Grant{Scope: access.Write, Corpora: []string{"demo"}}},
	}
	srv := newTestAPI(t, cfg, append(newFakes().options(), WithExtractionSettings(xs))...)
	const path = "/v1/corpora/demo/extraction-settings"
	body := `{"entity_types":["STORM","RESEARCHER"],"domain":"Storm inquiries.","examples":[{"text":"Lin Oake studied Storm Brannagh.",
		"output":{"entities":[{"name":"Lin Oake","type":"RESEARCHER","description":"A professor."},{"name":"Storm Brannagh","type":"STORM","description":"A storm."}],
		"relationships":[{"source":"Lin Oake","target":"Storm Brannagh","type":"STUDIED","description":"She studied it.","strength":8}]}}]}`
	resp, got := call(t, srv, http.MethodPut, path, "writer", body)
	var rec extractsettings.Record
	decodeOK(t, resp, got, &rec)
	if rec.Version != 1 || !reflect.DeepEqual(rec.Settings.EntityTypes, []string{"STORM", "RESEARCHER"}) || len(rec.Settings.Examples) != 1 {
		t.Fatalf("saved %+v", rec)
	}
	resp, got = call(t, srv, http.MethodGet, path, "reader", "")
	var read extractsettings.Record
	decodeOK(t, resp, got, &read)
	if !reflect.DeepEqual(read, rec) {
		t.Errorf("read %+v, saved %+v", read, rec)
	}

	for _, tc := range []struct{ name, body, want string }{
		{"unknown field", `{"entity_type":["X"]}`, `unknown field "entity_type"`},
		{"lower-case type", `{"entity_types":["storm"]}`, `entity_types[0]: "storm" is not an upper-case name with underscores (e.g. STORM)`},
		{"empty type", `{"entity_types":[""]}`, "entity_types[0]: is empty"},
		{"duplicate type", `{"entity_types":["A","A"]}`, `entity_types[1]: "A" is listed twice`},
		{"domain too long", `{"domain":"` + strings.Repeat("x", extractsettings.MaxDomainBytes+1) + `"}`, "domain: is 2001 bytes long, limit 2000"},
		{"example not an object", `{"examples":["Lin Oake studied it."]}`, "examples"},
		{"example type not listed", `{"entity_types":["STORM"],"examples":[{"text":"t","output":{"entities":[{"name":"Lin","type":"PERSON","description":""}],"relationships":[]}}]}`,
			`examples[0].output.entities[0].type: "PERSON" is not one of entity_types`},
		{"example without entities", `{"examples":[{"text":"t","output":{"entities":[],"relationships":[]}}]}`, "examples[0].output.entities: is empty"},
		{"relationship to nothing", `{"examples":[{"text":"t","output":{"entities":[{"name":"A","type":"X","description":""}],"relationships":[{"source":"A","target":"B","type":"R","description":"","strength":3}]}}]}`,
			`examples[0].output.relationships[0].target: "B" is not the name of an entity of the example`},
		{"strength out of range", `{"examples":[{"text":"t","output":{"entities":[{"name":"A","type":"X","description":""},{"name":"B","type":"X","description":""}],"relationships":[{"source":"A","target":"B","type":"R","description":"","strength":11}]}}]}`,
			"strength: 11 is outside 1..10"},
		{"blank system prompt", `{"system_prompt":"   "}`, "system_prompt: holds only spaces"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, got := call(t, srv, http.MethodPut, path, "writer", tc.body)
			var e apiError
			_ = json.Unmarshal(got, &e)
			if resp.StatusCode != http.StatusBadRequest || !strings.Contains(e.Error, tc.want) {
				t.Errorf("status %d, body %s; want 400 with %q", resp.StatusCode, got, tc.want)
			}
		})
	}
	if r, _ := xs.Settings(t.Context(), "demo"); r.Version != 1 {
		t.Errorf("a refused PUT changed the settings: %+v", r)
	}

	for _, tc := range []struct {
		token, method, path, body string
		want                      int
	}{
		{"reader", http.MethodPut, path, `{}`, http.StatusForbidden},
		{"reader", http.MethodPost, "/v1/corpora/demo/reindex", "", http.StatusForbidden},
		{"reader", http.MethodPost, path + "/proposal", "", http.StatusForbidden},
		{"writer", http.MethodGet, "/v1/corpora/other/extraction-settings", "", http.StatusForbidden},
		{"writer", http.MethodPost, "/v1/corpora/demo/reindex", "", http.StatusAccepted},
		{"writer", http.MethodPost, "/v1/corpora/nothing/reindex", "", http.StatusForbidden},
		{"writer", http.MethodPost, path + "/proposal", "", http.StatusOK},
		{"writer", http.MethodPost, path + "/proposal", `{"sample":31}`, http.StatusBadRequest},
		{"writer", http.MethodPost, path + "/proposal", `{"sample":4}`, http.StatusOK},
	} {
		if resp, got := call(t, srv, tc.method, tc.path, tc.token, tc.body); resp.StatusCode != tc.want {
			t.Errorf("%s %s %s as %s: %d %s, want %d", tc.method, tc.path, tc.body, tc.token, resp.StatusCode, got, tc.want)
		}
	}
	if !reflect.DeepEqual(xs.reindexed, []string{"demo"}) || !reflect.DeepEqual(xs.samples, []int{extractsettings.DefaultSample, 4}) {
		t.Errorf("reindexed %v, samples %v", xs.reindexed, xs.samples)
	}

	// Without a chat model a proposal is a 503 that says so; an unknown corpus is a 404.
	xs.noModel = true
	if resp, got := call(t, srv, http.MethodPost, path+"/proposal", "writer", ""); resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(got), "needs a chat model") {
		t.Errorf("proposal without a model: %d %s", resp.StatusCode, got)
	}
	open := newTestAPI(t, DefaultConfig(), append(newFakes().options(), WithExtractionSettings(xs))...)
	if resp, got := call(t, open, http.MethodPost, "/v1/corpora/nothing/reindex", "", ""); resp.StatusCode != http.StatusNotFound {
		t.Errorf("reindex of an unknown corpus: %d %s", resp.StatusCode, got)
	}
	// Without the backend, the routes answer 503.
	bare := newTestAPI(t, DefaultConfig(), newFakes().options()...)
	if resp, got := call(t, bare, http.MethodGet, path, "", ""); resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("without a backend: %d %s", resp.StatusCode, got)
	}
}
