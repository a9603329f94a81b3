package grapher

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/bus/bustest"
	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/pkg/pipeline"
)

// benchShards is the number of shards of the benchmarks' graphers (the deploy default).
const benchShards = 16

// benchGraphers provisions a fresh bus, starts n sharded graphers on it (each on its own
// connection, as processes would be, sharing one graph store and one vector store), and
// waits until they hold their fair shares.
func benchGraphers(b *testing.B, n int, configure func(*Config)) (*bus.Bus, []*Service) {
	b.Helper()
	ctx := b.Context()
	srv := bustest.StartServer(b)
	bb, err := bus.New(bustest.Connect(b, srv))
	if err != nil {
		b.Fatal(err)
	}
	if err := pipeline.Provision(ctx, bb, pipeline.DefaultTopology()); err != nil {
		b.Fatal(err)
	}
	st := openStores(b)
	cfg := shardTestConfig(benchShards)
	cfg.WarmStart = true
	cfg.Debounce = 200 * time.Millisecond
	if configure != nil {
		configure(&cfg)
	}
	var gs []*Service
	for range n {
		g, _ := startGrapher(b, srv, st, cfg, nil)
		gs = append(gs, g)
	}
	fair := (benchShards + n - 1) / n
	waitUntil(b, "the shards to be shared", func() bool {
		total := 0
		for _, g := range gs {
			h := len(g.heldShards())
			if h > fair {
				return false
			}
			total += h
		}
		return total == benchShards
	})
	return bb, gs
}

// allMerged reports whether the graphers' shard consumers have nothing pending.
func allMerged(ctx context.Context, b *bus.Bus) bool {
	for n := range benchShards {
		ci, err := b.ConsumerInfo(ctx, pipeline.StreamName(events.KindExtractions), pipeline.ShardDurable(pipeline.StageGrapher, n))
		if err != nil || ci.NumPending+ci.NumAckPending > 0 {
			return false
		}
	}
	return true
}

// BenchmarkGraphersShareCorpora publishes 50 corpora of 100 chunks at once to 1, 2 and 4
// sharded graphers and measures the time until every corpus is merged and detected.
// Run it with -benchtime=1x: one iteration takes seconds.
func BenchmarkGraphersShareCorpora(b *testing.B) {
	const corpora, chunks = 50, 100
	for _, n := range []int{1, 2, 4} {
		b.Run(fmt.Sprintf("graphers=%d", n), func(b *testing.B) {
			for range b.N {
				b.StopTimer()
				bb, gs := benchGraphers(b, n, nil)
				ctx := b.Context()
				var names []string
				var xs []*events.Extraction
				for i := range corpora {
					c := fmt.Sprintf("team_%02d", i)
					names = append(names, c)
					xs = append(xs, shardExtractions(c, 0, chunks)...)
				}
				b.StartTimer()
				publishExtractions(b, bb, xs)
				waitUntil(b, "every corpus merged", func() bool { return allMerged(ctx, bb) })
				waitUntil(b, "every corpus detected", func() bool {
					for _, c := range names {
						st, err := pipeline.LoadGraphState(ctx, gs[0].kv, c)
						if err != nil || st.Dirty || st.Detections == 0 {
							return false
						}
					}
					return true
				})
				b.StopTimer()
				for _, g := range gs {
					_ = g.Stop(ctx)
				}
			}
		})
	}
}

// BenchmarkSmallCorpusWhileBigDetects measures how long a small corpus (10 chunks) takes
// to be merged and detected when it is published while a big one (4,000 chunks) is being
// detected: with one detection at a time (the grapher before shards and
// -detect-concurrency), the default two, and two graphers holding one detection each.
func BenchmarkSmallCorpusWhileBigDetects(b *testing.B) {
	for _, tc := range []struct {
		name              string
		graphers, detects int
	}{{"graphers=1/detect-concurrency=1", 1, 1}, {"graphers=1/detect-concurrency=2", 1, 2}, {"graphers=2/detect-concurrency=1", 2, 1}} {
		b.Run(tc.name, func(b *testing.B) {
			for range b.N {
				b.StopTimer()
				bb, gs := benchGraphers(b, tc.graphers, func(c *Config) { c.DetectConcurrency = tc.detects })
				ctx := b.Context()
				big, small := "big", "small_corpus"
				if tc.graphers > 1 && pipeline.ShardOf(big, benchShards) == pipeline.ShardOf(small, benchShards) {
					b.Fatal("the two corpora share a shard: choose other names")
				}
				publishExtractions(b, bb, shardExtractions(big, 0, 4000))
				waitUntil(b, "the big corpus's detection to start", func() bool {
					for _, g := range gs {
						g.mu.Lock()
						st, ok := g.corpora[big]
						detecting := ok && st.detecting
						g.mu.Unlock()
						if detecting {
							return true
						}
					}
					return false
				})
				b.StartTimer()
				publishExtractions(b, bb, shardExtractions(small, 0, 10))
				waitUntil(b, "the small corpus", func() bool { return graphDone(ctx, bb, small, 10) })
				b.StopTimer()
				for _, g := range gs {
					_ = g.Stop(ctx)
				}
			}
		})
	}
}
