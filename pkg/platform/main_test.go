package platform_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/graphrag/graphrag/pkg/platform"
	"github.com/graphrag/graphrag/pkg/platform/graphdrivers"
	"github.com/graphrag/graphrag/pkg/platform/vectordrivers"
	"github.com/graphrag/graphrag/pkg/service"
)

// workers is a service config with one flag and a Validate.
type workers struct{ n int }

func (w *workers) Validate() error {
	var p service.Problems
	service.AtLeast(&p, "-workers", w.n, 1)
	return p.Err()
}

// Main validates the common, backend and service flags before anything starts, and
// fails with every invalid one named.
func TestMainRejectsInvalidConfig(t *testing.T) {
	var cfg workers
	var stderr bytes.Buffer
	err := platform.Main(t.Context(), []string{"-workers", "-2", "-llm-concurrency", "0", "-log-format", "yaml"}, &stderr, platform.Spec{
		Name:   "test",
		Needs:  platform.Needs{Model: true},
		Flags:  func(fs *flag.FlagSet) { fs.IntVar(&cfg.n, "workers", 4, "") },
		Config: &cfg,
		Build: func(context.Context, *platform.Platform, *http.ServeMux, *slog.Logger) ([]service.Component, error) {
			t.Error("built a service with an invalid configuration")
			return nil, nil
		},
	})
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{"-workers: must be at least 1, got -2", "-llm-concurrency: must be at least 1, got 0", "-log-format"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if strings.Contains(stderr.String(), "effective configuration") {
		t.Errorf("logged a configuration it refused:\n%s", stderr.String())
	}
}

// A process registers the flags of the backends it uses and no other: the extractor's
// needs (vectors, a model, the bus) have no -graph-store or -neo4j-*, so they are
// refused on the command line, while the environment variable of one (a ConfigMap
// shared with the grapher) is not read at all.
func TestRegisterOnlyUsedBackends(t *testing.T) {
	extractor := platform.Needs{Bus: true, Model: true, Vectors: vectordrivers.All()}
	var b platform.BackendFlags
	fs := flag.NewFlagSet("extractor", flag.ContinueOnError)
	fs.SetOutput(&bytes.Buffer{})
	b.Register(fs, extractor)
	for _, name := range []string{"graph-store", "neo4j-uri", "neo4j-password", "nats-port", "nats-max-payload"} {
		if fs.Lookup(name) != nil {
			t.Errorf("-%s registered without a use for it", name)
		}
	}
	for _, name := range []string{"vector-store", "milvus-address", "llm-base-url", "embed-dim", "stream-replicas"} {
		if fs.Lookup(name) == nil {
			t.Errorf("-%s not registered", name)
		}
	}
	if err := fs.Parse([]string{"-neo4j-uri", "bolt://x:7687"}); err == nil {
		t.Error("-neo4j-uri accepted by a process without a graph store")
	}
	if b != platform.DefaultBackendFlags() {
		t.Errorf("unregistered fields are not at their defaults: %+v", b)
	}
	if err := b.Validate(); err != nil {
		t.Errorf("defaults: %v", err)
	}

	t.Setenv("GRAPHRAG_NEO4J_URI", "bolt://x:7687")
	fs = flag.NewFlagSet("extractor", flag.ContinueOnError)
	b.Register(fs, extractor)
	if err := service.ParseFlags(fs, nil, platform.EnvPrefix); err != nil {
		t.Errorf("an unread variable in the environment: %v", err)
	}

	fs = flag.NewFlagSet("grapher", flag.ContinueOnError)
	b.Register(fs, platform.Needs{Bus: true, Model: true, Graph: graphdrivers.All(), Vectors: vectordrivers.All()})
	if err := service.ParseFlags(fs, nil, platform.EnvPrefix); err != nil || b.Neo4jURI != "bolt://x:7687" {
		t.Errorf("grapher: -neo4j-uri %q from the environment (%v)", b.Neo4jURI, err)
	}
}

// Main logs the effective configuration once: every flag the process defines, secrets
// masked, none it does not.
func TestMainLogsConfigOnce(t *testing.T) {
	const secret = "sk-live-0123456789"
	cfg := workers{}
	var stderr bytes.Buffer
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	err := platform.Main(ctx, []string{"-http-addr", "127.0.0.1:0", "-data-dir", t.TempDir(), "-llm-api-key", secret}, &stderr, platform.Spec{
		Name:   "test",
		Needs:  platform.Needs{Model: true},
		Flags:  func(fs *flag.FlagSet) { fs.IntVar(&cfg.n, "workers", 4, "") },
		Config: &cfg,
		Build: func(context.Context, *platform.Platform, *http.ServeMux, *slog.Logger) ([]service.Component, error) {
			return []service.Component{service.Loop("stop", func(ctx context.Context) error {
				cancel()
				<-ctx.Done()
				return nil
			})}, nil
		},
	})
	if err != nil && !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
	if strings.Contains(stderr.String(), secret) {
		t.Fatalf("the API key was logged:\n%s", stderr.String())
	}
	var lines []map[string]any
	for l := range strings.Lines(stderr.String()) {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil && m["msg"] == "effective configuration" {
			lines = append(lines, m)
		}
	}
	if len(lines) != 1 {
		t.Fatalf("%d configuration lines, want 1:\n%s", len(lines), stderr.String())
	}
	got, _ := lines[0]["config"].(map[string]any)
	if got["workers"] != "4" || got["llm-api-key"] != service.Mask || got["http-addr"] != "127.0.0.1:0" {
		t.Errorf("configuration %v", got)
	}
	if _, ok := got["neo4j-uri"]; ok {
		t.Errorf("logged -neo4j-uri, which the process does not read: %v", got)
	}
}
