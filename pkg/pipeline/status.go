package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/pkg/schema"
)

// GraphState is the grapher's per-corpus progress record, in schema.StateBucket under
// schema.GraphStateKey. Dirty means extractions were merged since the last community
// detection run, so communities (and their reports) are not yet current.
type GraphState struct {
	Dirty      bool      `json:"dirty"`
	Changes    int       `json:"changes"`     // merges since the last run
	LastRun    string    `json:"last_run"`    // id of the last detection run
	LastRunAt  time.Time `json:"last_run_at"` // zero before the first run
	Levels     int       `json:"levels"`
	Published  int       `json:"published"` // community events of the last run
	Detections int       `json:"detections"`
	// Communities counts the communities of the last run, and Unreported those of them
	// without a report as the grapher last looked (it looks again every second while
	// any is missing). A community event that was dead-lettered or lost leaves its
	// community unreported, and the corpus incomplete.
	Communities int `json:"communities"`
	Unreported  int `json:"unreported"`
	// FailingSince is when the detection runs of the corpus began to fail (zero while
	// they succeed), Failures how many failed in a row since, LastError the reason of
	// the last; the grapher retries with growing pauses (NextRetry).
	FailingSince time.Time `json:"failing_since,omitzero"`
	Failures     int       `json:"failures,omitempty"`
	LastError    string    `json:"last_error,omitempty"`
	NextRetry    time.Time `json:"next_retry,omitzero"`
}

// Failing says in words why detection does not complete: "community detection failing
// since <time> (<n> runs): <reason>", or "" while it succeeds.
func (g GraphState) Failing() string {
	if g.Failures == 0 {
		return ""
	}
	return fmt.Sprintf("community detection failing since %s (%d runs): %s", g.FailingSince.UTC().Format(time.RFC3339), g.Failures, g.LastError)
}

// LoadGraphState reads the grapher's record of a corpus (zero value when absent).
func LoadGraphState(ctx context.Context, kv bus.KV, corpus string) (GraphState, error) {
	var s GraphState
	v, err := kv.Get(ctx, schema.GraphStateKey(corpus))
	if errors.Is(err, bus.ErrNotFound) {
		return s, nil
	}
	if err != nil {
		return s, fmt.Errorf("reading grapher state of %s: %w", corpus, err)
	}
	if err := json.Unmarshal(v, &s); err != nil {
		return s, fmt.Errorf("decoding grapher state of %s: %w", corpus, err)
	}
	return s, nil
}

// SaveGraphState writes the grapher's record of a corpus.
func SaveGraphState(ctx context.Context, kv bus.KV, corpus string, s GraphState) error {
	b, err := json.Marshal(s)
	if err != nil {
		return fmt.Errorf("encoding grapher state: %w", err)
	}
	if err := kv.Put(ctx, schema.GraphStateKey(corpus), b); err != nil {
		return fmt.Errorf("writing grapher state of %s: %w", corpus, err)
	}
	return nil
}

// StageStatus counts the messages of one stage for one corpus.
type StageStatus struct {
	Stage        string `json:"stage"`
	Total        uint64 `json:"total"`         // messages published to the stage's input
	Pending      uint64 `json:"pending"`       // not yet delivered
	InFlight     uint64 `json:"in_flight"`     // delivered, not yet acknowledged
	Done         uint64 `json:"done"`          // acknowledged (including dead-lettered)
	DeadLettered uint64 `json:"dead_lettered"` // given up on, in the DLQ with a reason
	// Rate is the messages of the corpus the stage handled per second over the last
	// RateWindow (all its replicas); 0 when it handled none.
	Rate float64 `json:"rate"`
	// ETASeconds is how long the messages left (pending and in flight) take at Rate;
	// absent when none are left or the stage handled none lately.
	ETASeconds float64 `json:"eta_seconds,omitempty"`
}

// States of a corpus, in Status.State.
const (
	// StateEmpty: nothing was published to the corpus.
	StateEmpty = "empty"
	// StateIndexing: messages wait or are being handled, or communities are not current.
	StateIndexing = "indexing"
	// StateReportsMissing: every stage is done, and some current communities have no
	// report (their events were dead-lettered): not complete, and nothing will change
	// it without an operator (see the summarizer's dead letters).
	StateReportsMissing = "incomplete: communities without a report"
	// StateComplete: every message handled, communities current, every one reported.
	StateComplete = "complete"
)

// Status is the indexing progress of a corpus.
type Status struct {
	Corpus   string        `json:"corpus"`
	Stages   []StageStatus `json:"stages"`
	Graph    GraphState    `json:"graph"`
	Complete bool          `json:"complete"`
	// State says in words where the corpus is: one of the State* constants.
	State string `json:"state"`
	// Paused lists the stage replicas waiting for a dependency (their model endpoint,
	// a store) to answer again, when the corpus is not complete.
	Paused []Pause `json:"paused,omitempty"`
	// Quarantined counts the records a store refused as invalid, which the stages left
	// out and went on without (see Quarantined); QuarantinedRecords lists the newest
	// MaxStatusQuarantined of them with their reasons. They do not hold a corpus back.
	Quarantined        int           `json:"quarantined"`
	QuarantinedRecords []Quarantined `json:"quarantined_records,omitempty"`
}

// MaxStatusQuarantined bounds the quarantined records GetStatus lists.
const MaxStatusQuarantined = 100

// GetStatus reads the progress of a corpus. Stages are read in flow order and the
// grapher record between the extractions and the communities, so a message moving on
// while we read can only make the result look less complete, never more.
func GetStatus(ctx context.Context, b *bus.Bus, corpus string) (Status, error) {
	if err := events.ValidateCorpus(corpus); err != nil {
		return Status{}, err
	}
	st := Status{Corpus: corpus, Complete: true}
	dlq, err := subjectCounts(ctx, b, DLQStream, events.SubjectPrefix+".dlq.*."+corpus)
	if err != nil {
		return st, fmt.Errorf("counting dead letters: %w", err)
	}
	for _, s := range Stages {
		if s.Name == StageSummarizer {
			kv, err := b.KV(ctx, schema.StateBucket)
			switch {
			case errors.Is(err, bus.ErrNotFound):
				// Not provisioned yet: no grapher has run.
			case err != nil:
				return st, err
			default:
				if st.Graph, err = LoadGraphState(ctx, kv, corpus); err != nil {
					return st, err
				}
				if st.QuarantinedRecords, st.Quarantined, err = QuarantinedRecords(ctx, kv, corpus, MaxStatusQuarantined); err != nil {
					return st, err
				}
			}
			if st.Graph.Dirty {
				st.Complete = false
			}
		}
		ss := StageStatus{Stage: s.Name, DeadLettered: dlq[events.DeadLetterSubject(s.Name, corpus)]}
		counts, err := corpusSubjects(ctx, b, s.Input, corpus)
		if err != nil {
			return st, fmt.Errorf("counting %s: %w", s.Input, err)
		}
		if len(counts) == 0 {
			counts[events.Subject(s.Input, corpus)] = 0
		}
		for subject, total := range counts {
			pending, inFlight, err := stageProgress(ctx, b, s.Name, s.Input, subject, total)
			if err != nil {
				return st, err
			}
			ss.Total, ss.Pending, ss.InFlight = ss.Total+total, ss.Pending+pending, ss.InFlight+inFlight
		}
		if ss.Pending+ss.InFlight <= ss.Total {
			ss.Done = ss.Total - ss.Pending - ss.InFlight
		}
		if ss.Pending > 0 || ss.InFlight > 0 {
			st.Complete = false
		}
		st.Stages = append(st.Stages, ss)
	}
	rates, err := StageRates(ctx, b, corpus)
	if err != nil {
		return st, err
	}
	for i := range st.Stages {
		st.Stages[i].withRate(rates[st.Stages[i].Stage])
	}
	drained := st.Complete
	if st.Graph.Unreported > 0 {
		st.Complete = false
	}
	switch {
	case st.Stages[0].Total == 0:
		st.Complete = false // nothing published: nothing is indexed
		st.State = StateEmpty
	case st.Complete:
		st.State = StateComplete
	case drained:
		st.State = StateReportsMissing
	default:
		st.State = StateIndexing
	}
	if !st.Complete && st.State != StateEmpty {
		pauses, err := Pauses(ctx, b)
		if err != nil {
			return st, err
		}
		if len(pauses) > 0 {
			st.Paused, st.State = pauses, StatePaused
		}
	}
	return st, nil
}

// subjectCounts is Bus.SubjectCounts with a stream that does not exist (yet: the
// services provision the streams as they start, and a client may read status before the
// last one is created) holding nothing.
func subjectCounts(ctx context.Context, b *bus.Bus, stream, filter string) (map[string]uint64, error) {
	counts, err := b.SubjectCounts(ctx, stream, filter)
	if errors.Is(err, bus.ErrNotFound) {
		return map[string]uint64{}, nil
	}
	return counts, err
}

// WaitComplete polls GetStatus until the corpus is complete, ctx ends, or the status
// stays complete-looking for `settle` (protects against reading between a publish and the
// consumer noticing a new corpus).
func WaitComplete(ctx context.Context, b *bus.Bus, corpus string, poll time.Duration, progress func(Status)) (Status, error) {
	for {
		st, err := GetStatus(ctx, b, corpus)
		if err != nil {
			return st, err
		}
		if progress != nil {
			progress(st)
		}
		if st.Complete {
			return st, nil
		}
		select {
		case <-ctx.Done():
			return st, fmt.Errorf("waiting for corpus %s: %w", corpus, ctx.Err())
		case <-time.After(poll):
		}
	}
}
