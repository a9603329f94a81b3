package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"

	"github.com/graphrag/graphrag/services/query/ask"
)

// stream answers a query with server-sent events: "delta" events carry answer text as
// it is generated, then one "done" event carries the whole response (or "error").
func (a *API) stream(w http.ResponseWriter, r *http.Request, req ask.Request) {
	fl, ok := w.(http.Flusher)
	if !ok {
		a.fail(w, r, errors.New("streaming is not supported by this connection"))
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	var mu sync.Mutex
	send := func(event string, v any) error {
		b, _ := json.Marshal(v)
		mu.Lock()
		defer mu.Unlock()
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b); err != nil {
			return err
		}
		fl.Flush()
		return nil
	}
	resp, err := a.e.Query(r.Context(), req, func(d string) error { return send("delta", map[string]string{"text": d}) })
	if err != nil {
		status, msg := failure(r.Context(), err)
		if status >= http.StatusInternalServerError {
			a.log.ErrorContext(r.Context(), "streamed request failed", "path", r.URL.Path, "status", status, "err", err)
		}
		_ = send("error", apiError{Error: msg})
		return
	}
	_ = send("done", resp)
}
