package platform

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"syscall"
)

// StartCPUProfile starts profiling the process's CPU into path and returns the function
// that stops it and closes the file. Where indexing or a query spends its time is found
// this way (docs/benchmarks.md); the profile covers the whole run, so short-lived
// commands such as `graphrag eval` can be profiled without an HTTP endpoint.
func StartCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("creating the CPU profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("starting the CPU profile %s: %w", path, err)
	}
	return func() {
		pprof.StopCPUProfile()
		_ = f.Close()
	}, nil
}

// WriteHeapProfile writes the live heap, after a collection, to path: what the process
// still holds, by the code that allocated it. Called when a command ends with its
// stores open, it shows what indexing a corpus left in memory (docs/benchmarks.md).
func WriteHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("creating the heap profile: %w", err)
	}
	runtime.GC()
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		_ = f.Close()
		return fmt.Errorf("writing the heap profile %s: %w", path, err)
	}
	return f.Close()
}

// HeapProfileOnSignal writes the live heap to path.N (N = 1, 2, ...) each time the process
// gets SIGUSR1, until ctx ends. The profile at exit misses the peak of a long run (the
// final detection of a 100k-chunk corpus, say); `kill -USR1 PID` then takes one.
func HeapProfileOnSignal(ctx context.Context, path string, log *slog.Logger) {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGUSR1)
	go func() {
		defer signal.Stop(sig)
		for n := 1; ; n++ {
			select {
			case <-ctx.Done():
				return
			case <-sig:
				p := fmt.Sprintf("%s.%d", path, n)
				if err := WriteHeapProfile(p); err != nil {
					log.Error("heap profile not written", "err", err)
					continue
				}
				log.Info("heap profile written", "path", p)
			}
		}
	}()
}
