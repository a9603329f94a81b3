package stack

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/graphrag/graphrag/pkg/llm"
	"github.com/graphrag/graphrag/pkg/pipeline"
	"github.com/graphrag/graphrag/pkg/platform"
	"github.com/graphrag/graphrag/pkg/service"
)

// TestConfigValidate: every component's default configuration is valid, and a bad
// value in any of them is an error that names the flag setting it (a field without a
// flag by its Go name), rather than a value quietly replaced.
func TestConfigValidate(t *testing.T) {
	type check struct {
		name     string
		validate func() error
	}
	// DefaultConfig is each service's DefaultConfig.
	def := DefaultConfig()
	defaults := []check{
		{"extractor", def.Extractor.Validate},
		{"grapher", def.Grapher.Validate},
		{"summarizer", def.Summarizer.Validate},
		{"engine", def.Query.Engine.Validate},
		{"ask", def.Query.Ask.Validate},
		{"httpapi", def.Query.API.Validate},
		{"query", def.Query.Validate},
		{"stack", DefaultConfig().Validate},
		{"stage", func() error { return pipeline.DefaultStageConfig().Validate("x") }},
		{"backend", func() error { b := platform.DefaultBackendFlags(); return b.Validate() }},
		{"llm", llm.Config{BaseURL: "http://127.0.0.1:1/v1", ChatModel: "m"}.Validate},
	}
	for _, c := range defaults {
		if err := c.validate(); err != nil {
			t.Errorf("default %s configuration: %v", c.name, err)
		}
	}

	bad := []struct {
		config string
		want   string // in the error
		set    func(*Config, *platform.BackendFlags, *llm.Config)
	}{
		{"extractor", "-chunk-tokens: must be at least 1, got -600", func(c *Config, _ *platform.BackendFlags, _ *llm.Config) { c.Extractor.ChunkTokens = -600 }},
		{"extractor", "-chunk-overlap", func(c *Config, _ *platform.BackendFlags, _ *llm.Config) { c.Extractor.ChunkOverlap = 600 }},
		{"extractor", "-min-information: must be in [0, 1], got 1.5", func(c *Config, _ *platform.BackendFlags, _ *llm.Config) { c.Extractor.MinInformation = 1.5 }},
		{"extractor", "-gleanings", func(c *Config, _ *platform.BackendFlags, _ *llm.Config) { c.Extractor.Gleanings = -1 }},
		{"extractor", "-extract-workers: must be at least 1, got -2", func(c *Config, _ *platform.BackendFlags, _ *llm.Config) { c.Extractor.Extract.Workers = -2 }},
		{"grapher", "-pagerank-damping: must be in (0, 1), got 1", func(c *Config, _ *platform.BackendFlags, _ *llm.Config) { c.Grapher.Damping = 1 }},
		{"grapher", "-detect-debounce", func(c *Config, _ *platform.BackendFlags, _ *llm.Config) { c.Grapher.Debounce = -time.Second }},
		{"grapher", "-community-max-change", func(c *Config, _ *platform.BackendFlags, _ *llm.Config) { c.Grapher.MaxCommunityChange = 2 }},
		{"grapher", `-entity-embed: must be description or name, got "names"`, func(c *Config, _ *platform.BackendFlags, _ *llm.Config) { c.Grapher.EntityEmbed = "names" }},
		{"grapher", "-taxonomy-strategy", func(c *Config, _ *platform.BackendFlags, _ *llm.Config) { c.Grapher.Taxonomy.Strategy = "flat" }},
		{"grapher", "-grapher-ack-wait", func(c *Config, _ *platform.BackendFlags, _ *llm.Config) { c.Grapher.Stage.AckWait = 0 }},
		{"summarizer", "-report-context-tokens", func(c *Config, _ *platform.BackendFlags, _ *llm.Config) { c.Summarizer.ContextTokens = -1 }},
		{"summarizer", "-report-embed", func(c *Config, _ *platform.BackendFlags, _ *llm.Config) { c.Summarizer.ReportEmbed = "all" }},
		{"summarizer", "-summarizer-max-deliver", func(c *Config, _ *platform.BackendFlags, _ *llm.Config) { c.Summarizer.Stage.MaxDeliver = 0 }},
		{"engine", "-entity-min-similarity: must be -1 (automatic) or in (0, 1], got 1.5", func(c *Config, _ *platform.BackendFlags, _ *llm.Config) { c.Query.Engine.EntityMinSim = 1.5 }},
		{"engine", "-top-k: must be at least 1, got 0", func(c *Config, _ *platform.BackendFlags, _ *llm.Config) { c.Query.Engine.TopK = 0 }},
		{"engine", "-map-top-k", func(c *Config, _ *platform.BackendFlags, _ *llm.Config) { c.Query.Engine.MapTopK = -1 }},
		{"engine", "-passage-seeds", func(c *Config, _ *platform.BackendFlags, _ *llm.Config) { c.Query.Engine.PassageSeeds = -1 }},
		{"engine", "-ppr-damping", func(c *Config, _ *platform.BackendFlags, _ *llm.Config) { c.Query.Engine.Damping = 1.2 }},
		{"engine", "-weight-graph", func(c *Config, _ *platform.BackendFlags, _ *llm.Config) { c.Query.Engine.Weights.Graph = -1 }},
		{"engine", "-graph-ranking", func(c *Config, _ *platform.BackendFlags, _ *llm.Config) { c.Query.Engine.GraphRanking = "bfs" }},
		{"ask", "-global-token-budget: must be positive or -1 (no bound), got -5", func(c *Config, _ *platform.BackendFlags, _ *llm.Config) { c.Query.Ask.GlobalTokenBudget = -5 }},
		{"ask", "-map-concurrency: must be at least 1, got 0", func(c *Config, _ *platform.BackendFlags, _ *llm.Config) { c.Query.Ask.MapConcurrency = 0 }},
		{"ask", "MapMaxTokens", func(c *Config, _ *platform.BackendFlags, _ *llm.Config) { c.Query.Ask.MapMaxTokens = -300 }},
		{"ask", "AnswerTokens", func(c *Config, _ *platform.BackendFlags, _ *llm.Config) { c.Query.Ask.AnswerTokens = 0 }},
		{"httpapi", "-api-timeout", func(c *Config, _ *platform.BackendFlags, _ *llm.Config) { c.Query.API.Timeout = -time.Second }},
		{"httpapi", "-api-burst", func(c *Config, _ *platform.BackendFlags, _ *llm.Config) { c.Query.API.Burst = 0 }},
		{"httpapi", "-api-rate", func(c *Config, _ *platform.BackendFlags, _ *llm.Config) { c.Query.API.RatePerSecond = -1 }},
		{"backend", `-graph-store: must be embedded or neo4j, got "memgraph"`, func(_ *Config, b *platform.BackendFlags, _ *llm.Config) { b.GraphStore = "memgraph" }},
		{"backend", "-llm-concurrency", func(_ *Config, b *platform.BackendFlags, _ *llm.Config) { b.LLMConcurrency = 0 }},
		{"backend", "-llm-timeout", func(_ *Config, b *platform.BackendFlags, _ *llm.Config) { b.LLMTimeout = -time.Second }},
		{"backend", "-nats-port", func(_ *Config, b *platform.BackendFlags, _ *llm.Config) { b.NATSPort = 70000 }},
		{"backend", "-stream-replicas", func(_ *Config, b *platform.BackendFlags, _ *llm.Config) { b.StreamReplicas = 0 }},
		{"llm", "Timeout must not be negative", func(_ *Config, _ *platform.BackendFlags, l *llm.Config) { l.Timeout = -time.Second }},
		{"llm", "MaxConcurrency", func(_ *Config, _ *platform.BackendFlags, l *llm.Config) { l.MaxConcurrency = -1 }},
	}
	for _, tc := range bad {
		t.Run(tc.config+" "+strings.Fields(tc.want)[0], func(t *testing.T) {
			cfg, b, l := DefaultConfig(), platform.DefaultBackendFlags(), llm.Config{BaseURL: "http://127.0.0.1:1/v1", ChatModel: "m"}
			tc.set(&cfg, &b, &l)
			var errs []error
			switch tc.config {
			case "extractor":
				errs = []error{cfg.Extractor.Validate(), cfg.Validate()}
			case "grapher":
				errs = []error{cfg.Grapher.Validate(), cfg.Validate()}
			case "summarizer":
				errs = []error{cfg.Summarizer.Validate(), cfg.Validate()}
			case "engine":
				errs = []error{cfg.Query.Engine.Validate(), cfg.Query.Validate(), cfg.Validate()}
			case "ask":
				errs = []error{cfg.Query.Ask.Validate(), cfg.Query.Validate(), cfg.Validate()}
			case "httpapi":
				errs = []error{cfg.Query.API.Validate(), cfg.Query.Validate(), cfg.Validate()}
			case "backend":
				errs = []error{b.Validate()}
			case "llm":
				errs = []error{l.Validate()}
			}
			for i, err := range errs {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("Validate %d: %v, want an error containing %q", i, err, tc.want)
				}
			}
			want := service.ErrInvalidFlags
			if tc.config == "llm" {
				want = llm.ErrInvalidConfig
			}
			if !errors.Is(errs[0], want) {
				t.Errorf("%v does not match %v", errs[0], want)
			}
		})
	}
}
