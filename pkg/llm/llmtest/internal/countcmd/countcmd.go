// Package countcmd is what the counting commands of llmtest (embedcount, chatcount) share:
// the flags that shape the fake endpoint, and serving it until the process is told to stop,
// then printing the counts.
package countcmd

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/graphrag/graphrag/pkg/llm/llmtest"
)

// Main runs a counting command's run with the process's arguments and stdout, and exits
// 1 with its error.
func Main(name string, run func(args []string, stdout io.Writer) error) {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		os.Exit(1)
	}
}

// Serve starts the endpoint with the flags and script, writes its URL as the first line
// of stdout, and on SIGINT or SIGTERM writes the counts with report.
func Serve(stdout io.Writer, f *Flags, script llmtest.Script, report func(io.Writer)) {
	srv := llmtest.NewServer(llmtest.WithDimension(f.dim), llmtest.WithLatency(f.latency), llmtest.WithMaxConcurrency(f.concurrency),
		llmtest.WithScript(script))
	defer srv.Close()
	// Caught before the URL is out: whoever read it may stop the endpoint at once.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	fmt.Fprintln(stdout, srv.URL())
	if file, ok := stdout.(*os.File); ok {
		_ = file.Sync()
	}
	<-ctx.Done()
	report(stdout)
}
