package platform_test

import (
	"context"
	"flag"
	"io"
	"log/slog"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/graphrag/graphrag/pkg/platform"
	"github.com/graphrag/graphrag/pkg/platform/graphdrivers"
	"github.com/graphrag/graphrag/pkg/platform/natsserver"
	"github.com/graphrag/graphrag/pkg/platform/vectordrivers"
	"github.com/graphrag/graphrag/pkg/service"
)

// bleve's analysis workers are package-global and live as long as the process.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("github.com/blevesearch/bleve_index_api.AnalysisWorker"))
}

func flags(t *testing.T, args ...string) (service.CommonFlags, platform.BackendFlags) {
	t.Helper()
	var c service.CommonFlags
	var b platform.BackendFlags
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	c.Register(fs)
	b.Register(fs, platform.Needs{Bus: true, Model: true, Graph: graphdrivers.All(), Vectors: vectordrivers.All(), NATSServer: natsserver.Start})
	if err := fs.Parse(append([]string{"-data-dir", t.TempDir(), "-nats-port", "-1"}, args...)); err != nil {
		t.Fatal(err)
	}
	return c, b
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// TestOpenAll opens what `graphrag up` opens: the embedded NATS server, the bus and the
// embedded stores, through the drivers a main passes in.
func TestOpenAll(t *testing.T) {
	c, b := flags(t)
	needs := platform.Needs{Bus: true, Graph: graphdrivers.All(), Vectors: vectordrivers.All(), NATSServer: natsserver.Start}
	p, err := platform.Open(t.Context(), c, b, needs, "test", quiet)
	if err != nil {
		t.Fatal(err)
	}
	if p.Bus == nil || p.Graph == nil || p.Vectors == nil || p.Embedder == nil || !p.OfflineEmbedder {
		t.Fatalf("platform %+v", p)
	}
	if !p.ExclusiveGraph || p.Algorithms != nil {
		t.Errorf("embedded graph: exclusive %v, algorithms %v", p.ExclusiveGraph, p.Algorithms)
	}
	var names []string
	for _, r := range p.Health.Ready(t.Context()) {
		names = append(names, r.Name)
		if r.Err != nil {
			t.Errorf("readiness of %s: %v", r.Name, r.Err)
		}
	}
	if got := strings.Join(names, ","); got != "graph store,vector store,nats" {
		t.Errorf("readiness checks %s", got)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatalf("second close: %v", err)
	}
}

// TestOpenWithoutADriver: a binary built without a backend names what it has instead of
// opening nothing, and without an embedded server it needs -nats-url.
func TestOpenWithoutADriver(t *testing.T) {
	cases := []struct {
		name  string
		args  []string
		needs platform.Needs
		want  string
	}{
		{"no NATS server", nil, platform.Needs{Bus: true, Vectors: vectordrivers.All()}, "-nats-url is required"},
		{"LLM cache without NATS server", []string{"-llm-base-url", "http://127.0.0.1:1/v1", "-llm-chat-model", "m"},
			platform.Needs{Vectors: vectordrivers.All()}, "-nats-url is required"},
		{"no neo4j driver", []string{"-graph-store", "neo4j"},
			platform.Needs{Graph: graphdrivers.All()[:1]}, "-graph-store neo4j: this binary has no such driver (it has embedded)"},
		{"no milvus driver", []string{"-vector-store", "milvus"},
			platform.Needs{Vectors: vectordrivers.All()[:1]}, "-vector-store milvus: this binary has no such driver (it has embedded)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, b := flags(t, tc.args...)
			p, err := platform.Open(context.Background(), c, b, tc.needs, "test", quiet)
			if err == nil {
				_ = p.Close()
				t.Fatal("opened")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q, want %q", err, tc.want)
			}
		})
	}
}

// TestOpenInUseDataDir: a data dir another platform holds is refused before the embedded
// NATS server starts on it (it would open and recover that dir's JetStream store).
func TestOpenInUseDataDir(t *testing.T) {
	c, b := flags(t)
	needs := platform.Needs{Bus: true, Graph: graphdrivers.All(), Vectors: vectordrivers.All(), NATSServer: natsserver.Start}
	first, err := platform.Open(t.Context(), c, b, needs, "test", quiet)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = first.Close() }()
	started := false
	needs.NATSServer = func(cfg platform.NATSServerConfig) (string, func(), error) {
		started = true
		return natsserver.Start(cfg)
	}
	second, err := platform.Open(t.Context(), c, b, needs, "test", quiet)
	if err == nil {
		_ = second.Close()
		t.Fatal("a second platform opened the data dir in use")
	}
	if started {
		t.Errorf("the embedded NATS server started on the data dir in use before the refusal (%v)", err)
	}
	if !strings.Contains(err.Error(), "graph.db") {
		t.Errorf("error %q does not name the locked store", err)
	}
}
