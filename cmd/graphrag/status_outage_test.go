package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/graphrag/graphrag/pkg/pipeline"
)

// TestStatusSaysWhatIsDown: a corpus paused by an outage prints each waiting stage
// with what is down, since when and why.
func TestStatusSaysWhatIsDown(t *testing.T) {
	since := time.Date(2026, 11, 29, 9, 41, 0, 0, time.UTC)
	st := pipeline.Status{Corpus: "notes", State: pipeline.StatePaused,
		Stages: []pipeline.StageStatus{{Stage: pipeline.StageGrapher, Total: 3, Done: 1, InFlight: 2}},
		Paused: []pipeline.Pause{{Stage: pipeline.StageGrapher, Since: since, Reason: "graph store unavailable: ConnectivityError: connection refused"}}}
	var out bytes.Buffer
	printStatus(&out, st)
	for _, want := range []string{
		"paused: grapher waits since 2026-11-29T09:41:00Z: graph store unavailable: ConnectivityError: connection refused",
		"corpus notes: paused: dependency unavailable",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("printed\n%s\nwant %q", out.String(), want)
		}
	}
}
