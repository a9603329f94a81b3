package httpapi

import (
	"context"
	"net/http"

	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/pkg/extractsettings"
	"github.com/graphrag/graphrag/services/query/engine"
)

// ExtractionSettings serves a corpus's extraction settings (package extractsettings):
// read and save them, re-extract the corpus under them, propose them from a sample.
type ExtractionSettings interface {
	Settings(ctx context.Context, corpus string) (extractsettings.Record, error)
	SaveSettings(ctx context.Context, corpus string, s extractsettings.Settings) (extractsettings.Record, error)
	Reindex(ctx context.Context, corpus string) (extractsettings.Reindexed, error)
	// Propose asks the chat model for settings from sample passages of the corpus.
	Propose(ctx context.Context, corpus string, sample int) (extractsettings.Proposal, error)
}

// WithExtractionSettings serves the extraction settings routes through x.
func WithExtractionSettings(x ExtractionSettings) Option {
	return optionFunc(func(a *API) { a.settings = x })
}

// addSettingsRoutes registers the extraction settings routes. Settings may be saved
// before a corpus's first document (so that it is extracted under them); re-extraction
// and proposals need the corpus to exist. Reading needs the read scope, the others
// write (guard: by method).
func (a *API) addSettingsRoutes() {
	a.mux.HandleFunc("GET /v1/corpora/{corpus}/extraction-settings", a.guard(a.getSettings))
	a.mux.HandleFunc("PUT /v1/corpora/{corpus}/extraction-settings", a.guard(a.putSettings))
	a.mux.HandleFunc("POST /v1/corpora/{corpus}/extraction-settings/proposal", a.guard(a.known(a.proposeSettings)))
	a.mux.HandleFunc("POST /v1/corpora/{corpus}/reindex", a.guard(a.known(a.reindex)))
}

// settingsCorpus checks the corpus of a settings route and that the service has the
// backend.
func (a *API) settingsCorpus(w http.ResponseWriter, r *http.Request) (string, bool) {
	corpus := r.PathValue("corpus")
	if err := events.ValidateCorpus(corpus); err != nil {
		a.fail(w, r, engine.BadRequestf("%v", err))
		return "", false
	}
	if a.settings == nil {
		a.fail(w, r, &unavailable{"managing extraction settings"})
		return "", false
	}
	return corpus, true
}

func (a *API) getSettings(w http.ResponseWriter, r *http.Request) {
	corpus, ok := a.settingsCorpus(w, r)
	if !ok {
		return
	}
	rec, err := a.settings.Settings(r.Context(), corpus)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, rec)
}

func (a *API) putSettings(w http.ResponseWriter, r *http.Request) {
	corpus, ok := a.settingsCorpus(w, r)
	if !ok {
		return
	}
	var s extractsettings.Settings
	if err := decodeBody(r, &s); err != nil {
		a.fail(w, r, err)
		return
	}
	rec, err := a.settings.SaveSettings(r.Context(), corpus, s)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, rec)
}

// proposalRequest is the body of a proposal: the number of passages to sample.
type proposalRequest struct {
	Sample int `json:"sample"`
}

func (a *API) proposeSettings(w http.ResponseWriter, r *http.Request) {
	corpus, ok := a.settingsCorpus(w, r)
	if !ok {
		return
	}
	req := proposalRequest{Sample: extractsettings.DefaultSample}
	if r.ContentLength != 0 {
		if err := decodeBody(r, &req); err != nil {
			a.fail(w, r, err)
			return
		}
	}
	if req.Sample < 1 || req.Sample > extractsettings.MaxSample {
		a.fail(w, r, engine.BadRequestf("sample: %d is outside 1..%d", req.Sample, extractsettings.MaxSample))
		return
	}
	p, err := a.settings.Propose(r.Context(), corpus, req.Sample)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, p)
}

func (a *API) reindex(w http.ResponseWriter, r *http.Request) {
	corpus, ok := a.settingsCorpus(w, r)
	if !ok {
		return
	}
	res, err := a.settings.Reindex(r.Context(), corpus)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusAccepted, res)
}
