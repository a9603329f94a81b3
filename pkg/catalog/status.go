package catalog

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/pkg/pipeline"
)

// States of a corpus (Status.State, Corpus.State).
const (
	// StateEmpty: nothing was published to the corpus.
	StateEmpty = "empty"
	// StateIndexing: messages wait or are being handled, or communities are not current.
	StateIndexing = "indexing"
	// StateComplete: every message handled, communities current, nothing dead-lettered.
	StateComplete = "complete"
	// StateFailed: every message handled, but some were dead-lettered or some current
	// communities have no report: what they carried is not indexed, and nothing will
	// change that without an operator (see DeadLetters for the reasons).
	StateFailed = "failed"
	// StatePaused: work waits because something a stage depends on is down (its model
	// endpoint, a store); it resumes by itself (Paused says which stage and why).
	StatePaused = "paused"
)

// Status is the indexing status of a corpus: the fields `graphrag status -json` prints
// (pipeline.Status: corpus, stages, graph, complete), and the state in one word, the
// dead letters grouped by stage and reason, and community detection.
type Status struct {
	pipeline.Status
	// State is one of the State* words of this package; PipelineState is the wording
	// of `graphrag status` (pipeline.Status.State), which State hides in JSON.
	State         string        `json:"state"`
	PipelineState string        `json:"pipeline_state"`
	DeadLetters   []DeadLetters `json:"dead_letters"`
	// DeadLettersTruncated says the dead letters were more than Status reads
	// (MaxDeadLetters): the groups count the first ones only; the stage counts are exact.
	DeadLettersTruncated bool      `json:"dead_letters_truncated,omitempty"`
	Detection            Detection `json:"detection"`
}

// DeadLetters counts the dead letters of one stage with one reason.
type DeadLetters struct {
	Stage  string    `json:"stage"`
	Reason string    `json:"reason"`
	Count  int       `json:"count"`
	Last   time.Time `json:"last"`
}

// Detection is the state of community detection on the corpus.
type Detection struct {
	// Runs counts detection runs.
	Runs int `json:"runs"`
	// Levels is the number of community levels of the last run.
	Levels int `json:"levels"`
	// LastRun is when the last run ended (absent before the first).
	LastRun *time.Time `json:"last_run,omitempty"`
	// LastRunID identifies the last run.
	LastRunID string `json:"last_run_id,omitempty"`
	// Current is false while extractions merged since the last run wait for the next.
	Current bool `json:"current"`
	// Pending counts the merges since the last run.
	Pending int `json:"pending"`
	// Failing says, while the runs of the corpus fail, since when, how many and why
	// ("community detection failing since …"; pipeline.GraphState.Failing), and
	// NextRetry when the grapher tries again.
	Failing   string     `json:"failing,omitempty"`
	NextRetry *time.Time `json:"next_retry,omitempty"`
}

// MaxDeadLetters bounds the dead letters Status and the document listing read per
// corpus.
const MaxDeadLetters = 10000

// Status reads the indexing status of a corpus.
func (c *Catalog) Status(ctx context.Context, corpus string) (Status, error) {
	if err := events.ValidateCorpus(corpus); err != nil {
		return Status{}, err
	}
	ps, err := pipeline.GetStatus(ctx, c.bus, corpus)
	if err != nil {
		return Status{}, fmt.Errorf("reading the status of %s: %w", corpus, err)
	}
	st := Status{Status: ps, State: State(ps), PipelineState: ps.State, DeadLetters: []DeadLetters{}, Detection: detectionOf(ps.Graph)}
	if deadLettered(ps) == 0 {
		return st, nil
	}
	dls, truncated, err := c.deadLetters(ctx, corpus, MaxDeadLetters)
	if err != nil {
		return st, err
	}
	st.DeadLetters, st.DeadLettersTruncated = groupDeadLetters(dls), truncated
	return st, nil
}

// State says in one word where a corpus is (StateEmpty, StateIndexing, StateComplete,
// StateFailed or StatePaused) from the pipeline's status: what the corpus and status
// routes say, and what graphrag status prints.
func State(st pipeline.Status) string { return stateOf(st, deadLettered(st)) }

// stateOf says in one word where a corpus is: the pipeline's state, with a corpus that
// is drained but lost messages to the dead-letter queue called failed.
func stateOf(st pipeline.Status, dead uint64) string {
	switch st.State {
	case pipeline.StateEmpty:
		return StateEmpty
	case pipeline.StatePaused:
		return StatePaused
	case pipeline.StateReportsMissing:
		return StateFailed
	}
	if len(st.Stages) == 0 || st.Stages[0].Total == 0 {
		return StateEmpty
	}
	for _, s := range st.Stages {
		if s.Pending > 0 || s.InFlight > 0 {
			return StateIndexing
		}
	}
	switch {
	case st.Graph.Dirty:
		return StateIndexing
	case dead > 0:
		return StateFailed
	case st.Complete:
		return StateComplete
	}
	return StateIndexing
}

func deadLettered(st pipeline.Status) uint64 {
	var n uint64
	for _, s := range st.Stages {
		n += s.DeadLettered
	}
	return n
}

func detectionOf(g pipeline.GraphState) Detection {
	d := Detection{Runs: g.Detections, Levels: g.Levels, LastRunID: g.LastRun, Current: !g.Dirty, Pending: g.Changes}
	if !g.LastRunAt.IsZero() {
		t := g.LastRunAt.UTC()
		d.LastRun = &t
	}
	if d.Failing = g.Failing(); d.Failing != "" && !g.NextRetry.IsZero() {
		t := g.NextRetry.UTC()
		d.NextRetry = &t
	}
	return d
}

// groupDeadLetters counts dead letters by stage and reason, in flow order of the
// stages, the most frequent reason first.
func groupDeadLetters(dls []deadLetter) []DeadLetters {
	type key struct{ stage, reason string }
	groups := map[key]*DeadLetters{}
	for _, d := range dls {
		k := key{d.stage, d.reason}
		g, ok := groups[k]
		if !ok {
			g = &DeadLetters{Stage: d.stage, Reason: d.reason}
			groups[k] = g
		}
		g.Count++
		if d.at.After(g.Last) {
			g.Last = d.at
		}
	}
	order := map[string]int{}
	for i, s := range pipeline.Stages {
		order[s.Name] = i
	}
	out := make([]DeadLetters, 0, len(groups))
	for _, g := range groups {
		out = append(out, *g)
	}
	slices.SortFunc(out, func(a, b DeadLetters) int {
		return cmp.Or(cmp.Compare(order[a.Stage], order[b.Stage]), cmp.Compare(b.Count, a.Count), cmp.Compare(a.Reason, b.Reason))
	})
	return out
}
