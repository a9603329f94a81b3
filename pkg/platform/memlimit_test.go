package platform

import (
	"io"
	"log/slog"
	"math"
	"os"
	"runtime/debug"
	"testing"

	"github.com/KimMachineGun/automemlimit/memlimit"
)

// The heap is held to three quarters of a container's limit, unless GOMEMLIMIT says
// otherwise; with no limit the collector runs at GOGC 50, unless GOGC says otherwise.
func TestSetMemoryLimit(t *testing.T) {
	prev := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(prev) })
	prevGC := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(prevGC) })
	for _, env := range []string{"AUTOMEMLIMIT", "GOMEMLIMIT", "GOGC"} {
		t.Setenv(env, "") // restored after the test
		if err := os.Unsetenv(env); err != nil {
			t.Fatal(err)
		}
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))

	if got := SetMemoryLimit(log, memlimit.Limit(4<<30)); got != 3<<30 || debug.SetMemoryLimit(-1) != 3<<30 {
		t.Fatalf("limit %d (runtime %d) under a 4 GiB container; want %d", got, debug.SetMemoryLimit(-1), int64(3<<30))
	}
	if gc := debug.SetGCPercent(100); gc != 100 {
		t.Fatalf("GOGC %d under a container limit; want the default 100", gc)
	}
	debug.SetMemoryLimit(math.MaxInt64)
	noLimit := func() (uint64, error) { return 0, memlimit.ErrNoLimit }
	if got := SetMemoryLimit(log, noLimit); got != math.MaxInt64 {
		t.Fatalf("limit %d without a container limit; want none", got)
	}
	if gc := debug.SetGCPercent(100); gc != gcPercentWithoutLimit {
		t.Fatalf("GOGC %d without a limit; want %d", gc, gcPercentWithoutLimit)
	}
	t.Setenv("GOGC", "200")
	if SetMemoryLimit(log, noLimit); debug.SetGCPercent(100) != 100 {
		t.Fatal("GOGC changed although the environment sets it")
	}
	if err := os.Unsetenv("GOGC"); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GOMEMLIMIT", "1GiB")
	debug.SetMemoryLimit(1 << 30)
	if got := SetMemoryLimit(log, memlimit.Limit(4<<30)); got != 1<<30 {
		t.Fatalf("limit %d with GOMEMLIMIT=1GiB; want the explicit one", got)
	}
}
