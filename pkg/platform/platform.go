package platform

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/graphstore"
	"github.com/graphrag/graphrag/pkg/graphstore/boltgraph"
	"github.com/graphrag/graphrag/pkg/graphstore/neo4jgraph"
	"github.com/graphrag/graphrag/pkg/hashembed"
	"github.com/graphrag/graphrag/pkg/llm"
	"github.com/graphrag/graphrag/pkg/natsembed"
	"github.com/graphrag/graphrag/pkg/pipeline"
	"github.com/graphrag/graphrag/pkg/schema"
	"github.com/graphrag/graphrag/pkg/service"
	"github.com/graphrag/graphrag/pkg/vectorstore"
	"github.com/graphrag/graphrag/pkg/vectorstore/embedded"
	"github.com/graphrag/graphrag/pkg/vectorstore/milvusstore"
)

// Backend names.
const (
	Embedded = "embedded"
	Neo4j    = "neo4j"
	Milvus   = "milvus"
)

// Embedder turns texts into vectors.
type Embedder = llm.Embedder

// BackendFlags select and configure the stores and the model endpoint.
type BackendFlags struct {
	GraphStore    string         `config:"graph-store"`
	Neo4jURI      string         `config:"neo4j-uri"`
	Neo4jUser     string         `config:"neo4j-user"`
	Neo4jPassword service.Secret `config:"neo4j-password"`
	Neo4jDatabase string         `config:"neo4j-database"`
	VectorStore   string         `config:"vector-store"`
	MilvusAddress string         `config:"milvus-address"`
	MilvusDB      string         `config:"milvus-database"`
	MilvusUser    string         `config:"milvus-user"`
	MilvusPass    service.Secret `config:"milvus-password"`
	MilvusToken   service.Secret `config:"milvus-token"`
	EmbedBaseURL  string         `config:"llm-embed-base-url"`

	LLMBaseURL     string         `config:"llm-base-url"`
	LLMAPIKey      service.Secret `config:"llm-api-key"`
	ChatModel      string         `config:"llm-chat-model"`
	EmbedModel     string         `config:"llm-embed-model"`
	LLMConcurrency int            `config:"llm-concurrency"`
	LLMRPM         int            `config:"llm-rpm"`
	LLMTPM         int            `config:"llm-tpm"`
	LLMTimeout     time.Duration  `config:"llm-timeout"`
	EmbedDim       int            `config:"embed-dim"`
	NATSMaxPayload int            `config:"nats-max-payload"`
	NATSPort       int            `config:"nats-port"`
	StreamReplicas int            `config:"stream-replicas"`
}

// Register adds the backend flags to fs with their documented defaults.
func (b *BackendFlags) Register(fs *flag.FlagSet) {
	fs.StringVar(&b.GraphStore, "graph-store", Embedded, "graph store: embedded (bbolt in the data dir) or neo4j")
	fs.StringVar(&b.Neo4jURI, "neo4j-uri", "bolt://127.0.0.1:7687", "Neo4j Bolt URI (with -graph-store neo4j)")
	fs.StringVar(&b.Neo4jUser, "neo4j-user", "neo4j", "Neo4j user")
	fs.Var(&b.Neo4jPassword, "neo4j-password", "Neo4j password (empty = no authentication)")
	fs.StringVar(&b.Neo4jDatabase, "neo4j-database", "", "Neo4j database (empty = the server default)")
	fs.StringVar(&b.VectorStore, "vector-store", Embedded, "vector store: embedded (bbolt + HNSW + bleve in the data dir) or milvus")
	fs.StringVar(&b.MilvusAddress, "milvus-address", "127.0.0.1:19530", "Milvus gRPC address (with -vector-store milvus)")
	fs.StringVar(&b.MilvusDB, "milvus-database", "", "Milvus database (empty = default)")
	fs.StringVar(&b.MilvusUser, "milvus-user", "", "Milvus user (empty = no authentication; with -milvus-password)")
	fs.Var(&b.MilvusPass, "milvus-password", "password of -milvus-user")
	fs.Var(&b.MilvusToken, "milvus-token", "Milvus API key or user:password token (instead of -milvus-user)")
	fs.StringVar(&b.EmbedBaseURL, "llm-embed-base-url", "", "separate OpenAI-compatible endpoint for embeddings (empty = -llm-base-url); without -llm-base-url, an embedding model with offline extraction, reports and answers")
	fs.StringVar(&b.LLMBaseURL, "llm-base-url", "", "OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1; empty = offline extraction, extractive reports and answers")
	fs.Var(&b.LLMAPIKey, "llm-api-key", "API key of the endpoint")
	fs.StringVar(&b.ChatModel, "llm-chat-model", "", "chat model name (required with -llm-base-url)")
	fs.StringVar(&b.EmbedModel, "llm-embed-model", "", "embedding model name (needs -llm-base-url or -llm-embed-base-url); empty = the offline embedder")
	fs.IntVar(&b.LLMConcurrency, "llm-concurrency", 8, "concurrent calls to the endpoint per process")
	fs.IntVar(&b.LLMRPM, "llm-rpm", 0, "requests per minute limit (0 = none)")
	fs.IntVar(&b.LLMTPM, "llm-tpm", 0, "tokens per minute limit (0 = none)")
	fs.DurationVar(&b.LLMTimeout, "llm-timeout", 120*time.Second, "timeout of one call")
	fs.IntVar(&b.EmbedDim, "embed-dim", 384, "dimension of the offline embedder")
	fs.IntVar(&b.NATSMaxPayload, "nats-max-payload", 8<<20, "max message size of the embedded NATS server")
	fs.IntVar(&b.StreamReplicas, "stream-replicas", 1, "replicas of every stream and bucket the pipeline provisions (3 on a 3-node JetStream cluster)")
	fs.IntVar(&b.NATSPort, "nats-port", 4222, "client port of the embedded NATS server on 127.0.0.1 (-1 = random); unused with -nats-url")
}

// Validate checks the flags.
func (b *BackendFlags) Validate() error {
	var errs []error
	if b.GraphStore != Embedded && b.GraphStore != Neo4j {
		errs = append(errs, fmt.Errorf("-graph-store %q: want %q or %q", b.GraphStore, Embedded, Neo4j))
	}
	if b.VectorStore != Embedded && b.VectorStore != Milvus {
		errs = append(errs, fmt.Errorf("-vector-store %q: want %q or %q", b.VectorStore, Embedded, Milvus))
	}
	if b.LLMBaseURL != "" && b.ChatModel == "" {
		errs = append(errs, errors.New("-llm-chat-model is required with -llm-base-url"))
	}
	if b.EmbedModel != "" && b.LLMBaseURL == "" && b.EmbedBaseURL == "" {
		errs = append(errs, errors.New("-llm-embed-model needs -llm-base-url or -llm-embed-base-url"))
	}
	if b.EmbedBaseURL != "" && b.EmbedModel == "" {
		errs = append(errs, errors.New("-llm-embed-base-url needs -llm-embed-model"))
	}
	if b.MilvusUser != "" && b.MilvusToken.Value() != "" {
		errs = append(errs, errors.New("-milvus-user and -milvus-token are exclusive"))
	}
	if b.StreamReplicas < 1 || b.StreamReplicas > 5 {
		errs = append(errs, fmt.Errorf("-stream-replicas %d is outside 1..5", b.StreamReplicas))
	}
	if b.EmbedDim < 16 || b.EmbedDim > 4096 {
		errs = append(errs, fmt.Errorf("-embed-dim %d is outside 16..4096", b.EmbedDim))
	}
	return errors.Join(errs...)
}

// Needs says which backends a process uses.
type Needs struct {
	Bus, Graph, Vectors bool
}

// Platform holds the opened backends.
type Platform struct {
	Server *natsembed.Server // nil when connected to an external NATS
	Conn   *nats.Conn
	Bus    *bus.Bus
	Graph  graphstore.Store
	// Algorithms runs Leiden and PageRank in the graph store when it can (Neo4j GDS).
	Algorithms graphstore.Algorithms
	Vectors    vectorstore.Store
	LLM        *llm.Client // nil offline (and with an embedding model only)
	// Embeddings is the client behind Embedder when it is a model (nil with the offline
	// embedder); the same client as LLM when one endpoint serves both.
	Embeddings *llm.Client
	Embedder   Embedder
	// OfflineEmbedder is true when Embedder is the offline hashing embedder.
	OfflineEmbedder bool
	// ExclusiveGraph is true when the graph store is a file this process has locked
	// (the embedded store): no second grapher can write the same graph, so the
	// grapher needs no lease.
	ExclusiveGraph bool
	Health         *service.Health

	closers []func() error
}

// Open opens what needs asks for. On error, whatever was opened is closed.
func Open(ctx context.Context, common service.CommonFlags, b BackendFlags, needs Needs, name string, log *slog.Logger) (_ *Platform, err error) {
	if err := b.Validate(); err != nil {
		return nil, err
	}
	p := &Platform{Health: service.NewHealth()}
	defer func() {
		if err != nil {
			_ = p.Close()
		}
	}()
	if needs.Graph || needs.Vectors || (needs.Bus && common.NATSURL == "") {
		if err := os.MkdirAll(common.DataDir, 0o750); err != nil {
			return nil, fmt.Errorf("creating data dir: %w", err)
		}
	}
	if needs.Bus || b.LLMBaseURL != "" || b.EmbedModel != "" {
		if err := p.openBus(ctx, common, b, name, log); err != nil {
			return nil, err
		}
	}
	if needs.Graph {
		if err := p.openGraph(ctx, common, b); err != nil {
			return nil, err
		}
	}
	if needs.Vectors {
		if err := p.openVectors(ctx, common, b); err != nil {
			return nil, err
		}
	}
	if b.LLMBaseURL != "" {
		kv, err := p.Bus.KV(ctx, schema.LLMCacheBucket)
		if err != nil {
			return nil, fmt.Errorf("opening the LLM cache: %w", err)
		}
		c, err := llm.New(llm.Config{BaseURL: b.LLMBaseURL, EmbedBaseURL: b.EmbedBaseURL, APIKey: b.LLMAPIKey.Value(), ChatModel: b.ChatModel,
			EmbedModel: b.EmbedModel, Timeout: b.LLMTimeout, MaxConcurrency: b.LLMConcurrency,
			RequestsPerMinute: b.LLMRPM, TokensPerMinute: b.LLMTPM}, llm.WithCache(llm.NewKVCache(kv)), llm.WithLogger(log))
		if err != nil {
			return nil, fmt.Errorf("configuring the LLM client: %w", err)
		}
		p.LLM = c
		p.closers = append(p.closers, c.Close)
	}
	switch {
	case b.EmbedModel != "" && p.LLM != nil:
		p.Embeddings = p.LLM
		p.Embedder = p.LLM
	case b.EmbedModel != "":
		// An embedding model without a chat model: semantic dense retrieval and entity
		// linking, with offline extraction, reports and answers.
		kv, err := p.Bus.KV(ctx, schema.LLMCacheBucket)
		if err != nil {
			return nil, fmt.Errorf("opening the LLM cache: %w", err)
		}
		c, err := llm.New(llm.Config{BaseURL: b.EmbedBaseURL, APIKey: b.LLMAPIKey.Value(), EmbedModel: b.EmbedModel,
			Timeout: b.LLMTimeout, MaxConcurrency: b.LLMConcurrency, RequestsPerMinute: b.LLMRPM, TokensPerMinute: b.LLMTPM},
			llm.WithCache(llm.NewKVCache(kv)), llm.WithLogger(log))
		if err != nil {
			return nil, fmt.Errorf("configuring the embedding client: %w", err)
		}
		p.Embeddings = c
		p.Embedder = c
		p.closers = append(p.closers, c.Close)
	default:
		p.Embedder, p.OfflineEmbedder = hashembed.New(b.EmbedDim), true
	}
	return p, nil
}

func (p *Platform) openGraph(ctx context.Context, common service.CommonFlags, b BackendFlags) error {
	switch b.GraphStore {
	case Neo4j:
		var opts []neo4jgraph.Option
		if b.Neo4jPassword.Value() != "" {
			opts = append(opts, neo4jgraph.WithBasicAuth(b.Neo4jUser, b.Neo4jPassword.Value()))
		}
		if b.Neo4jDatabase != "" {
			opts = append(opts, neo4jgraph.WithDatabase(b.Neo4jDatabase))
		}
		g, err := neo4jgraph.Open(ctx, b.Neo4jURI, opts...)
		if err != nil {
			return fmt.Errorf("opening the Neo4j graph store: %w", err)
		}
		p.Graph, p.Algorithms = g, g.Algorithms()
		p.closers = append(p.closers, g.Close)
		p.Health.AddReadiness("graph store", g.Ping)
	default:
		g, err := boltgraph.Open(filepath.Join(common.DataDir, "graph.db"))
		if err != nil {
			return fmt.Errorf("opening the graph store: %w", err)
		}
		p.Graph, p.ExclusiveGraph = g, true
		p.closers = append(p.closers, g.Close)
		p.Health.AddReadiness("graph store", g.Ping)
	}
	return nil
}

func (p *Platform) openVectors(ctx context.Context, common service.CommonFlags, b BackendFlags) error {
	switch b.VectorStore {
	case Milvus:
		var opts []milvusstore.Option
		if b.MilvusDB != "" {
			opts = append(opts, milvusstore.WithDatabase(b.MilvusDB))
		}
		if b.MilvusUser != "" {
			opts = append(opts, milvusstore.WithCredentials(b.MilvusUser, b.MilvusPass.Value()))
		}
		if b.MilvusToken.Value() != "" {
			opts = append(opts, milvusstore.WithToken(b.MilvusToken.Value()))
		}
		v, err := milvusstore.Open(ctx, b.MilvusAddress, opts...)
		if err != nil {
			return fmt.Errorf("opening the Milvus vector store: %w", err)
		}
		p.Vectors = v
		p.closers = append(p.closers, v.Close)
		p.Health.AddReadiness("vector store", v.Ping)
	default:
		v, err := embedded.Open(filepath.Join(common.DataDir, "vectors"))
		if err != nil {
			return fmt.Errorf("opening the vector store: %w", err)
		}
		p.Vectors = v
		p.closers = append(p.closers, v.Close)
		p.Health.AddReadiness("vector store", v.Ping)
	}
	return nil
}

func (p *Platform) openBus(ctx context.Context, common service.CommonFlags, b BackendFlags, name string, log *slog.Logger) error {
	url := common.NATSURL
	if url == "" {
		srv, err := natsembed.Start(natsembed.Config{DataDir: filepath.Join(common.DataDir, "nats"), Port: b.NATSPort,
			MaxPayload: int32(b.NATSMaxPayload), Logger: log.With("component", "nats-server")})
		if err != nil {
			return fmt.Errorf("starting the embedded NATS server: %w", err)
		}
		p.Server = srv
		p.closers = append(p.closers, func() error { srv.Shutdown(); return nil })
		url = srv.ClientURL()
	}
	nc, err := bus.Connect(ctx, bus.ConnConfig{URL: url, Name: name, CredsFile: common.NATSCreds, NKeySeedFile: common.NATSNKey,
		TLS: bus.TLSFiles{CAFile: common.NATSTLSCA, CertFile: common.NATSTLSCert, KeyFile: common.NATSTLSKey}, Logger: log})
	if err != nil {
		return fmt.Errorf("connecting to NATS: %w", err)
	}
	p.Conn = nc
	p.closers = append(p.closers, func() error { nc.Close(); return nil }) // publishes are acknowledged: nothing is buffered
	bb, err := bus.New(nc, bus.WithLogger(log))
	if err != nil {
		return err
	}
	p.Bus = bb
	topo := pipeline.DefaultTopology()
	topo.Replicas = b.StreamReplicas
	if err := pipeline.Provision(ctx, bb, topo); err != nil {
		return err
	}
	p.Health.AddReadiness("nats", func(context.Context) error {
		if !nc.IsConnected() {
			return fmt.Errorf("nats: %s", nc.Status())
		}
		return nil
	})
	return nil
}

// Close closes the backends in reverse order of opening; safe twice.
func (p *Platform) Close() error {
	var errs []error
	for i := len(p.closers) - 1; i >= 0; i-- {
		if err := p.closers[i](); err != nil && !errors.Is(err, nats.ErrConnectionClosed) {
			errs = append(errs, err)
		}
	}
	p.closers = nil
	return errors.Join(errs...)
}
