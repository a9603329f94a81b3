package platform

import (
	"fmt"
	"os"
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
