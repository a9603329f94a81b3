package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/graphrag/graphrag/pkg/pipeline"
)

// TestStatusSaysFailed: a corpus whose pipeline is drained but dead-lettered a message
// is failed for graphrag status, with exit status 1, as GET /v1/corpora says; a
// drained one with nothing dead-lettered is complete.
func TestStatusSaysFailed(t *testing.T) {
	drained := func(dead uint64) pipeline.Status {
		return pipeline.Status{Corpus: "notes", Complete: true, State: pipeline.StateComplete,
			Stages: []pipeline.StageStatus{{Stage: pipeline.StageChunker, Total: 3, Done: 3, DeadLettered: dead}},
			Graph:  pipeline.GraphState{Detections: 1, Levels: 1}}
	}
	for _, tc := range []struct {
		dead uint64
		line string
		fail bool
	}{
		{0, "corpus notes: indexing complete", false},
		{1, "corpus notes: failed: 1 messages were dead-lettered", true},
	} {
		var out bytes.Buffer
		st := drained(tc.dead)
		printStatus(&out, st)
		if !strings.Contains(out.String(), tc.line) {
			t.Errorf("%d dead-lettered: printed\n%s\nwant %q", tc.dead, out.String(), tc.line)
		}
		if err := failedError(st); (err != nil) != tc.fail {
			t.Errorf("%d dead-lettered: error %v, want one: %v", tc.dead, err, tc.fail)
		}
	}
}
