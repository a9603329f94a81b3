package main

import (
	"context"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"
)

// TestLifecycleProperty: for random interleavings of publications, re-publications of
// the same text, deletions and corpus drops of a few ids, published in random bursts
// while chunker replicas come and go, the corpus ends exactly as a fresh pipeline given
// only the events that win (the last per id by stream order) leaves it. The seeds are
// fixed so that a failure can be replayed; -lifecycle.seeds runs more.
func TestLifecycleProperty(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the pipeline twice per seed")
	}
	seeds := *lifecycleSeeds
	if raceEnabled {
		seeds = min(seeds, 4) // a minute under the race detector for 8
	}
	for seed := range uint64(seeds) {
		t.Run("seed="+strconv.FormatUint(seed, 10), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 0x5eed))
			const corpus = "prop"
			ids := 2 + rng.IntN(4)
			h := newLifecycleHarness(t, 1+rng.IntN(3))
			var all []lifecycleEvent
			texts := map[string]string{}
			for round := range 3 + rng.IntN(4) {
				var burst []lifecycleEvent
				for range 5 + rng.IntN(30) {
					doc := rng.IntN(ids)
					id := "doc-" + strconv.Itoa(doc)
					switch r := rng.IntN(100); {
					case r < 20:
						burst = append(burst, lifecycleEvent{ID: id})
					case r < 23:
						burst = append(burst, lifecycleEvent{Drop: true})
					case r < 35 && texts[id] != "":
						burst = append(burst, lifecycleEvent{ID: id, Title: "Survey " + id, Text: texts[id]}) // unchanged
					default:
						texts[id] = versionText(doc, rng.IntN(1000))
						burst = append(burst, lifecycleEvent{ID: id, Title: "Survey " + id, Text: texts[id]})
					}
				}
				h.publishBurst(corpus, burst)
				all = append(all, burst...)
				// Replicas come and go while the burst is handled: a new one joins, or
				// one stops (gracefully: it finishes or hands back what it holds).
				switch rng.IntN(3) {
				case 0:
					h.addExtractor()
				case 1:
					if live := h.liveExtractors(); len(live) > 1 {
						h.stopExtractor(live[rng.IntN(len(live))])
					}
				}
				time.Sleep(time.Duration(rng.IntN(200)) * time.Millisecond)
				t.Logf("round %d: %d events", round, len(burst))
			}
			h.waitDone(corpus, 3*time.Minute)
			h.checkRecords(corpus, all)
			got, want := h.dump(corpus), reference(t, corpus, all)
			if d := diffDumps(got, want); d != "" {
				t.Fatalf("seed %d: the corpus differs from the winning events alone:\n%s", seed, d)
			}
		})
	}
}

// liveExtractors returns the indexes of the extractor instances still running.
func (h *lifecycleHarness) liveExtractors() []int {
	var out []int
	for i := range h.extractors {
		if !h.stoppedExtractor[i] {
			out = append(out, i)
		}
	}
	return out
}

// stopExtractor stops one extractor instance gracefully.
func (h *lifecycleHarness) stopExtractor(i int) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := h.extractors[i].Stop(ctx); err != nil {
		h.t.Fatalf("stopping extractor %d: %v", i, err)
	}
	h.stoppedExtractor[i] = true
}
