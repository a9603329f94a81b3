package httpapi

import (
	"archive/zip"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/graphrag/graphrag/pkg/catalog"
	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/pkg/pipeline"
)

// fakes are the resource routes' backends, recording what they were asked.
type fakes struct {
	mu        sync.Mutex
	corpora   []catalog.Corpus
	docs      map[string]catalog.Document // "corpus/id"
	published []events.Document
	deleted   []string // "corpus/id", or "corpus" for a drop
	exported  []string // "corpus format"
	exportErr error    // returned by Export after writing exportAfter bytes
	exportN   int
	pubErr    error
	noDeleter bool
}

func newFakes() *fakes {
	at := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	return &fakes{
		corpora: []catalog.Corpus{{Name: "demo", Documents: 2, Chunks: 3, Entities: 3, Relationships: 3, State: catalog.StateComplete},
			{Name: "other", Documents: 1, Chunks: 1, State: catalog.StateIndexing}},
		docs: map[string]catalog.Document{
			"demo/d1":         {ID: "d1", Title: "Ada Lovelace", ContentHash: "aa", Chunks: 2, State: catalog.DocumentIndexed, Updated: at},
			"demo/notes/a.md": {ID: "notes/a.md", Title: "A", ContentHash: "bb", Chunks: 0, State: catalog.DocumentFailed, Reason: "poisoned", Updated: at},
		},
	}
}

func (f *fakes) options() []Option {
	opts := []Option{WithCatalog(f), WithPublisher(f), WithExporter(f), WithCurator(newFakeCurator())}
	if !f.noDeleter {
		opts = append(opts, WithDeleter(f))
	}
	return opts
}

func (f *fakes) Names(context.Context) ([]string, error) {
	var out []string
	for _, c := range f.corpora {
		out = append(out, c.Name)
	}
	return out, nil
}

// fakeCreated is when every corpus of the fakes began.
var fakeCreated = time.Date(2026, 11, 20, 8, 30, 0, 0, time.UTC)

func (f *fakes) Created(context.Context, string) (time.Time, error) { return fakeCreated, nil }

func (f *fakes) Exists(_ context.Context, corpus string) (bool, error) {
	if corpus == "poisoned" { // known to Status only: a corpus whose detection fails
		return true, nil
	}
	for _, c := range f.corpora {
		if c.Name == corpus {
			return true, nil
		}
	}
	return false, nil
}

func (f *fakes) Corpora(_ context.Context, keep func(string) bool) ([]catalog.Corpus, error) {
	out := []catalog.Corpus{}
	for _, c := range f.corpora {
		if keep == nil || keep(c.Name) {
			out = append(out, c)
		}
	}
	return out, nil
}

func (f *fakes) Status(_ context.Context, corpus string) (catalog.Status, error) {
	if err := events.ValidateCorpus(corpus); err != nil {
		return catalog.Status{}, err
	}
	st := catalog.Status{State: catalog.StateEmpty, DeadLetters: []catalog.DeadLetters{}}
	st.Corpus = corpus
	if corpus == "poisoned" { // a record quarantined, detection failing
		st.State = catalog.StateIndexing
		st.Quarantined = 1
		st.QuarantinedRecords = []pipeline.Quarantined{{Stage: pipeline.StageGrapher, Collection: "poisoned_entities", ID: "all",
			Reason: "invalid argument: zero vector", At: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}}
		st.Graph = pipeline.GraphState{Dirty: true, Failures: 2, LastError: "store unavailable",
			FailingSince: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC), NextRetry: time.Date(2026, 3, 1, 12, 1, 0, 0, time.UTC)}
		st.Detection = catalog.Detection{Failing: st.Graph.Failing(), NextRetry: &st.Graph.NextRetry}
	}
	return st, nil
}

func (f *fakes) Documents(_ context.Context, corpus, cursor string, limit int) (catalog.Page, error) {
	if cursor == "bad" {
		return catalog.Page{}, fmt.Errorf("%w: cursor %q", catalog.ErrInvalid, cursor)
	}
	var keys []string
	for k := range f.docs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	p := catalog.Page{Documents: []catalog.Document{}}
	for _, k := range keys {
		if len(p.Documents) == limit {
			p.Next = p.Documents[len(p.Documents)-1].ID
			break
		}
		if k > corpus+"/"+cursor && k[:len(corpus)+1] == corpus+"/" {
			p.Documents = append(p.Documents, f.docs[k])
		}
	}
	return p, nil
}

func (f *fakes) Document(_ context.Context, corpus, id string) (catalog.Document, error) {
	d, ok := f.docs[corpus+"/"+id]
	if !ok {
		return catalog.Document{}, fmt.Errorf("%w: document %q", catalog.ErrNotFound, id)
	}
	return d, nil
}

func (f *fakes) PublishDocument(_ context.Context, d events.Document) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.pubErr != nil {
		return f.pubErr
	}
	f.published = append(f.published, d)
	return nil
}

// DeleteDocument and DropCorpus refuse what the catalog does not hold, as the
// service's deleter does (a deletion of nothing is a 404).
func (f *fakes) DeleteDocument(_ context.Context, corpus, id string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.docs[corpus+"/"+id]; !ok {
		return "", fmt.Errorf("%w: document %q in corpus %s", catalog.ErrNotFound, id, corpus)
	}
	f.deleted = append(f.deleted, corpus+"/"+id)
	return fmt.Sprintf("ev-%d", len(f.deleted)), nil
}

func (f *fakes) DropCorpus(_ context.Context, corpus string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !slices.ContainsFunc(f.corpora, func(c catalog.Corpus) bool { return c.Name == corpus }) {
		return "", fmt.Errorf("%w: corpus %s", catalog.ErrNotFound, corpus)
	}
	f.deleted = append(f.deleted, corpus)
	return fmt.Sprintf("ev-%d", len(f.deleted)), nil
}

// Export writes a one-file archive, or fails after exportN bytes with exportErr.
func (f *fakes) Export(_ context.Context, corpus, format string, w io.Writer) error {
	f.mu.Lock()
	f.exported = append(f.exported, corpus+" "+format)
	err, n := f.exportErr, f.exportN
	f.mu.Unlock()
	if err != nil {
		if n > 0 {
			_, _ = w.Write(make([]byte, n))
		}
		return err
	}
	zw := zip.NewWriter(w)
	fw, zerr := zw.Create("entities." + format)
	if zerr != nil {
		return zerr
	}
	_, _ = io.WriteString(fw, "exported "+corpus)
	return zw.Close()
}

var errBackend = errors.New("backend down")
