package httpapi

import (
	"context"
	"net/http"

	"github.com/graphrag/graphrag/pkg/curation"
	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/services/query/engine"
)

// Curator takes curation operations on a corpus's graph (a *curation.Curator): they
// are appended to the corpus's log and applied by the grapher, asynchronously.
type Curator interface {
	Apply(ctx context.Context, corpus string, op curation.Op) (curation.Entry, error)
	Undo(ctx context.Context, corpus, id string) (curation.Entry, error)
	Log(ctx context.Context, corpus string) ([]curation.Report, error)
}

// WithCurator serves the curation routes through c.
func WithCurator(c Curator) Option { return optionFunc(func(a *API) { a.curator = c }) }

// curationLog is the body of GET /v1/corpora/{corpus}/curation.
type curationLog struct {
	Operations []curation.Report `json:"operations"`
}

// addCurationRoutes registers the curation routes.
func (a *API) addCurationRoutes() {
	a.mux.HandleFunc("GET /v1/corpora/{corpus}/curation", a.guard(a.known(a.curationLog)))
	a.mux.HandleFunc("POST /v1/corpora/{corpus}/curation", a.guard(a.known(a.curate)))
	a.mux.HandleFunc("DELETE /v1/corpora/{corpus}/curation/{id}", a.guard(a.known(a.undoCuration)))
}

// curatorFor checks the corpus name and that the service can curate.
func (a *API) curatorFor(r *http.Request) (string, error) {
	corpus := r.PathValue("corpus")
	if err := events.ValidateCorpus(corpus); err != nil {
		return "", engine.BadRequestf("%v", err)
	}
	if a.curator == nil {
		return "", &unavailable{"curation"}
	}
	return corpus, nil
}

func (a *API) curationLog(w http.ResponseWriter, r *http.Request) {
	corpus, err := a.curatorFor(r)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	ops, err := a.curator.Log(r.Context(), corpus)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	if ops == nil {
		ops = []curation.Report{}
	}
	writeJSON(w, http.StatusOK, curationLog{Operations: ops})
}

func (a *API) curate(w http.ResponseWriter, r *http.Request) {
	corpus, err := a.curatorFor(r)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	var op curation.Op
	if err := decodeBody(r, &op); err != nil {
		a.fail(w, r, err)
		return
	}
	e, err := a.curator.Apply(r.Context(), corpus, op)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusAccepted, e)
}

func (a *API) undoCuration(w http.ResponseWriter, r *http.Request) {
	corpus, err := a.curatorFor(r)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	e, err := a.curator.Undo(r.Context(), corpus, r.PathValue("id"))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusAccepted, e)
}
