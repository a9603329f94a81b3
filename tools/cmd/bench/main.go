// Command bench measures the platform and regenerates docs/benchmarks.md: realistic
// corpora (indexing, memory, retrieval), synthetic retrieval, the pipeline, the map
// phase, graph algorithms, events and the bus (package bench). It is a development
// tool, not part of the shipped graphrag binary; run it from the repository root:
//
//	go run ./tools/cmd/bench -out docs/benchmarks.md
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/graphrag/graphrag/tools/bench"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := bench.Run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "bench:", err)
		}
		os.Exit(1)
	}
}
