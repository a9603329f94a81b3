package platform

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/graphstore"
	"github.com/graphrag/graphrag/pkg/hashembed"
	"github.com/graphrag/graphrag/pkg/llm"
	"github.com/graphrag/graphrag/pkg/pipeline"
	"github.com/graphrag/graphrag/pkg/schema"
	"github.com/graphrag/graphrag/pkg/service"
	"github.com/graphrag/graphrag/pkg/vectorstore"
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

// DefaultNATSPort is the client port of the embedded NATS server.
const DefaultNATSPort = 4222

// DefaultBackendFlags are the documented defaults of the backend flags, those their
// registration gives: the embedded stores, no model endpoint (the offline embedder at
// 384 dimensions), one stream replica.
func DefaultBackendFlags() BackendFlags {
	var b BackendFlags
	b.register(flag.NewFlagSet("defaults", flag.ContinueOnError), Needs{Bus: true, Model: true,
		Graph: []GraphDriver{{Name: Neo4j}}, Vectors: []VectorDriver{{Name: Milvus}}, NATSServer: noNATSServer})
	return b
}

func noNATSServer(NATSServerConfig) (string, func(), error) {
	return "", nil, errors.New("no NATS server")
}

// Register sets b to DefaultBackendFlags and adds to fs the flags of the backends needs
// uses, and only those: -graph-store with a graph driver, the -neo4j-* flags with the
// Neo4j driver, -vector-store with a vector driver, the -milvus-* flags with the Milvus
// driver, the -llm-* flags and -embed-dim with Model, -stream-replicas with the bus or
// a model (its response cache is a bucket), -nats-port and -nats-max-payload with an
// embedded NATS server. A binary then rejects a flag it would not read.
func (b *BackendFlags) Register(fs *flag.FlagSet, needs Needs) {
	*b = DefaultBackendFlags()
	b.register(fs, needs)
}

func (b *BackendFlags) register(fs *flag.FlagSet, needs Needs) {
	has := func(name string) bool {
		return slices.ContainsFunc(needs.Graph, func(d GraphDriver) bool { return d.Name == name }) ||
			slices.ContainsFunc(needs.Vectors, func(d VectorDriver) bool { return d.Name == name })
	}
	if len(needs.Graph) > 0 {
		fs.StringVar(&b.GraphStore, "graph-store", Embedded, "graph store: embedded (bbolt in the data dir) or neo4j")
	}
	if has(Neo4j) {
		b.registerNeo4j(fs)
	}
	if len(needs.Vectors) > 0 {
		fs.StringVar(&b.VectorStore, "vector-store", Embedded, "vector store: embedded (bbolt + HNSW + bleve in the data dir) or milvus")
	}
	if has(Milvus) {
		b.registerMilvus(fs)
	}
	if needs.Model {
		b.registerModel(fs)
	}
	if needs.NATSServer != nil {
		fs.IntVar(&b.NATSMaxPayload, "nats-max-payload", 8<<20, "max message size of the embedded NATS server (graphrag)")
		fs.IntVar(&b.NATSPort, "nats-port", DefaultNATSPort, "client port of the embedded NATS server on 127.0.0.1 (graphrag; -1 = random); unused with -nats-url")
	}
	if needs.Bus || needs.Model {
		fs.IntVar(&b.StreamReplicas, "stream-replicas", 1, "replicas of every stream and bucket the pipeline provisions (3 on a 3-node JetStream cluster)")
	}
}

func (b *BackendFlags) registerNeo4j(fs *flag.FlagSet) {
	fs.StringVar(&b.Neo4jURI, "neo4j-uri", "bolt://127.0.0.1:7687", "Neo4j Bolt URI (with -graph-store neo4j)")
	fs.StringVar(&b.Neo4jUser, "neo4j-user", "neo4j", "Neo4j user")
	fs.Var(&b.Neo4jPassword, "neo4j-password", "Neo4j password (empty = no authentication)")
	fs.StringVar(&b.Neo4jDatabase, "neo4j-database", "", "Neo4j database (empty = the server default)")
}

func (b *BackendFlags) registerMilvus(fs *flag.FlagSet) {
	fs.StringVar(&b.MilvusAddress, "milvus-address", "127.0.0.1:19530", "Milvus gRPC address (with -vector-store milvus)")
	fs.StringVar(&b.MilvusDB, "milvus-database", "", "Milvus database (empty = default)")
	fs.StringVar(&b.MilvusUser, "milvus-user", "", "Milvus user (empty = no authentication; with -milvus-password)")
	fs.Var(&b.MilvusPass, "milvus-password", "password of -milvus-user")
	fs.Var(&b.MilvusToken, "milvus-token", "Milvus API key or user:password token (instead of -milvus-user)")
}

func (b *BackendFlags) registerModel(fs *flag.FlagSet) {
	fs.StringVar(&b.EmbedBaseURL, "llm-embed-base-url", "", "separate OpenAI-compatible endpoint for embeddings (empty = -llm-base-url); without -llm-base-url, an embedding model with offline extraction, reports and answers")
	fs.StringVar(&b.LLMBaseURL, "llm-base-url", "", "OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1; empty = offline extraction, extractive reports and answers")
	fs.Var(&b.LLMAPIKey, "llm-api-key", "API key of the endpoint")
	fs.StringVar(&b.ChatModel, "llm-chat-model", "", "chat model name (required with -llm-base-url)")
	fs.StringVar(&b.EmbedModel, "llm-embed-model", "", "embedding model name (needs -llm-base-url or -llm-embed-base-url); empty = the offline embedder")
	fs.IntVar(&b.LLMConcurrency, "llm-concurrency", 8, "most concurrent calls to each endpoint (chat, embeddings) per process: the adaptive limit, cut on 429, 503 and timeouts, grows back up to it")
	fs.IntVar(&b.LLMRPM, "llm-rpm", 0, "requests per minute limit (0 = none)")
	fs.IntVar(&b.LLMTPM, "llm-tpm", 0, "tokens per minute limit (0 = none)")
	fs.DurationVar(&b.LLMTimeout, "llm-timeout", 120*time.Second, "timeout of one call")
	fs.IntVar(&b.EmbedDim, "embed-dim", 384, "dimension of the offline embedder")
}

// Validate reports every invalid value, named by its flag.
func (b *BackendFlags) Validate() error {
	var p service.Problems
	service.OneOf(&p, "-graph-store", b.GraphStore, Embedded, Neo4j)
	service.OneOf(&p, "-vector-store", b.VectorStore, Embedded, Milvus)
	if b.LLMBaseURL != "" && b.ChatModel == "" {
		p.Add("-llm-chat-model", "required with -llm-base-url")
	}
	if b.EmbedModel != "" && b.LLMBaseURL == "" && b.EmbedBaseURL == "" {
		p.Add("-llm-embed-model", "needs -llm-base-url or -llm-embed-base-url")
	}
	if b.EmbedBaseURL != "" && b.EmbedModel == "" {
		p.Add("-llm-embed-base-url", "needs -llm-embed-model")
	}
	if b.MilvusUser != "" && b.MilvusToken.Value() != "" {
		p.Add("-milvus-user", "and -milvus-token are exclusive")
	}
	service.AtLeast(&p, "-llm-concurrency", b.LLMConcurrency, 1)
	service.AtLeast(&p, "-llm-rpm", b.LLMRPM, 0)
	service.AtLeast(&p, "-llm-tpm", b.LLMTPM, 0)
	service.Positive(&p, "-llm-timeout", b.LLMTimeout)
	service.Within(&p, "-embed-dim", b.EmbedDim, 16, 4096)
	service.Within(&p, "-nats-max-payload", b.NATSMaxPayload, 1, math.MaxInt32)
	if b.NATSPort != -1 {
		service.Within(&p, "-nats-port", b.NATSPort, 1, 65535)
	}
	service.Within(&p, "-stream-replicas", b.StreamReplicas, 1, 5)
	return p.Err()
}

// Needs says which backends a process uses and which drivers its binary is built with.
// A main lists only the drivers its service uses, and pkg/platform imports none, so a
// binary links only the store clients it can open (docs/adr/0016-binaries-link-their-drivers.md).
type Needs struct {
	// Bus opens the NATS connection and provisions the pipeline's streams. It is also
	// opened, for the shared response cache, whenever an LLM endpoint is configured.
	Bus bool
	// Graph lists the graph store drivers -graph-store may name; none = no graph store.
	Graph []GraphDriver
	// Vectors lists the vector store drivers -vector-store may name; none = no vector store.
	Vectors []VectorDriver
	// NATSServer starts a NATS server in the process when -nats-url is empty; nil makes
	// -nats-url required. Only `graphrag up` (and the CLI commands like it) has one.
	NATSServer NATSServer
	// Model is true for a process that calls a model or embeds texts: it registers the
	// -llm-* flags and -embed-dim, and gets LLM and Embedder. Without it Embedder is the
	// offline embedder.
	Model bool
	// Existing is true for a process that reads the stores another one wrote (graphrag
	// export): the data dir must exist, and none is created for the embedded stores.
	Existing bool
}

// GraphDriver opens the graph store that a -graph-store value names.
type GraphDriver struct {
	Name string
	Open func(ctx context.Context, dataDir string, b BackendFlags) (Graph, error)
}

// Graph is an opened graph store.
type Graph struct {
	Store graphstore.Store
	// Algorithms runs Leiden and PageRank in the store (Neo4j GDS); nil when it cannot.
	Algorithms graphstore.Algorithms
	// Exclusive is true when the store is a file this process has locked.
	Exclusive bool
}

// VectorDriver opens the vector store that a -vector-store value names.
type VectorDriver struct {
	Name string
	Open func(ctx context.Context, dataDir string, b BackendFlags) (vectorstore.Store, error)
}

// NATSServer starts a NATS server inside the process and returns its client URL and a
// function that shuts it down.
type NATSServer func(c NATSServerConfig) (url string, shutdown func(), err error)

// NATSServerConfig configures a NATSServer from the flags.
type NATSServerConfig struct {
	DataDir    string // JetStream's file store
	Port       int    // client port on 127.0.0.1; -1 = random
	MaxPayload int32  // bytes
	Logger     *slog.Logger
}

// Platform holds the opened backends.
type Platform struct {
	Conn  *nats.Conn
	Bus   *bus.Bus
	Graph graphstore.Store
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
	if len(needs.Graph) > 0 || len(needs.Vectors) > 0 || (needs.Bus && common.NATSURL == "") {
		if err := dataDir(common.DataDir, needs.Existing && (b.GraphStore == Embedded || b.VectorStore == Embedded)); err != nil {
			return nil, err
		}
	}
	// The stores first: an embedded store locks its file, and a data dir another process
	// holds is refused before the embedded NATS server opens (and recovers) its store there.
	if len(needs.Graph) > 0 {
		if err := p.openGraph(ctx, common.DataDir, b, needs.Graph); err != nil {
			return nil, err
		}
	}
	if len(needs.Vectors) > 0 {
		if err := p.openVectors(ctx, common.DataDir, b, needs.Vectors); err != nil {
			return nil, err
		}
	}
	if needs.Bus || b.LLMBaseURL != "" || b.EmbedModel != "" {
		if err := p.openBus(ctx, common, b, needs.NATSServer, name, log); err != nil {
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
			RequestsPerMinute: b.LLMRPM, TokensPerMinute: b.LLMTPM}, llm.WithCache(llmCache(kv)), llm.WithLogger(log))
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
			llm.WithCache(llmCache(kv)), llm.WithLogger(log))
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

// llmCacheEntries bounds the in-process tier of the LLM cache: at 384 dimensions an
// embedding is 1.5 KiB, so a full tier of embeddings is about 6 MiB.
const llmCacheEntries = 4096

// llmCache is the LLM client's cache: an in-process LRU in front of the KV bucket the
// replicas share (docs/adr/0050-embed-each-text-once.md).
func llmCache(kv bus.KV) llm.Cache {
	return llm.NewTieredCache(llm.NewMemoryCache(llmCacheEntries), llm.NewKVCache(kv))
}

// dataDir creates the data dir, or, when it must exist already, checks that it does.
func dataDir(dir string, existing bool) error {
	if !existing {
		if err := os.MkdirAll(dir, 0o750); err != nil {
			return fmt.Errorf("creating data dir: %w", err)
		}
		return nil
	}
	es, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("data dir %s does not exist: -data-dir names the directory graphrag up keeps its stores in", dir)
	case err != nil:
		return fmt.Errorf("reading data dir: %w", err)
	case len(es) == 0:
		return fmt.Errorf("data dir %s holds no store: -data-dir names the directory graphrag up keeps its stores in", dir)
	}
	return nil
}

func (p *Platform) openGraph(ctx context.Context, dataDir string, b BackendFlags, drivers []GraphDriver) error {
	var names []string
	for _, d := range drivers {
		if d.Name != b.GraphStore {
			names = append(names, d.Name)
			continue
		}
		g, err := d.Open(ctx, dataDir, b)
		if err != nil {
			return err
		}
		p.Graph, p.Algorithms, p.ExclusiveGraph = g.Store, g.Algorithms, g.Exclusive
		p.closers = append(p.closers, g.Store.Close)
		p.Health.AddReadiness("graph store", g.Store.Ping)
		return nil
	}
	return fmt.Errorf("-graph-store %s: this binary has no such driver (it has %s)", b.GraphStore, strings.Join(names, ", "))
}

func (p *Platform) openVectors(ctx context.Context, dataDir string, b BackendFlags, drivers []VectorDriver) error {
	var names []string
	for _, d := range drivers {
		if d.Name != b.VectorStore {
			names = append(names, d.Name)
			continue
		}
		v, err := d.Open(ctx, dataDir, b)
		if err != nil {
			return err
		}
		p.Vectors = v
		p.closers = append(p.closers, v.Close)
		p.Health.AddReadiness("vector store", v.Ping)
		return nil
	}
	return fmt.Errorf("-vector-store %s: this binary has no such driver (it has %s)", b.VectorStore, strings.Join(names, ", "))
}

func (p *Platform) openBus(ctx context.Context, common service.CommonFlags, b BackendFlags, start NATSServer, name string, log *slog.Logger) error {
	url := common.NATSURL
	if url == "" {
		if start == nil {
			return errors.New("-nats-url is required: this binary has no embedded NATS server (graphrag up has one)")
		}
		u, shutdown, err := start(NATSServerConfig{DataDir: filepath.Join(common.DataDir, "nats"), Port: b.NATSPort,
			MaxPayload: int32(b.NATSMaxPayload), Logger: log.With("component", "nats-server")})
		if err != nil {
			return fmt.Errorf("starting the embedded NATS server: %w", err)
		}
		p.closers = append(p.closers, func() error { shutdown(); return nil })
		url = u
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
	for _, c := range slices.Backward(p.closers) {
		if err := c(); err != nil && !errors.Is(err, nats.ErrConnectionClosed) {
			errs = append(errs, err)
		}
	}
	p.closers = nil
	return errors.Join(errs...)
}
