package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/graphrag/graphrag/pkg/curation"
	"github.com/graphrag/graphrag/pkg/graphstore"
	"github.com/graphrag/graphrag/pkg/normalize"
	"github.com/graphrag/graphrag/pkg/schema"
	"github.com/graphrag/graphrag/pkg/vectorstore"
	"github.com/graphrag/graphrag/services/query/ask"
	"github.com/graphrag/graphrag/services/query/engine"
	"github.com/graphrag/graphrag/services/query/explore"
	"github.com/graphrag/graphrag/services/query/internal/querytest"
)

// Community ids of the exploration fixture: two level-0 communities under one level-1.
const (
	commPeople  = "c0-people"
	commMachine = "c0-machine"
	commTop     = "c1-all"
)

// newExploreAPI serves the demo fixture with PageRank, a two-level community hierarchy
// and a report for each community but commMachine (a community whose report is not
// written yet).
func newExploreAPI(t *testing.T, cfg Config, opts ...Option) (*httptest.Server, querytest.Stores) {
	t.Helper()
	st := querytest.Demo(t)
	ctx := t.Context()
	ada, babbage, eng := normalize.Name("Ada Lovelace"), normalize.Name("Charles Babbage"), normalize.Name("Analytical Engine")
	if err := st.Graph.SetPageRank(ctx, "demo", map[string]float64{ada: 0.5, babbage: 0.3, eng: 0.2}); err != nil {
		t.Fatalf("setting PageRank: %v", err)
	}
	err := st.Graph.ReplaceCommunities(ctx, "demo", []graphstore.Community{
		{ID: commPeople, Level: 0, ParentID: commTop, Members: []string{ada, babbage}},
		{ID: commMachine, Level: 0, ParentID: commTop, Members: []string{eng}},
		{ID: commTop, Level: 1, Members: []string{ada, babbage, eng}},
	})
	if err != nil {
		t.Fatalf("storing communities: %v", err)
	}
	coll := schema.Collection("demo", schema.Communities)
	if err := st.Vectors.EnsureCollection(ctx, vectorstore.CollectionSpec{Name: coll, Dim: querytest.Dim}); err != nil {
		t.Fatalf("creating reports collection: %v", err)
	}
	var recs []vectorstore.Record
	for _, r := range []struct{ id, level, title, rating, json string }{
		{commPeople, "0", "Lovelace and Babbage", "7.5",
			`{"title":"Lovelace and Babbage","summary":"Two collaborators.","findings":[{"summary":"They worked together","explanation":"Lovelace translated a memoir."}],"rating":7.5}`},
		{commTop, "1", "The Analytical Engine circle", "9", ""}, // an older record without the JSON
	} {
		vec, err := st.Embedder.Embed(ctx, []string{r.title})
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, vectorstore.Record{ID: r.id, Vector: vec[0], Text: r.title + "\n\nThe summary of " + r.id + ".",
			Attrs: map[string]string{schema.ReportLevel: r.level, schema.ReportTitle: r.title, schema.ReportRating: r.rating, schema.ReportJSON: r.json}})
	}
	if err := st.Vectors.Upsert(ctx, coll, recs); err != nil {
		t.Fatalf("writing reports: %v", err)
	}
	e, err := ask.New(engine.Config{}, ask.Config{}, engine.Deps{Graph: st.Graph, Vectors: st.Vectors, Embedder: st.Embedder, Logger: querytest.Logger()}, nil)
	if err != nil {
		t.Fatalf("building engine: %v", err)
	}
	srv := httptest.NewServer(mustNew(t, e, explore.New(st.Graph, st.Vectors), cfg, opts...))
	t.Cleanup(srv.Close)
	return srv, st
}

func TestHTTPSearchEntities(t *testing.T) {
	srv, st := newExploreAPI(t, DefaultConfig())
	tests := []struct {
		name, query string
		want        []string // names, in order
	}{
		{"whole-name prefix", "?prefix=ada", []string{"Ada Lovelace"}},
		{"normalized prefix", "?prefix=" + url.QueryEscape("  CHARLES b"), []string{"Charles Babbage"}},
		{"word prefix", "?prefix=love", []string{"Ada Lovelace"}},
		{"exact name first, then by PageRank", "?prefix=a", []string{"Ada Lovelace", "Analytical Engine"}},
		{"limit", "?prefix=a&limit=1", []string{"Ada Lovelace"}},
		{"no match", "?prefix=zeppelin", nil},
		{"empty prefix", "?prefix=", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := call(t, srv, http.MethodGet, "/v1/corpora/demo/entities"+tc.query, "", "")
			var got struct {
				Entities []explore.EntityMatch `json:"entities"`
			}
			decodeOK(t, resp, body, &got)
			if got.Entities == nil {
				t.Errorf("entities is null, want a list: %s", body)
			}
			var names []string
			for _, m := range got.Entities {
				names = append(names, m.Name)
				if m.Mentions < 1 || m.Type == "" || m.Key != normalize.Name(m.Name) {
					t.Errorf("match %+v lacks its mentions, type or key", m)
				}
			}
			if !slices.Equal(names, tc.want) {
				t.Errorf("names = %v, want %v", names, tc.want)
			}
		})
	}
	t.Run("an entity merged later is found", func(t *testing.T) {
		call(t, srv, http.MethodGet, "/v1/corpora/demo/entities?prefix=lu", "", "") // fills the key index
		err := st.Graph.Merge(t.Context(), "demo", []graphstore.ChunkExtraction{{ChunkID: "c2", DocumentID: "d1",
			Entities: []graphstore.EntityMention{querytest.Mention("Luigi Menabrea", "PERSON", "Engineer.")}}})
		if err != nil {
			t.Fatal(err)
		}
		resp, body := call(t, srv, http.MethodGet, "/v1/corpora/demo/entities?prefix=lu", "", "")
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "Luigi Menabrea") {
			t.Errorf("status %d, body %s: want Luigi Menabrea", resp.StatusCode, body)
		}
	})
}

func TestHTTPEntityForExplorer(t *testing.T) {
	srv, _ := newExploreAPI(t, DefaultConfig())
	resp, body := call(t, srv, http.MethodGet, entityPath("demo", "Ada Lovelace")+"?depth=1", "", "")
	var nb explore.Neighborhood
	decodeOK(t, resp, body, &nb)
	// Per level, the coarsest first (level 0 is the root, as in every export).
	if !slices.Equal(nb.Entity.Communities, []string{commTop, commPeople}) || nb.Entity.Mentions != 2 || nb.Entity.PageRank != 0.5 {
		t.Errorf("entity = %+v, want communities [%s %s], 2 mentions, PageRank 0.5", nb.Entity, commTop, commPeople)
	}
	for _, n := range nb.Neighbors {
		if len(n.Communities) != 2 || n.Mentions != 2 {
			t.Errorf("neighbour %+v lacks its communities or mentions", n)
		}
	}
	for _, r := range nb.Relationships {
		if len(r.Evidence) == 0 {
			t.Errorf("relationship %+v has no evidence", r)
		}
	}
	t.Run("limit", func(t *testing.T) {
		resp, body := call(t, srv, http.MethodGet, entityPath("demo", "Ada Lovelace")+"?depth=1&limit=1", "", "")
		var nb explore.Neighborhood
		decodeOK(t, resp, body, &nb)
		// Both are one hop away: the higher PageRank stays.
		if len(nb.Neighbors) != 1 || nb.Neighbors[0].Key != normalize.Name("Charles Babbage") {
			t.Errorf("neighbours = %+v, want only Charles Babbage", nb.Neighbors)
		}
	})
}

func TestHTTPEntityPassages(t *testing.T) {
	srv, _ := newExploreAPI(t, DefaultConfig())
	resp, body := call(t, srv, http.MethodGet, entityPath("demo", "ada lovelace")+"/passages", "", "")
	var got explore.EntityPassages
	decodeOK(t, resp, body, &got)
	if got.Entity.Name != "Ada Lovelace" || len(got.Entity.Descriptions) == 0 {
		t.Errorf("entity = %+v, want Ada Lovelace with her descriptions", got.Entity)
	}
	var ids []string
	for _, p := range got.Passages {
		ids = append(ids, p.ID)
		if p.DocumentID != "d1" || !strings.Contains(p.Text, "Lovelace") || p.Title != "Ada Lovelace" {
			t.Errorf("passage %+v, want a passage of d1 naming Lovelace", p)
		}
	}
	slices.Sort(ids)
	if !slices.Equal(ids, []string{"c1", "c2"}) {
		t.Errorf("passages = %v, want c1 c2", ids)
	}
	resp, body = call(t, srv, http.MethodGet, entityPath("demo", "ada lovelace")+"/passages?limit=1", "", "")
	decodeOK(t, resp, body, &got)
	if len(got.Passages) != 1 {
		t.Errorf("limit=1 gave %d passages", len(got.Passages))
	}
}

func TestHTTPChunk(t *testing.T) {
	srv, _ := newExploreAPI(t, DefaultConfig())
	resp, body := call(t, srv, http.MethodGet, "/v1/corpora/demo/chunks/c3", "", "")
	var p explore.Passage
	decodeOK(t, resp, body, &p)
	want := querytest.DemoPassages[2]
	if p.ID != "c3" || p.DocumentID != want.Doc || p.Title != want.Title || p.Text != want.Text {
		t.Errorf("chunk = %+v, want %+v", p, want)
	}
}

func TestHTTPCommunities(t *testing.T) {
	srv, _ := newExploreAPI(t, DefaultConfig())
	type summary struct {
		ID       string   `json:"id"`
		Level    int      `json:"level"`
		Parent   string   `json:"parent"`
		Children []string `json:"children"`
		Title    string   `json:"title"`
		Rating   float64  `json:"rating"`
		Members  int      `json:"members"`
	}
	var all struct {
		Levels      int       `json:"levels"`
		Communities []summary `json:"communities"`
	}
	resp, body := call(t, srv, http.MethodGet, "/v1/corpora/demo/communities", "", "")
	decodeOK(t, resp, body, &all)
	// Level 0 is the root, the coarsest, as in every export.
	want := []summary{
		{ID: commTop, Level: 0, Children: []string{commMachine, commPeople}, Title: "The Analytical Engine circle", Rating: 9, Members: 3},
		{ID: commMachine, Level: 1, Parent: commTop, Children: []string{}, Members: 1},
		{ID: commPeople, Level: 1, Parent: commTop, Children: []string{}, Title: "Lovelace and Babbage", Rating: 7.5, Members: 2},
	}
	if all.Levels != 2 || len(all.Communities) != len(want) {
		t.Fatalf("got %d levels, %d communities: want 2 and %d: %s", all.Levels, len(all.Communities), len(want), body)
	}
	for i, c := range all.Communities {
		w := want[i]
		if c.ID != w.ID || c.Level != w.Level || c.Parent != w.Parent || !slices.Equal(c.Children, w.Children) ||
			c.Title != w.Title || c.Rating != w.Rating || c.Members != w.Members {
			t.Errorf("community %d = %+v, want %+v", i, c, w)
		}
	}
	resp, body = call(t, srv, http.MethodGet, "/v1/corpora/demo/communities?level=0", "", "")
	decodeOK(t, resp, body, &all)
	if len(all.Communities) != 1 || all.Communities[0].ID != commTop {
		t.Errorf("level 0 = %+v, want only %s", all.Communities, commTop)
	}
	resp, body = call(t, srv, http.MethodGet, "/v1/corpora/demo/communities?level=2", "", "")
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "outside 0..1") {
		t.Errorf("a level the hierarchy lacks: status %d, body %s: want 400 naming the levels", resp.StatusCode, body)
	}
}

func TestHTTPCommunity(t *testing.T) {
	srv, _ := newExploreAPI(t, DefaultConfig())
	resp, body := call(t, srv, http.MethodGet, "/v1/corpora/demo/communities/"+commPeople, "", "")
	var c explore.CommunityReport
	decodeOK(t, resp, body, &c)
	if c.Title != "Lovelace and Babbage" || c.Summary != "Two collaborators." || c.Rating != 7.5 || c.MemberCount != 2 ||
		len(c.Findings) != 1 || c.Findings[0].Explanation == "" || c.Parent != commTop || c.Level != 1 {
		t.Errorf("community = %+v, want the fixture's report", c)
	}
	var names []string
	for _, m := range c.Members {
		names = append(names, m.Name)
	}
	if !slices.Equal(names, []string{"Ada Lovelace", "Charles Babbage"}) {
		t.Errorf("members = %v, want Ada Lovelace then Charles Babbage (by PageRank)", names)
	}
	// A record without the report JSON falls back to its attributes and text.
	resp, body = call(t, srv, http.MethodGet, "/v1/corpora/demo/communities/"+commTop, "", "")
	decodeOK(t, resp, body, &c)
	if c.Title != "The Analytical Engine circle" || c.Rating != 9 || c.Summary != "The summary of "+commTop+"." || len(c.Members) != 3 {
		t.Errorf("community = %+v, want the record's title, rating, summary and 3 members", c)
	}
	// A community without a report yet still lists its members.
	resp, body = call(t, srv, http.MethodGet, "/v1/corpora/demo/communities/"+commMachine, "", "")
	decodeOK(t, resp, body, &c)
	if c.Title != "" || len(c.Members) != 1 || c.Findings == nil {
		t.Errorf("community = %+v, want no title, one member, an empty findings list", c)
	}
}

func TestHTTPExploreErrors(t *testing.T) {
	cfg := DefaultConfig()
	srv, _ := newExploreAPI(t, cfg)
	tests := []struct {
		path       string
		wantStatus int
	}{
		{"/v1/corpora/demo/entities?prefix=a&limit=0", 400},
		{"/v1/corpora/demo/entities?prefix=a&limit=51", 400},
		{"/v1/corpora/demo/entities?prefix=a&limit=x", 400},
		{"/v1/corpora/Bad%20Corpus/entities?prefix=a", 400},
		{entityPath("demo", "Ada Lovelace") + "?limit=-1", 400},
		{entityPath("demo", "Ada Lovelace") + "?limit=5001", 400},
		{entityPath("demo", "Ada Lovelace") + "/passages?limit=0", 400},
		{entityPath("demo", "Nobody") + "/passages", 404},
		{"/v1/corpora/demo/chunks/nope", 404},
		{"/v1/corpora/demo/communities?level=-1", 400},
		{"/v1/corpora/demo/communities?level=x", 400},
		{"/v1/corpora/demo/communities/nope", 404},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			resp, body := call(t, srv, http.MethodGet, tc.path, "", "")
			if resp.StatusCode != tc.wantStatus {
				t.Fatalf("status %d, body %s: want %d", resp.StatusCode, body, tc.wantStatus)
			}
			apiErrorOf(t, resp, body)
		})
	}
}

func TestHTTPExploreGuarded(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Tokens = []string{"alpha-token"}
	srv, _ := newExploreAPI(t, cfg)
	for _, p := range []string{"/v1/corpora/demo/entities?prefix=a", entityPath("demo", "Ada Lovelace") + "/passages",
		"/v1/corpora/demo/chunks/c1", "/v1/corpora/demo/communities", "/v1/corpora/demo/communities/" + commTop} {
		if resp, body := call(t, srv, http.MethodGet, p, "", ""); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s without a token: status %d, body %s: want 401", p, resp.StatusCode, body)
		}
		resp, body := call(t, srv, http.MethodGet, p, "alpha-token", "")
		if resp.StatusCode != http.StatusOK || !json.Valid(body) {
			t.Errorf("%s with the token: status %d, body %s: want 200 JSON", p, resp.StatusCode, body)
		}
	}
}

// TestHTTPEntityResolvesCuratedNames: the entity routes answer a name a curation merged
// or renamed away (the demo graph as the grapher leaves it: those names are not in it)
// with the entity it is now, naming the name asked for in resolved_from.
func TestHTTPEntityResolvesCuratedNames(t *testing.T) {
	st := querytest.Demo(t)
	aliases := curation.Fold([]curation.Entry{
		{ID: "1", Op: curation.Op{Action: curation.Merge, Entities: []string{"Lady Lovelace"}, Into: "Ada Lovelace"}},
		{ID: "2", Op: curation.Op{Action: curation.Rename, Entity: "Babbage", Name: "Charles Babbage"}},
		{ID: "3", Op: curation.Op{Action: curation.Merge, Entities: []string{"Babbage's Engine"}, Into: "Difference Engine"}},
		{ID: "4", Op: curation.Op{Action: curation.Rename, Entity: "Difference Engine", Name: "Analytical Engine"}},
	}, nil).Aliases()
	x := explore.New(st.Graph, st.Vectors, explore.WithAliases(func(context.Context, string) (map[string]string, error) { return aliases, nil }))
	e, err := ask.New(engine.Config{}, ask.Config{}, engine.Deps{Graph: st.Graph, Vectors: st.Vectors, Embedder: st.Embedder, Logger: querytest.Logger()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(mustNew(t, e, x, DefaultConfig()))
	t.Cleanup(srv.Close)
	for _, tc := range []struct{ name, wantName, wantFrom string }{
		{"Ada Lovelace", "Ada Lovelace", ""},
		{"Lady Lovelace", "Ada Lovelace", "Lady Lovelace"},              // merged
		{"Babbage", "Charles Babbage", "Babbage"},                       // renamed
		{"Babbage's Engine", "Analytical Engine", "Babbage's Engine"},   // merged, then renamed
		{"Difference Engine", "Analytical Engine", "Difference Engine"}, // merged into, then renamed
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := call(t, srv, http.MethodGet, entityPath("demo", tc.name)+"?depth=1", "", "")
			var nb explore.Neighborhood
			decodeOK(t, resp, body, &nb)
			if nb.Entity.Name != tc.wantName || nb.ResolvedFrom != tc.wantFrom || len(nb.Neighbors) == 0 {
				t.Errorf("neighbourhood of %s resolved from %q with %d neighbours, want %s from %q: %s",
					nb.Entity.Name, nb.ResolvedFrom, len(nb.Neighbors), tc.wantName, tc.wantFrom, body)
			}
			if tc.wantFrom == "" && strings.Contains(string(body), "resolved_from") {
				t.Errorf("the entity's own name gave resolved_from: %s", body)
			}
			resp, body = call(t, srv, http.MethodGet, entityPath("demo", tc.name)+"/passages", "", "")
			var ps explore.EntityPassages
			decodeOK(t, resp, body, &ps)
			if ps.Entity.Name != tc.wantName || ps.ResolvedFrom != tc.wantFrom || len(ps.Passages) == 0 {
				t.Errorf("passages of %s resolved from %q: %d, want %s from %q: %s",
					ps.Entity.Name, ps.ResolvedFrom, len(ps.Passages), tc.wantName, tc.wantFrom, body)
			}
		})
	}
	for _, p := range []string{entityPath("demo", "Nobody"), entityPath("demo", "Nobody") + "/passages"} {
		resp, body := call(t, srv, http.MethodGet, p, "", "")
		if resp.StatusCode != http.StatusNotFound {
			t.Fatalf("%s: status %d, body %s: want 404", p, resp.StatusCode, body)
		}
		if msg := apiErrorOf(t, resp, body); !strings.Contains(msg, `entity "Nobody"`) {
			t.Errorf("%s: error %q does not name the entity", p, msg)
		}
	}
}
