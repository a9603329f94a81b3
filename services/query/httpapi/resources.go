package httpapi

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/graphrag/graphrag/pkg/catalog"
	"github.com/graphrag/graphrag/pkg/errkind"
	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/services/query/access"
	"github.com/graphrag/graphrag/services/query/engine"
)

// Catalog is what the corpus and document routes read (a *catalog.Catalog).
type Catalog interface {
	Names(ctx context.Context) ([]string, error)
	Exists(ctx context.Context, corpus string) (bool, error)
	Corpora(ctx context.Context, keep func(string) bool) ([]catalog.Corpus, error)
	Status(ctx context.Context, corpus string) (catalog.Status, error)
	Documents(ctx context.Context, corpus, cursor string, limit int) (catalog.Page, error)
	Document(ctx context.Context, corpus, id string) (catalog.Document, error)
	// Created is when a corpus began (the zero time when unknown): a model's created.
	Created(ctx context.Context, corpus string) (time.Time, error)
}

// Publisher publishes a document event to its corpus's subject (pipeline.PublishDocument:
// a text too large for one message goes through the object store).
type Publisher interface {
	PublishDocument(ctx context.Context, d events.Document) error
}

// Deleter publishes deletions: of one document, or of a whole corpus. Both are
// asynchronous; the event id identifies the deletion.
type Deleter interface {
	DeleteDocument(ctx context.Context, corpus, id string) (eventID string, err error)
	DropCorpus(ctx context.Context, corpus string) (eventID string, err error)
}

// Exporter writes the export of a corpus in a format (export.Formats) to w as a zip
// archive.
type Exporter interface {
	Export(ctx context.Context, corpus, format string, w io.Writer) error
}

// Option adds a backend to the API.
type Option interface{ apply(*API) }

type optionFunc func(*API)

func (f optionFunc) apply(a *API) { f(a) }

// WithCatalog serves the corpus and document listings and the status from c.
func WithCatalog(c Catalog) Option { return optionFunc(func(a *API) { a.catalog = c }) }

// WithPublisher serves document uploads through p.
func WithPublisher(p Publisher) Option { return optionFunc(func(a *API) { a.publisher = p }) }

// WithDeleter serves the deletion routes through d.
func WithDeleter(d Deleter) Option { return optionFunc(func(a *API) { a.deleter = d }) }

// WithExporter serves exports through x.
func WithExporter(x Exporter) Option { return optionFunc(func(a *API) { a.exporter = x }) }

// unavailable is a route whose backend this service was built without (503).
type unavailable struct{ what string }

func (u *unavailable) Error() string           { return u.what + " is not available on this query service" }
func (u *unavailable) ErrorKind() errkind.Kind { return errkind.Unavailable }
func (u *unavailable) PublicKind() bool        { return true }

// addResourceRoutes registers the corpus and document routes.
func (a *API) addResourceRoutes() {
	a.mux.HandleFunc("GET /v1/corpora", a.guard(a.listCorpora))
	a.mux.HandleFunc("GET /v1/corpora/{corpus}/status", a.guard(a.known(a.corpusStatus)))
	a.mux.HandleFunc("GET /v1/corpora/{corpus}/documents", a.guard(a.known(a.listDocuments)))
	a.mux.HandleFunc("GET /v1/corpora/{corpus}/documents/{id...}", a.guard(a.known(a.getDocument)))
	a.mux.HandleFunc("POST /v1/corpora/{corpus}/documents", a.guardBody(a.cfg.MaxUploadBytes, a.uploadDocuments))
	a.mux.HandleFunc("DELETE /v1/corpora/{corpus}/documents/{id...}", a.guard(a.deleteDocument))
	a.mux.HandleFunc("DELETE /v1/corpora/{corpus}", a.guard(a.dropCorpus))
}

// corpusNotFound is a corpus the platform holds nothing of (catalog.Exists): 404 with
// the code corpus_not_found on every route that reads a corpus.
type corpusNotFound struct{ corpus string }

func (c *corpusNotFound) Error() string {
	return "corpus " + c.corpus + " does not exist (GET /v1/corpora lists the corpora; a corpus appears with its first document)"
}

func (c *corpusNotFound) Is(target error) bool { return target == engine.ErrUnknownCorpus }

// known serves a route that reads a corpus only when the platform holds something of
// it; an unknown corpus is a 404, never an empty answer. A corpus that exists but is
// still empty passes. Without a catalog, the engine decides, as before.
func (a *API) known(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		corpus := r.PathValue("corpus")
		if a.catalog != nil && events.ValidateCorpus(corpus) == nil {
			ok, err := a.catalog.Exists(r.Context(), corpus)
			if err != nil {
				a.fail(w, r, err)
				return
			}
			if !ok {
				a.fail(w, r, &corpusNotFound{corpus})
				return
			}
		}
		h(w, r)
	}
}

// corpusList is the body of GET /v1/corpora.
type corpusList struct {
	Corpora []catalog.Corpus `json:"corpora"`
}

func (a *API) listCorpora(w http.ResponseWriter, r *http.Request) {
	if a.catalog == nil {
		a.fail(w, r, &unavailable{"listing corpora"})
		return
	}
	ctx := r.Context()
	cs, err := a.catalog.Corpora(ctx, func(c string) bool { return access.Visible(ctx, c) })
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, corpusList{Corpora: cs})
}

func (a *API) corpusStatus(w http.ResponseWriter, r *http.Request) {
	if a.catalog == nil {
		a.fail(w, r, &unavailable{"the corpus status"})
		return
	}
	st, err := a.catalog.Status(r.Context(), r.PathValue("corpus"))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, st)
}

// DefaultPage is the number of documents a listing returns without a limit.
const DefaultPage = 50

func (a *API) listDocuments(w http.ResponseWriter, r *http.Request) {
	if a.catalog == nil {
		a.fail(w, r, &unavailable{"listing documents"})
		return
	}
	limit := DefaultPage
	if s := r.URL.Query().Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > catalog.MaxPage {
			a.fail(w, r, engine.BadRequestf("limit: %q is not a number in 1..%d", s, catalog.MaxPage))
			return
		}
		limit = n
	}
	p, err := a.catalog.Documents(r.Context(), r.PathValue("corpus"), r.URL.Query().Get("cursor"), limit)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, p)
}

func (a *API) getDocument(w http.ResponseWriter, r *http.Request) {
	if r.PathValue("id") == "" {
		a.listDocuments(w, r) // ".../documents/" is the collection
		return
	}
	if a.catalog == nil {
		a.fail(w, r, &unavailable{"reading documents"})
		return
	}
	d, err := a.catalog.Document(r.Context(), r.PathValue("corpus"), r.PathValue("id"))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, d)
}

// deletion is the body of a 202 answer to a deletion.
type deletion struct {
	EventID string `json:"event_id"`
}

func (a *API) deleteDocument(w http.ResponseWriter, r *http.Request) {
	corpus, id := r.PathValue("corpus"), r.PathValue("id")
	if id == "" {
		collectionMethod(w, r)
		return
	}
	if err := validDocument(corpus, id); err != nil {
		a.fail(w, r, err)
		return
	}
	if a.deleter == nil {
		a.fail(w, r, &unavailable{"deleting documents"})
		return
	}
	ev, err := a.deleter.DeleteDocument(r.Context(), corpus, id)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusAccepted, deletion{EventID: ev})
}

func (a *API) dropCorpus(w http.ResponseWriter, r *http.Request) {
	corpus := r.PathValue("corpus")
	if err := events.ValidateCorpus(corpus); err != nil {
		a.fail(w, r, engine.BadRequestf("%v", err))
		return
	}
	if a.deleter == nil {
		a.fail(w, r, &unavailable{"dropping corpora"})
		return
	}
	ev, err := a.deleter.DropCorpus(r.Context(), corpus)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusAccepted, deletion{EventID: ev})
}

// validDocument checks a corpus name and a document id as the document event would.
func validDocument(corpus, id string) error {
	if err := events.ValidateCorpus(corpus); err != nil {
		return engine.BadRequestf("%v", err)
	}
	d := events.Document{Schema: events.SchemaDocument, Corpus: corpus, ID: id, Text: "x"}
	if err := d.Validate(); err != nil {
		return engine.BadRequestf("%v", err)
	}
	return nil
}

// collectionMethod answers a request for ".../documents/" with no id (the mux sends
// ".../documents" there with a redirect when the method is not the collection's) as
// the collection would: 405, GET and POST allowed.
func collectionMethod(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Allow", "GET, POST")
	writeJSON(w, http.StatusMethodNotAllowed, apiError{Error: "method " + r.Method + " is not allowed on " + r.URL.Path + " (allowed: GET, POST; a document is /documents/{id})"})
}
