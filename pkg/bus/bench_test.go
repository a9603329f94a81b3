package bus_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/graphrag/graphrag/pkg/bus"
)

// BenchmarkPublishConsume measures end-to-end throughput: b.N messages
// published (each waiting for its stream ack) and handled with confirmed acks.
func BenchmarkPublishConsume(b *testing.B) {
	for _, workers := range []int{1, 8} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			e := newEnv(b)
			spec := fastSpec("bench")
			spec.Workers = workers
			var handled atomic.Int64
			c, err := e.b.Consume(context.Background(), spec, func(context.Context, *bus.Message) error {
				handled.Add(1)
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
			payload := make([]byte, 1024)
			ctx := context.Background()
			b.SetBytes(int64(len(payload)))
			b.ResetTimer()
			for range b.N {
				if _, err := e.b.Publish(ctx, "ev.bench", payload); err != nil {
					b.Fatal(err)
				}
			}
			for handled.Load() < int64(b.N) {
				time.Sleep(time.Millisecond)
			}
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
			sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			if err := c.Stop(sctx); err != nil {
				b.Fatal(err)
			}
		})
	}
}

// BenchmarkConsume measures consumer throughput alone: b.N messages are
// stored before the timer starts.
func BenchmarkConsume(b *testing.B) {
	for _, workers := range []int{1, 8} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			e := newEnv(b)
			ctx := context.Background()
			js := e.b.JetStream()
			payload := make([]byte, 1024)
			for i := range b.N {
				if _, err := js.PublishAsync("ev.bench", payload); err != nil {
					b.Fatalf("publish %d: %v", i, err)
				}
			}
			select {
			case <-js.PublishAsyncComplete():
			case <-time.After(time.Minute):
				b.Fatal("async publish did not complete")
			}
			spec := fastSpec("bench")
			spec.Workers = workers
			var handled atomic.Int64
			b.SetBytes(int64(len(payload)))
			b.ResetTimer()
			c, err := e.b.Consume(ctx, spec, func(context.Context, *bus.Message) error {
				handled.Add(1)
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
			for handled.Load() < int64(b.N) {
				time.Sleep(time.Millisecond)
			}
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
			sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			if err := c.Stop(sctx); err != nil {
				b.Fatal(err)
			}
		})
	}
}
