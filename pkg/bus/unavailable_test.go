package bus_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/graphrag/graphrag/pkg/bus"
)

// A message whose handler keeps failing because a dependency is down is retried past
// MaxDeliver and never dead-lettered; it is handled when the dependency is back.
func TestUnavailableIsNeverDeadLettered(t *testing.T) {
	e := newEnv(t)
	dlq := readDLQ(t, e)
	spec := fastSpec("down")
	var tries atomic.Int32
	var done atomic.Bool
	down := errors.New("model endpoint down")
	consume(t, e.b, spec, func(_ context.Context, m *bus.Message) error {
		if tries.Add(1) <= int32(spec.MaxDeliver)+2 {
			return fmt.Errorf("extracting: %w", bus.Unavailable(down))
		}
		done.Store(true)
		return nil
	})
	publishN(t, e.b, "ev.x", 1)
	eventually(t, "handled after the outage", done.Load)
	if n := len(dlq.snapshot()); n != 0 {
		t.Fatalf("%d dead letters for a message that met an outage", n)
	}
	if !errors.Is(bus.Unavailable(down), down) || bus.Unavailable(nil) != nil {
		t.Fatal("Unavailable does not wrap")
	}
}
