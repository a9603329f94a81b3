package costestimate

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestCalibrationFigures logs (go test -v) the raw graph figures of a dataset (corpus.jsonl) named
// by GRAPHRAG_CALIBRATE_DATASET, for fitting the ratios of calibration.go.
func TestCalibrationFigures(t *testing.T) {
	dir := os.Getenv("GRAPHRAG_CALIBRATE_DATASET")
	if dir == "" {
		t.Skip("GRAPHRAG_CALIBRATE_DATASET not set")
	}
	f, err := os.Open(filepath.Join(dir, "corpus.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	e, err := New(DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var d struct{ ID, Title, Text string }
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			t.Fatal(err)
		}
		if err := e.Add(Document{ID: d.ID, Title: d.Title, Text: d.Text}); err != nil {
			t.Fatal(err)
		}
	}
	g, err := e.graph(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("graph %+v", g)
	est, err := e.Estimate(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.MarshalIndent(est, "", " ")
	t.Log(string(b))
}
