package httpapi

import (
	"net/http"
	"strconv"

	"github.com/graphrag/graphrag/pkg/costestimate"
	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/services/query/engine"
)

// WithEstimate sets the indexing settings the cost estimate of an upload with
// ?dry_run=true assumes (costestimate.DefaultOptions without it).
func WithEstimate(o costestimate.Options) Option {
	return optionFunc(func(a *API) { a.estimate = &o })
}

// dryRun reads the dry_run query parameter of an upload.
func dryRun(r *http.Request) (bool, error) {
	v := r.URL.Query().Get("dry_run")
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, engine.BadRequestf("dry_run: want true or false, got %q", v)
	}
	return b, nil
}

// prices reads the price_chat_input, price_chat_output and price_embed query parameters
// (US dollars per million tokens); nil when none is given.
func prices(r *http.Request) (*costestimate.Prices, error) {
	q := r.URL.Query()
	var p costestimate.Prices
	given := false
	for name, dst := range map[string]*float64{"price_chat_input": &p.ChatInput, "price_chat_output": &p.ChatOutput, "price_embed": &p.Embed} {
		v := q.Get(name)
		if v == "" {
			continue
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return nil, engine.BadRequestf("%s: want a number (US dollars per million tokens), got %q", name, v)
		}
		*dst, given = f, true
	}
	if !given {
		return nil, nil
	}
	if err := p.Validate(); err != nil {
		return nil, engine.BadRequestf("%v", err)
	}
	return &p, nil
}

// estimateUpload answers an upload with ?dry_run=true: what indexing its documents is
// expected to cost, and nothing published.
func (a *API) estimateUpload(w http.ResponseWriter, r *http.Request, docs []events.Document) {
	pr, err := prices(r)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	opts := costestimate.DefaultOptions()
	if a.estimate != nil {
		opts = *a.estimate
	}
	est, err := costestimate.New(opts)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	for _, d := range docs {
		if err := est.Add(costestimate.Document{ID: d.ID, Title: d.Title, Text: d.Text}); err != nil {
			a.fail(w, r, engine.BadRequestf("%v", err))
			return
		}
	}
	out, err := est.Estimate(r.Context(), pr)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}
