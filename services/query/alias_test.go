package query_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/curation"
	"github.com/graphrag/graphrag/pkg/schema"
	"github.com/graphrag/graphrag/services/query/mcpserver"
)

// curate appends ops to the demo corpus's log, the first applied of them recorded as
// the grapher records them (the demo graph is already what they make of it: the names
// they fold away are not in it).
func curate(t *testing.T, b *bus.Bus, applied int, ops ...curation.Op) {
	t.Helper()
	kv, err := b.KV(t.Context(), schema.StateBucket)
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range ops {
		if _, err := curation.Append(t.Context(), kv, "demo", op, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := curation.SetApplied(t.Context(), kv, "demo", applied); err != nil {
		t.Fatal(err)
	}
}

// TestEntityRoutesResolveCuratedNames: through the service's wiring (the log in the
// state bucket of a real NATS server), the entity routes and explore_entity_graph
// answer a name a curation merged or renamed away with the entity it now is, saying
// which name was asked for; a pending operation resolves nothing yet.
func TestEntityRoutesResolveCuratedNames(t *testing.T) {
	srv, b := scopedService(t)
	curate(t, b, 4,
		curation.Op{Action: curation.Merge, Entities: []string{"Lady Lovelace"}, Into: "Ada Lovelace"},
		curation.Op{Action: curation.Rename, Entity: "Babbage", Name: "Charles Babbage"},
		curation.Op{Action: curation.Merge, Entities: []string{"Babbage's Engine"}, Into: "Difference Engine"},
		curation.Op{Action: curation.Rename, Entity: "Difference Engine", Name: "Analytical Engine"},
		curation.Op{Action: curation.Merge, Entities: []string{"Menabrea"}, Into: "Ada Lovelace"}, // pending
	)
	get := func(path string) (int, map[string]any) {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+path, nil)
		req.Header.Set("Authorization", "Bearer reader")
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var body map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&body)
		return resp.StatusCode, body
	}
	for _, tc := range []struct {
		name, wantName, wantFrom string
		wantStatus               int
	}{
		{"Ada Lovelace", "Ada Lovelace", "", 200},
		{"Lady Lovelace", "Ada Lovelace", "Lady Lovelace", 200},            // merged
		{"babbage", "Charles Babbage", "babbage", 200},                     // renamed
		{"Babbage's Engine", "Analytical Engine", "Babbage's Engine", 200}, // merged, then renamed
		{"Difference Engine", "Analytical Engine", "Difference Engine", 200},
		{"Menabrea", "", "", 404}, // its merge is not applied yet
		{"Nobody", "", "", 404},
	} {
		for _, suffix := range []string{"?depth=1", "/passages"} {
			path := "/v1/corpora/demo/entities/" + url.PathEscape(tc.name) + suffix
			t.Run(path, func(t *testing.T) {
				status, body := get(path)
				if status != tc.wantStatus {
					t.Fatalf("status %d, body %v: want %d", status, body, tc.wantStatus)
				}
				if status != 200 {
					return
				}
				ent, _ := body["entity"].(map[string]any)
				if ent["name"] != tc.wantName {
					t.Errorf("entity %v, want %s", ent, tc.wantName)
				}
				if from, _ := body["resolved_from"].(string); from != tc.wantFrom {
					t.Errorf("resolved_from = %q, want %q", from, tc.wantFrom)
				}
			})
		}
	}
	t.Run(mcpserver.ToolExplore, func(t *testing.T) {
		res, err := connectAs(t, srv, "reader").CallTool(t.Context(), &mcp.CallToolParams{Name: mcpserver.ToolExplore,
			Arguments: map[string]any{"corpus": "demo", "entity_name": "Lady Lovelace", "depth": 1}})
		if err != nil || res.IsError {
			t.Fatalf("%v %s", err, toolText(res))
		}
		var got mcpserver.ExploreResult
		raw, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(raw, &got); err != nil || got.Entity.Name != "Ada Lovelace" {
			t.Fatalf("result %s, %v: want Ada Lovelace", raw, err)
		}
		var fields map[string]any
		_ = json.Unmarshal(raw, &fields)
		if fields["resolved_from"] != "Lady Lovelace" {
			t.Errorf("result %s: want resolved_from Lady Lovelace", raw)
		}
	})
}
