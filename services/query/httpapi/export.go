package httpapi

import (
	"fmt"
	"net/http"
	"slices"

	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/services/query/engine"
)

// exportFormats are the formats the export route accepts (export.Formats).
var exportFormats = []string{"jsonl", "graphml", "parquet"}

func (a *API) addExportRoute() {
	a.mux.HandleFunc("GET /v1/corpora/{corpus}/export", a.guard(a.known(a.export)))
}

// export streams a corpus's export as a zip archive. The archive is written as it is
// read from the stores, so a failure after the first byte cannot change the status:
// the connection is aborted instead, and the client sees a truncated response rather
// than a complete-looking archive.
func (a *API) export(w http.ResponseWriter, r *http.Request) {
	corpus := r.PathValue("corpus")
	if err := events.ValidateCorpus(corpus); err != nil {
		a.fail(w, r, engine.BadRequestf("%v", err))
		return
	}
	format := r.URL.Query().Get("format")
	if format == "" {
		format = "jsonl"
	}
	if !slices.Contains(exportFormats, format) {
		a.fail(w, r, engine.BadRequestf("format: %q is not one of %v", format, exportFormats))
		return
	}
	if a.exporter == nil {
		a.fail(w, r, &unavailable{"export"})
		return
	}
	if _, err := a.e.Engine().Stats(r.Context(), corpus); err != nil {
		a.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/zip")
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="%s-%s.zip"`, corpus, format))
	sw := &startedWriter{ResponseWriter: w}
	if err := a.exporter.Export(r.Context(), corpus, format, sw); err != nil {
		if !sw.started {
			a.fail(w, r, err)
			return
		}
		a.log.ErrorContext(r.Context(), "export failed mid-stream", "corpus", corpus, "format", format, "err", err)
		panic(http.ErrAbortHandler)
	}
}

// startedWriter records whether anything was written.
type startedWriter struct {
	http.ResponseWriter
	started bool
}

func (s *startedWriter) Write(b []byte) (int, error) {
	s.started = true
	return s.ResponseWriter.Write(b)
}
