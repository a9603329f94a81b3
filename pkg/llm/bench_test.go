package llm_test

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/graphrag/graphrag/pkg/llm"
	"github.com/graphrag/graphrag/pkg/llm/llmtest"
)

// benchClient is newClient for benchmarks.
func benchClient(b *testing.B, srv *llmtest.Server, mod func(*llm.Config), opts ...llm.Option) *llm.Client {
	b.Helper()
	cfg := llm.Config{BaseURL: srv.URL(), ChatModel: "m", EmbedModel: "e", MaxConcurrency: 16}
	if mod != nil {
		mod(&cfg)
	}
	c, err := llm.New(cfg, opts...)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = c.Close() })
	return c
}

// Client overhead over loopback: every call reaches the fake.
func BenchmarkChat(b *testing.B) {
	srv := llmtest.NewServer()
	b.Cleanup(srv.Close)
	c := benchClient(b, srv, nil)
	var n atomic.Int64
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := c.Chat(b.Context(), chatReq(fmt.Sprint("prompt ", n.Add(1)))); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// Throughput against an endpoint with 20ms latency and room for 8 at once:
// the client's MaxConcurrency (8) should keep it saturated (~400 calls/s).
func BenchmarkChatSaturatedEndpoint(b *testing.B) {
	srv := llmtest.NewServer(llmtest.WithLatency(20*time.Millisecond), llmtest.WithMaxConcurrency(8))
	b.Cleanup(srv.Close)
	c := benchClient(b, srv, func(c *llm.Config) { c.MaxConcurrency = 8 })
	var n atomic.Int64
	b.SetParallelism(4)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := c.Chat(b.Context(), chatReq(fmt.Sprint("prompt ", n.Add(1)))); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
}

func BenchmarkChatCacheHit(b *testing.B) {
	srv := llmtest.NewServer()
	b.Cleanup(srv.Close)
	c := benchClient(b, srv, nil, llm.WithCache(llm.NewMemoryCache(1024)))
	req := chatReq("the same chunk every time, as in a re-index of unchanged documents")
	if _, err := c.Chat(b.Context(), req); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := c.Chat(b.Context(), req); err != nil {
			b.Fatal(err)
		}
	}
	if srv.Calls() != 1 {
		b.Fatalf("cache misses: %d calls", srv.Calls())
	}
}

// 1024 distinct texts per op in batches of 64, 384 dimensions.
func BenchmarkEmbed1024(b *testing.B) {
	srv := llmtest.NewServer(llmtest.WithDimension(384))
	b.Cleanup(srv.Close)
	c := benchClient(b, srv, nil)
	round := 0
	b.ReportAllocs()
	for b.Loop() {
		in := make([]string, 1024)
		for i := range in {
			in[i] = fmt.Sprintf("round %d text %d", round, i)
		}
		round++
		if _, err := c.Embed(b.Context(), in); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*1024)/b.Elapsed().Seconds(), "texts/s")
}
