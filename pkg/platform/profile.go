package platform

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
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
