package grapher

import (
	"context"
	"fmt"
	"time"

	"github.com/graphrag/graphrag/pkg/pipeline"
	"github.com/graphrag/graphrag/pkg/schema"
)

// reportCheckEvery is how often the grapher looks again for the reports of a corpus's
// communities while some are missing.
const reportCheckEvery = time.Second

// checkReports counts again, for every corpus whose communities are current but not all
// reported, the communities still without a report, and records the count in the
// corpus's state: status calls a corpus complete only when none is missing. A summary
// event does not prove that its report is still there, nor does a dead-lettered
// community event say that a report is missing, so the grapher asks the store.
func (s *Service) checkReports(ctx context.Context) {
	for _, corpus := range s.reportsToCheck() {
		if err := s.recountReports(ctx, corpus); err != nil {
			s.log.Warn("counting community reports; will retry", "corpus", corpus, "err", err)
		}
	}
}

// reportsToCheck lists the corpora whose missing reports are due for a look.
func (s *Service) reportsToCheck() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	now := time.Now()
	for c, st := range s.corpora {
		if !st.state.Dirty && st.state.Unreported > 0 && now.Sub(st.reportsChecked) >= reportCheckEvery && s.owner(c) != nil {
			out = append(out, c)
		}
	}
	return out
}

// recountReports looks up the reports of the communities known to lack one (all current
// communities after a restart) and saves the new count when it changed.
func (s *Service) recountReports(ctx context.Context, corpus string) error {
	s.mu.Lock()
	st := s.corpora[corpus]
	ids, known := st.unreported, st.unreported != nil
	s.mu.Unlock()
	if !known {
		comms, err := s.deps.Graph.Communities(ctx, corpus, -1)
		if err != nil {
			return fmt.Errorf("reading communities: %w", err)
		}
		for _, c := range comms {
			ids = append(ids, c.ID)
		}
	}
	coll := schema.Collection(corpus, schema.Communities)
	missing, err := s.withoutReport(ctx, coll, ids)
	if err != nil {
		return err
	}
	if missing, err = s.notQuarantined(ctx, corpus, coll, missing, false); err != nil {
		return err
	}
	s.mu.Lock()
	if st.state.Dirty {
		s.mu.Unlock()
		return nil // a detection run is due and will count afresh
	}
	changed := st.state.Unreported != len(missing)
	st.state.Unreported, st.unreported, st.reportsChecked = len(missing), append([]string{}, missing...), time.Now()
	s.mu.Unlock()
	if !changed {
		return nil
	}
	return s.saveState(ctx, corpus)
}

// notQuarantined returns the communities of missing (without a report) whose report
// the summarizer did not quarantine: a report the store refused as invalid does not
// keep the corpus from completing (status lists it). With prune, missing holds every
// current community without a report, and the entries of the others (reported since,
// or gone) leave the quarantine list.
func (s *Service) notQuarantined(ctx context.Context, corpus, coll string, missing []string, prune bool) ([]string, error) {
	keys, err := s.kv.Keys(ctx, schema.QuarantineStagePrefix(corpus, pipeline.StageSummarizer))
	if err != nil {
		return nil, fmt.Errorf("listing quarantined reports: %w", err)
	}
	if len(keys) == 0 {
		return missing, nil
	}
	byKey := make(map[string]string, len(missing))
	for _, id := range missing {
		byKey[schema.QuarantineKey(corpus, pipeline.StageSummarizer, coll, id)] = id
	}
	quarantined := make(map[string]bool, len(keys))
	for _, k := range keys {
		if id, ok := byKey[k]; ok {
			quarantined[id] = true
			continue
		}
		if !prune {
			continue
		}
		if err := s.kv.Delete(ctx, k); err != nil {
			return nil, fmt.Errorf("releasing a quarantined report: %w", err)
		}
	}
	out := make([]string, 0, len(missing)-len(quarantined))
	for _, id := range missing {
		if !quarantined[id] {
			out = append(out, id)
		}
	}
	return out, nil
}

// saveState writes the corpus's current state. Saves are serialized and each writes the
// state as it is when the save runs, so a save never overwrites a newer state with an
// older one (a detection run finishing while a merge marks the corpus dirty).
func (s *Service) saveState(ctx context.Context, corpus string) error {
	s.saveMu.Lock()
	defer s.saveMu.Unlock()
	s.mu.Lock()
	st, ok := s.corpora[corpus]
	mine := s.owner(corpus) != nil
	var snapshot pipeline.GraphState
	if ok {
		snapshot = st.state
	}
	s.mu.Unlock()
	if !ok || !mine {
		return nil // the corpus's shard was given up: its new holder keeps its state
	}
	return pipeline.SaveGraphState(ctx, s.kv, corpus, snapshot)
}
