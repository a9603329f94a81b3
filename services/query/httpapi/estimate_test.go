package httpapi

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/graphrag/graphrag/pkg/costestimate"
)

// TestUploadDryRunEstimates: ?dry_run=true answers the estimate of the uploaded
// documents with the settings given to the API, and publishes nothing, also where no
// publisher is configured; bad parameters are refused.
func TestUploadDryRunEstimates(t *testing.T) {
	f := newFakes()
	opts := costestimate.DefaultOptions()
	opts.ChunkTokens, opts.ChunkOverlap, opts.Gleanings = 40, 5, 1
	srv := newTestAPI(t, DefaultConfig(), append(f.options(), WithEstimate(opts))...)
	text := strings.Repeat("Ada Quillane studied the algae bloom of Marrow Bay with the Marine Institute in 2019. ", 12)
	body := `{"id":"notes/bloom.md","title":"Bloom","text":"` + text + `"}`

	resp, b := call(t, srv, http.MethodPost, "/v1/corpora/demo/documents?dry_run=true&price_chat_input=0.5&price_chat_output=2&price_embed=0.02", "", body)
	var est costestimate.Estimate
	if resp.StatusCode != http.StatusOK || json.Unmarshal(b, &est) != nil {
		t.Fatalf("dry run: %d %s", resp.StatusCode, b)
	}
	if len(f.published) != 0 {
		t.Fatalf("a dry run published %d documents", len(f.published))
	}
	if est.Documents != 1 || est.Chunks < 3 || est.Options.ChunkTokens != 40 || len(est.Chat) != 4 || est.Chat[1].Kind != costestimate.KindGleaning {
		t.Errorf("estimate with 40-token chunks and a gleaning pass: %+v", est)
	}
	if est.Cost == nil || est.Cost.Total <= 0 || est.Cost.Prices.ChatOutput != 2 {
		t.Errorf("cost %+v", est.Cost)
	}

	// Without a publisher the estimate is still served.
	bare := newTestAPI(t, DefaultConfig())
	if resp, b := call(t, bare, http.MethodPost, "/v1/corpora/demo/documents?dry_run=1", "", body); resp.StatusCode != http.StatusOK {
		t.Errorf("dry run without a publisher: %d %s", resp.StatusCode, b)
	}
	if resp, _ := call(t, bare, http.MethodPost, "/v1/corpora/demo/documents", "", body); resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("upload without a publisher: %d, want 503", resp.StatusCode)
	}

	for _, q := range []string{"dry_run=maybe", "dry_run=true&price_embed=x", "dry_run=true&price_chat_input=-1"} {
		resp, b := call(t, srv, http.MethodPost, "/v1/corpora/demo/documents?"+q, "", body)
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("%s: %d %s, want 400", q, resp.StatusCode, b)
		}
	}
	if len(f.published) != 0 {
		t.Fatalf("refused dry runs published %d documents", len(f.published))
	}
	// dry_run=false publishes.
	if resp, b := call(t, srv, http.MethodPost, "/v1/corpora/demo/documents?dry_run=false", "", body); resp.StatusCode != http.StatusAccepted || len(f.published) != 1 {
		t.Errorf("dry_run=false: %d %s, %d published", resp.StatusCode, b, len(f.published))
	}
}
