package calltracetest_test

import (
	"testing"

	"go.opentelemetry.io/otel"

	"github.com/graphrag/graphrag/pkg/telemetry/calltrace/calltracetest"
)

// After Detach, a counter and a tracer made before Install (from the default globals,
// as an earlier test's server makes them) do not record into the test's providers,
// even at the first Install of the process (otel forwards the defaults to the first
// provider set); those made after Install do.
func TestDetach(t *testing.T) {
	earlier, err := otel.Meter("earlier").Int64Counter("earlier.calls")
	if err != nil {
		t.Fatal(err)
	}
	earlierTracer := otel.Tracer("earlier")

	calltracetest.Detach()
	p := calltracetest.Install(t)
	later, err := otel.Meter("later").Int64Counter("later.calls")
	if err != nil {
		t.Fatal(err)
	}
	earlier.Add(t.Context(), 1)
	later.Add(t.Context(), 1)
	_, span := earlierTracer.Start(t.Context(), "earlier")
	span.End()
	_, span = otel.Tracer("later").Start(t.Context(), "later")
	span.End()

	if n := p.Count(t, "earlier.calls"); n != 0 {
		t.Errorf("earlier.calls = %d, want 0: an instrument made before Install records into it", n)
	}
	if n := p.Count(t, "later.calls"); n != 1 {
		t.Errorf("later.calls = %d, want 1", n)
	}
	var names []string
	for _, s := range p.Spans.GetSpans() {
		names = append(names, s.Name)
	}
	if len(names) != 1 || names[0] != "later" {
		t.Errorf("spans %v, want [later]", names)
	}
}
