package vectorstore_test

import (
	"testing"

	"github.com/graphrag/graphrag/pkg/telemetry/calltrace/calltracetest"
	"github.com/graphrag/graphrag/pkg/vectorstore"
)

// The cost of the wrapper per call, with the providers a test installs (every span
// kept in memory, every measurement aggregated) and without any (the otel no-ops).
func BenchmarkValidatingGet(b *testing.B) {
	run := func(b *testing.B) {
		s := vectorstore.Validating(&counting{})
		ctx := b.Context()
		b.ReportAllocs()
		for b.Loop() {
			if _, err := s.Get(ctx, "demo_chunks", nil); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("driver", func(b *testing.B) {
		d := &counting{}
		ctx := b.Context()
		b.ReportAllocs()
		for b.Loop() {
			_, _ = d.Get(ctx, "demo_chunks", nil)
		}
	})
	b.Run("noop", run)
	b.Run("sdk", func(b *testing.B) {
		p := calltracetest.Install(b)
		run(b)
		p.Spans.Reset()
	})
}
