package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/graphrag/graphrag/pkg/platform"
	"github.com/graphrag/graphrag/pkg/platform/graphdrivers"
	"github.com/graphrag/graphrag/pkg/platform/natsserver"
	"github.com/graphrag/graphrag/pkg/platform/vectordrivers"
	"github.com/graphrag/graphrag/pkg/service"
	"github.com/graphrag/graphrag/services/extractor"
	"github.com/graphrag/graphrag/services/grapher"
	"github.com/graphrag/graphrag/services/query"
	"github.com/graphrag/graphrag/services/summarizer"
)

// runInit writes the settings file: every flag of every component, with its help text
// and default as comments and no value.
func runInit(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("init", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "graphrag.yaml", "file to write; - for standard output")
	force := fs.Bool("force", false, "overwrite the file when it exists")
	setUsage(fs, stderr, "usage: graphrag init [-o FILE] [-force]\n\nWrites a settings file that every binary reads with -config FILE (or GRAPHRAG_CONFIG):\nevery flag of every component, with its help text and default, and no value set.")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("init takes no arguments, got %q", fs.Args())
	}
	if *out == "-" {
		return service.WriteSettings(stdout, settingsGroups())
	}
	mode := os.O_WRONLY | os.O_CREATE | os.O_EXCL
	if *force {
		mode = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	}
	f, err := os.OpenFile(*out, mode, 0o644)
	if errors.Is(err, os.ErrExist) {
		return fmt.Errorf("%s exists: give -force to overwrite it", *out)
	}
	if err != nil {
		return err
	}
	if err := service.WriteSettings(f, settingsGroups()); err != nil {
		_ = f.Close()
		return fmt.Errorf("writing %s: %w", *out, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", *out, err)
	}
	fmt.Fprintf(stdout, "wrote %s: give it to any binary with -config %s or GRAPHRAG_CONFIG=%s\n", *out, *out, *out)
	return nil
}

// settingsGroups are the components whose flags make the settings file, in the order
// the file lists them, each registered with its defaults as its binaries register it.
// A command's per-run flags (up -demo, eval -dataset, publish -corpus) are not settings.
func settingsGroups() []service.SettingsGroup {
	reg := func(register func(fs *flag.FlagSet)) *flag.FlagSet {
		fs := flag.NewFlagSet("", flag.ContinueOnError)
		register(fs)
		return fs
	}
	backend := func(needs platform.Needs) *flag.FlagSet {
		return reg(func(fs *flag.FlagSet) {
			var b platform.BackendFlags
			b.Register(fs, needs)
		})
	}
	ex, gr, su, qu := extractor.DefaultConfig(), grapher.DefaultConfig(), summarizer.DefaultConfig(), query.DefaultConfig()
	return []service.SettingsGroup{
		{Name: "common", About: "every binary", Flags: reg(func(fs *flag.FlagSet) {
			var c service.CommonFlags
			c.Register(fs)
		})},
		{Name: "nats", About: "every binary; nats-port and nats-max-payload: graphrag up, mcp and eval", Flags: backend(platform.Needs{Bus: true, NATSServer: natsserver.Start})},
		{Name: "model", About: "every binary", Flags: backend(platform.Needs{Model: true})},
		{Name: "graph store", About: "grapher, summarizer, query; graphrag up, mcp and eval", Flags: backend(platform.Needs{Graph: graphdrivers.All()})},
		{Name: "vector store", About: "every binary", Flags: backend(platform.Needs{Vectors: vectordrivers.All()})},
		{Name: "extractor", About: "extractor; graphrag up and eval", Flags: reg(ex.RegisterFlags)},
		{Name: "grapher", About: "grapher; graphrag up and eval", Flags: reg(gr.RegisterFlags)},
		{Name: "summarizer", About: "summarizer; graphrag up and eval", Flags: reg(su.RegisterFlags)},
		{Name: "query engine", About: "query; graphrag up, mcp and eval", Flags: reg(qu.RegisterEngineFlags)},
		{Name: "query API", About: "query; graphrag up", Flags: reg(qu.API.RegisterFlags)},
	}
}
