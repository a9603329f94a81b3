package service_test

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/graphrag/graphrag/pkg/service"
)

// The pieces of a service process as pkg/platform's Main puts them together: flags and
// environment into one config struct, validated before anything starts and logged
// once, the common HTTP endpoints, and components run until a signal or, here,
// cancellation.
func ExampleRun() {
	var cfg struct {
		service.CommonFlags
		Corpus string         `config:"corpus"`
		APIKey service.Secret `config:"api-key"`
	}
	fs := flag.NewFlagSet("example", flag.ContinueOnError)
	cfg.Register(fs)
	fs.StringVar(&cfg.Corpus, "corpus", "default", "corpus to process")
	fs.Var(&cfg.APIKey, "api-key", "LLM API key")
	if err := service.ParseFlags(fs, []string{"-http-addr=127.0.0.1:0", "-api-key=sk-123"}, "EXAMPLE"); err != nil {
		fmt.Println(err)
		return
	}
	if err := cfg.Validate(); err != nil {
		fmt.Println(err)
		return
	}
	logger := cfg.Logger(io.Discard) // os.Stderr in a real main
	service.LogFlags(logger, fs)

	health := service.NewHealth()
	health.AddReadiness("store", func(context.Context) error { return nil })
	mux := service.NewMux(health, nil)

	ctx, cancel := context.WithCancel(context.Background())
	worker := service.Loop("worker", func(ctx context.Context) error {
		fmt.Println("working on", cfg.Corpus)
		cancel() // stands in for SIGTERM
		<-ctx.Done()
		fmt.Println("drained")
		return nil
	})
	err := service.Run(ctx, logger, 5*time.Second, worker, service.HTTPServer(cfg.HTTPAddr, mux))
	fmt.Println("run:", err)
	// Output:
	// working on default
	// drained
	// run: <nil>
}
