package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/graphrag/graphrag/pkg/curation"
	"github.com/graphrag/graphrag/pkg/normalize"
)

// fakeCurator keeps a log in memory and checks operations as curation.Curator does,
// against a fixed set of entities; one operation, op1, is in it from the start.
type fakeCurator struct {
	mu       sync.Mutex
	entities map[string]bool
	log      []curation.Entry
}

func newFakeCurator() *fakeCurator {
	return &fakeCurator{entities: map[string]bool{"ada lovelace": true, "analytical engine": true, "charles babbage": true},
		log: []curation.Entry{{ID: "op1", Op: curation.Op{Action: curation.SetType, Entity: "Ada Lovelace", Type: "person"}}}}
}

func (f *fakeCurator) Apply(_ context.Context, corpus string, op curation.Op) (curation.Entry, error) {
	if err := op.Validate(); err != nil {
		return curation.Entry{}, err
	}
	for _, n := range op.Names() {
		if !f.entities[normalize.Name(n)] {
			return curation.Entry{}, fmt.Errorf("%w: corpus %s has no entity %q", curation.ErrNotFound, corpus, n)
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	e := curation.Entry{ID: fmt.Sprintf("op%d", len(f.log)+1), Op: op}
	f.log = append(f.log, e)
	return e, nil
}

func (f *fakeCurator) Undo(_ context.Context, corpus, id string) (curation.Entry, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, e := range f.log {
		if e.Action == curation.Undo && e.Undoes == id {
			return curation.Entry{}, fmt.Errorf("%w: operation %s is already undone", curation.ErrConflict, id)
		}
	}
	for _, e := range f.log {
		if e.ID == id {
			u := curation.Entry{ID: fmt.Sprintf("op%d", len(f.log)+1), Op: curation.Op{Action: curation.Undo, Undoes: id}}
			f.log = append(f.log, u)
			return u, nil
		}
	}
	return curation.Entry{}, fmt.Errorf("%w: corpus %s has no curation operation %q", curation.ErrNotFound, corpus, id)
}

func (f *fakeCurator) Log(context.Context, string) ([]curation.Report, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]curation.Report, len(f.log))
	for i, e := range f.log {
		out[i] = curation.Report{Entry: e, State: "active"}
	}
	return out, nil
}

// curationRoutes are the curation routes, each with a request answered 200 or 202.
var curationRoutes = []struct{ method, pattern, path, body string }{
	{http.MethodGet, "/v1/corpora/{corpus}/curation", "/v1/corpora/demo/curation", ""},
	{http.MethodPost, "/v1/corpora/{corpus}/curation", "/v1/corpora/demo/curation", `{"action":"merge","entities":["Charles Babbage"],"into":"Ada Lovelace"}`},
	{http.MethodDelete, "/v1/corpora/{corpus}/curation/{id}", "/v1/corpora/demo/curation/op1", ""},
}

func TestCurationRoutes(t *testing.T) {
	srv, _ := newExploreAPI(t, DefaultConfig(), newFakes().options()...)
	for _, c := range []struct {
		name, method, path, body string
		status                   int
		want                     string
	}{
		{"merge", http.MethodPost, "/v1/corpora/demo/curation", `{"action":"merge","entities":["charles  BABBAGE"],"into":"Ada Lovelace"}`, http.StatusAccepted, ""},
		{"merge with itself", http.MethodPost, "/v1/corpora/demo/curation", `{"action":"merge","entities":["ada lovelace"],"into":"Ada Lovelace"}`, http.StatusBadRequest, "into itself"},
		{"unknown entity", http.MethodPost, "/v1/corpora/demo/curation", `{"action":"set_type","entity":"Grace Hopper","type":"person"}`, http.StatusNotFound, "Grace Hopper"},
		{"unknown action", http.MethodPost, "/v1/corpora/demo/curation", `{"action":"explode","entity":"Ada Lovelace"}`, http.StatusBadRequest, "unknown action"},
		{"unknown field", http.MethodPost, "/v1/corpora/demo/curation", `{"action":"pin","entity":"Ada Lovelace","desc":"x"}`, http.StatusBadRequest, "desc"},
		{"undo", http.MethodDelete, "/v1/corpora/demo/curation/op1", "", http.StatusAccepted, ""},
		{"undo again", http.MethodDelete, "/v1/corpora/demo/curation/op1", "", http.StatusConflict, "already undone"},
		{"undo unknown", http.MethodDelete, "/v1/corpora/demo/curation/nope", "", http.StatusNotFound, "nope"},
		{"unknown corpus", http.MethodGet, "/v1/corpora/nowhere/curation", "", http.StatusNotFound, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			resp, body := call(t, srv, c.method, c.path, "", c.body)
			if resp.StatusCode != c.status {
				t.Fatalf("status %d (%s), want %d", resp.StatusCode, body, c.status)
			}
			var e struct {
				Error string `json:"error"`
				ID    string `json:"id"`
			}
			if err := json.Unmarshal(body, &e); err != nil {
				t.Fatal(err)
			}
			if c.want != "" && !strings.Contains(e.Error, c.want) {
				t.Errorf("error %q does not say %q", e.Error, c.want)
			}
			if c.status == http.StatusAccepted && e.ID == "" {
				t.Errorf("accepted without an operation id: %s", body)
			}
		})
	}
	resp, body := call(t, srv, http.MethodGet, "/v1/corpora/demo/curation", "", "")
	var log curationLog
	decodeOK(t, resp, body, &log)
	if len(log.Operations) != 3 || log.Operations[1].Action != curation.Merge || log.Operations[2].Undoes != "op1" {
		t.Errorf("log = %+v, want op1, the merge and the undo of op1", log.Operations)
	}
}
