package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/graphrag/graphrag/pkg/curation"
	"github.com/graphrag/graphrag/pkg/platform"
)

// TestCurationEndToEnd checks on the embedded stores that a curated merge survives
// re-publishing and deleting documents (curationEndToEnd).
func TestCurationEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("end to end")
	}
	curationEndToEnd(t, testPlatform(t, t.TempDir()), "holmes")
}

// curationEndToEnd runs the platform on p with the query API, publishes two documents,
// merges "Holmes" into "Sherlock Holmes" through the API, and checks that the merge
// holds in the graph, the retrieval and the export; that it survives re-publishing the
// document that mentions "Holmes"; that deleting the one that mentions "Sherlock
// Holmes" makes the merge inactive, with the reason in the log, and "Holmes" its own
// entity again; and that publishing it again brings the merge back.
func curationEndToEnd(t *testing.T, p *platform.Platform, corpus string) {
	st := startStack(t, p, fastConfig())
	mux := http.NewServeMux()
	st.Query.Mount(mux)
	srv := httptest.NewServer(mux)
	defer srv.Close()

	publish := func(id, text string) {
		t.Helper()
		body, _ := json.Marshal(map[string]string{"id": id, "title": "Notes", "text": text})
		if status, resp := apiCall(t, srv, http.MethodPost, "/v1/corpora/"+corpus+"/documents", "application/json", strings.NewReader(string(body))); status != http.StatusAccepted {
			t.Fatalf("publishing %s: %d %s", id, status, resp)
		}
	}
	// entity answers the status of an entity's route and its name and neighbours'.
	entity := func(name string) (int, []string) {
		t.Helper()
		status, body := apiCall(t, srv, http.MethodGet, "/v1/corpora/"+corpus+"/entities/"+url.PathEscape(name)+"?depth=1", "", nil)
		type named struct {
			Name string `json:"name"`
		}
		var e struct {
			Entity    named   `json:"entity"`
			Neighbors []named `json:"neighbors"`
		}
		if status == http.StatusOK {
			if err := json.Unmarshal(body, &e); err != nil {
				t.Fatalf("entity %s: %v: %s", name, err, body)
			}
		}
		names := []string{e.Entity.Name}
		for _, n := range e.Neighbors {
			names = append(names, n.Name)
		}
		return status, names
	}
	curationLog := func() []curation.Report {
		t.Helper()
		status, body := apiCall(t, srv, http.MethodGet, "/v1/corpora/"+corpus+"/curation", "", nil)
		var log struct{ Operations []curation.Report }
		if status != http.StatusOK || json.Unmarshal(body, &log) != nil {
			t.Fatalf("curation log: %d %s", status, body)
		}
		return log.Operations
	}

	const (
		sherlock = "Sherlock Holmes lives at Baker Street in London. Sherlock Holmes plays the violin at Baker Street."
		holmes   = "Inspector Lestrade visits Detective Holmes at Scotland Yard. Detective Holmes and Inspector Lestrade discuss the case at Scotland Yard."
	)
	publish("sherlock", sherlock)
	publish("holmes", holmes)
	waitIndexed(t, p, corpus)
	if s, _ := entity("Detective Holmes"); s != http.StatusOK {
		_, b := apiCall(t, srv, http.MethodGet, "/v1/corpora/"+corpus+"/entities?prefix=d", "", nil)
		t.Fatalf("before curation, entity Holmes: %d; want the offline extraction to find it; have %s", s, b)
	}
	if _, names := entity("Sherlock Holmes"); slices.Contains(names, "Inspector Lestrade") {
		t.Fatalf("before curation, Sherlock Holmes is already a neighbour of Inspector Lestrade: %q", names)
	}

	// Merging an entity into itself and an unknown entity are refused.
	for body, want := range map[string]int{
		`{"action":"merge","entities":["detective  holmes"],"into":"Detective Holmes"}`: http.StatusBadRequest,
		`{"action":"merge","entities":["Mycroft"],"into":"Sherlock Holmes"}`:            http.StatusNotFound,
	} {
		if status, resp := apiCall(t, srv, http.MethodPost, "/v1/corpora/"+corpus+"/curation", "application/json", strings.NewReader(body)); status != want {
			t.Errorf("POST %s: %d %s, want %d", body, status, resp, want)
		}
	}
	// The merge through the CLI, which goes through the API.
	curate := func(args ...string) string {
		t.Helper()
		var out, errw bytes.Buffer
		if err := dispatch(t.Context(), append([]string{"curate", "-api", srv.URL, "-corpus", corpus}, args...), &out, &errw); err != nil {
			t.Fatalf("graphrag curate %q: %v (%s)", args, err, errw.String())
		}
		return out.String()
	}
	out := curate("merge", "Detective Holmes", "Sherlock Holmes")
	if !strings.Contains(out, `merge "Detective Holmes" into "Sherlock Holmes"`) {
		t.Errorf("graphrag curate merge said %q", out)
	}
	ops := curationLog()
	if len(ops) != 1 || ops[0].Action != curation.Merge {
		t.Fatalf("log after the merge: %+v", ops)
	}
	merge := ops[0].Entry
	waitIndexed(t, p, corpus)
	merged := func(when string) {
		t.Helper()
		// The merged name answers with the entity it was merged into.
		if s, names := entity("Detective Holmes"); s != http.StatusOK || names[0] != "Sherlock Holmes" {
			t.Errorf("%s: entity Detective Holmes answers %d with %q, want 200 with Sherlock Holmes (merged)", when, s, names[0])
		}
		// The merged entity keeps its name and has Detective Holmes's neighbours.
		s, names := entity("Sherlock Holmes")
		if s != http.StatusOK || names[0] != "Sherlock Holmes" || !slices.Contains(names, "Inspector Lestrade") || !slices.Contains(names, "Baker Street") {
			t.Errorf("%s: Sherlock Holmes (%d) and its neighbours are %q, want Inspector Lestrade and Baker Street among them", when, s, names)
		}
		ops := curationLog()
		if len(ops) != 1 || ops[0].ID != merge.ID || ops[0].State != "active" {
			t.Errorf("%s: log %+v, want the merge active", when, ops)
		}
	}
	merged("after the merge")

	// Retrieval sees the curated graph: the entities linked to a question about Holmes.
	status, resp := apiCall(t, srv, http.MethodPost, "/v1/retrieve", "application/json",
		strings.NewReader(`{"corpus":"`+corpus+`","query":"Who visits Detective Holmes at Scotland Yard?"}`))
	if status != http.StatusOK {
		t.Fatalf("retrieve: %d %s", status, resp)
	}
	var ret struct {
		Context struct {
			Entities []struct {
				Name string `json:"name"`
			} `json:"entities"`
		} `json:"context"`
	}
	if err := json.Unmarshal(resp, &ret); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ret.Context.Entities {
		names = append(names, strings.ToLower(e.Name))
	}
	if slices.Contains(names, "detective holmes") || !slices.Contains(names, "sherlock holmes") {
		t.Errorf("retrieval entities %q: want Sherlock Holmes, not Detective Holmes", names)
	}

	// Re-publishing the document that says "Holmes" keeps it merged.
	publish("holmes", holmes+" Detective Holmes smokes a pipe.")
	waitIndexed(t, p, corpus)
	merged("after re-publishing")

	// Deleting the last evidence of "Sherlock Holmes": the merge acts on nothing.
	if status, resp := apiCall(t, srv, http.MethodDelete, "/v1/corpora/"+corpus+"/documents/sherlock", "", nil); status != http.StatusAccepted {
		t.Fatalf("delete: %d %s", status, resp)
	}
	waitIndexed(t, p, corpus)
	ops = curationLog()
	if len(ops) != 1 || ops[0].State != "inactive" || !strings.Contains(ops[0].Reason, "Sherlock Holmes") {
		t.Errorf("after deleting its evidence, log %+v: want the merge inactive, naming Sherlock Holmes", ops)
	}
	if out := curate("log"); !strings.Contains(out, "inactive") || !strings.Contains(out, "Sherlock Holmes") {
		t.Errorf("graphrag curate log says %q, want the merge inactive", out)
	}
	if s, names := entity("Detective Holmes"); s != http.StatusOK || names[0] != "Detective Holmes" {
		t.Errorf("with the merge inactive, entity Detective Holmes answers %d with %q, want 200 with itself", s, names[0])
	}

	// The evidence comes back, and the merge with it; then undo it.
	publish("sherlock", sherlock)
	waitIndexed(t, p, corpus)
	merged("after publishing the evidence again")
	curate("undo", merge.ID)
	if status, resp := apiCall(t, srv, http.MethodDelete, "/v1/corpora/"+corpus+"/curation/"+merge.ID, "", nil); status != http.StatusConflict {
		t.Errorf("undo again: %d %s, want 409", status, resp)
	}
	waitIndexed(t, p, corpus)
	if s, names := entity("Detective Holmes"); s != http.StatusOK || names[0] != "Detective Holmes" {
		t.Errorf("after undo, entity Detective Holmes answers %d with %q, want 200 with itself", s, names[0])
	}
	if ops := curationLog(); len(ops) != 2 || ops[0].State != "undone" || ops[0].UndoneBy != ops[1].ID {
		t.Errorf("after undo, log %+v", ops)
	}

	// An added relationship: a neighbour no passage names together, with retrieval and
	// the passages route still answering (the relationship has no passage of its own).
	curate("add-rel", "Sherlock Holmes", "Inspector Lestrade", "WORKS_WITH")
	waitIndexed(t, p, corpus)
	if _, names := entity("Sherlock Holmes"); !slices.Contains(names, "Inspector Lestrade") {
		t.Errorf("after add-rel, Sherlock Holmes's neighbours are %q", names)
	}
	for _, path := range []string{"/v1/corpora/" + corpus + "/entities/" + url.PathEscape("Sherlock Holmes") + "/passages"} {
		if status, resp := apiCall(t, srv, http.MethodGet, path, "", nil); status != http.StatusOK {
			t.Errorf("GET %s: %d %s", path, status, resp)
		}
	}
	if status, resp := apiCall(t, srv, http.MethodPost, "/v1/query", "application/json",
		strings.NewReader(`{"corpus":"`+corpus+`","query":"Who works with Inspector Lestrade?"}`)); status != http.StatusOK {
		t.Errorf("query after add-rel: %d %s", status, resp)
	}
}
