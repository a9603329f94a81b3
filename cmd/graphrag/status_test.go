package main

import (
	"bytes"
	"errors"
	"flag"
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
		{0, "1 detection run, 1 level,", false},
		{1, "corpus notes: failed: 1 message was dead-lettered", true},
		{2, "corpus notes: failed: 2 messages were dead-lettered", true},
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

// TestHelpShowsTheCommandsOwnFlags: status -h and export -h open with a synopsis, and
// export -h lists its own flags, not the forty shared with graphrag up.
func TestHelpShowsTheCommandsOwnFlags(t *testing.T) {
	for _, tc := range []struct {
		cmd     string
		want    []string
		notWant []string
	}{
		{"status", []string{"usage: graphrag status -corpus NAME", "  -wait duration", "  -nats-url string"}, nil},
		{"export", []string{"usage: graphrag export -corpus NAME -out DIR", "  -format string", "  -api string", "graphrag up -h lists them"},
			[]string{"  -data-dir", "  -graph-store", "  -log-level"}},
	} {
		var out bytes.Buffer
		if err := dispatch(t.Context(), []string{tc.cmd, "-h"}, &out, &out); !errors.Is(err, flag.ErrHelp) {
			t.Errorf("%s -h: %v, want flag.ErrHelp", tc.cmd, err)
		}
		for _, w := range tc.want {
			if !strings.Contains(out.String(), w) {
				t.Errorf("%s -h lacks %q:\n%s", tc.cmd, w, out.String())
			}
		}
		for _, w := range tc.notWant {
			if strings.Contains(out.String(), w) {
				t.Errorf("%s -h lists %q, a flag shared with graphrag up:\n%s", tc.cmd, w, out.String())
			}
		}
	}
}

// TestStatusPrintsRatesAndETA: each stage's line ends with its rate and the ETA of what
// it has left: "?" while it has work but handled none lately, "-" when it has none.
func TestStatusPrintsRatesAndETA(t *testing.T) {
	st := pipeline.Status{Corpus: "notes", State: pipeline.StateIndexing, Stages: []pipeline.StageStatus{
		{Stage: pipeline.StageChunker, Total: 10, Done: 10, Rate: 0.5},
		{Stage: pipeline.StageExtractor, Total: 300, Pending: 120, InFlight: 30, Done: 150, Rate: 2.5, ETASeconds: 60},
		{Stage: pipeline.StageGrapher, Total: 150, Pending: 150},
	}}
	var out bytes.Buffer
	printStatus(&out, st)
	lines := strings.Split(out.String(), "\n")
	for i, want := range [][]string{{"rate/s", "ETA"}, {"0.50", "-"}, {"2.50", "1m0s"}, {"-", "?"}} {
		f := strings.Fields(lines[i])
		if len(f) < 2 || f[len(f)-2] != want[0] || f[len(f)-1] != want[1] {
			t.Errorf("line %d = %q, want it to end with %q\n%s", i, lines[i], want, out.String())
		}
	}
}
