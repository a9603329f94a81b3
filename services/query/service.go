package query

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/catalog"
	"github.com/graphrag/graphrag/pkg/costestimate"
	"github.com/graphrag/graphrag/pkg/curation"
	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/pkg/export"
	"github.com/graphrag/graphrag/pkg/extractsettings"
	"github.com/graphrag/graphrag/pkg/llm"
	"github.com/graphrag/graphrag/pkg/pipeline"
	"github.com/graphrag/graphrag/pkg/schema"
	"github.com/graphrag/graphrag/services/query/ask"
	"github.com/graphrag/graphrag/services/query/console"
	"github.com/graphrag/graphrag/services/query/engine"
	"github.com/graphrag/graphrag/services/query/explore"
	"github.com/graphrag/graphrag/services/query/httpapi"
	"github.com/graphrag/graphrag/services/query/mcpserver"
)

// Config is the query service's configuration: the engine's, the answerer's and the
// HTTP API's guard.
type Config struct {
	Engine engine.Config
	Ask    ask.Config
	API    httpapi.Flags
	// Indexing are the indexing settings the cost estimate of an upload
	// (?dry_run=true) assumes: the other services' defaults unless the caller that
	// runs them says otherwise (graphrag up passes its own). Chat and Embed are set
	// from Deps.
	Indexing costestimate.Options
}

// DefaultConfig is the engine's, the answerer's and the API's default configuration.
func DefaultConfig() Config {
	return Config{Engine: engine.DefaultConfig(), Ask: ask.DefaultConfig(), API: httpapi.DefaultFlags(),
		Indexing: costestimate.DefaultOptions()}
}

// Validate reports every invalid value of the engine, the answerer and the API, named
// by its flag.
func (c Config) Validate() error {
	return errors.Join(c.Engine.Validate(), c.Ask.Validate(), c.API.Validate())
}

// RegisterFlags adds the engine's, the answerer's and the API's flags.
func (c *Config) RegisterFlags(fs *flag.FlagSet) {
	c.RegisterEngineFlags(fs)
	c.API.RegisterFlags(fs)
}

// RegisterEngineFlags adds the engine's and the answerer's flags, without the API's:
// the settings file's query engine group, which a command that answers without serving
// the API (graphrag mcp, eval) registers alone.
func (c *Config) RegisterEngineFlags(fs *flag.FlagSet) {
	c.Engine.RegisterFlags(fs)
	c.Ask.RegisterFlags(fs)
}

// GraphReader is what the service reads from a graph store: what the engine reads, and
// what listings and exports read (a graphstore.Store has all of it).
type GraphReader interface {
	engine.GraphReader
	explore.GraphReader
	catalog.GraphReader
	export.GraphReader
}

// VectorReader is what the service reads from a vector store (a vectorstore.Store).
type VectorReader interface {
	engine.VectorReader
	catalog.VectorReader
	export.VectorReader
	extractsettings.ChunkLister
}

// Deps are the backends the service reads and what it reports about itself.
type Deps struct {
	Graph   GraphReader
	Vectors VectorReader
	// Embedder turns texts into vectors: the same embedder the pipeline indexed with.
	Embedder llm.Embedder
	// OfflineEmbedder says the embedder is the offline hashing embedder (see
	// engine.Deps).
	OfflineEmbedder bool
	LLM             *llm.Client // nil: extractive answers, heuristic classification
	Logger          *slog.Logger
	// Version is reported to MCP clients.
	Version string
	// Bus serves the corpus and document resources: listings and status (pkg/catalog),
	// uploads (pipeline.PublishDocument) and deletions (pipeline.PublishDeletion,
	// pipeline.DropCorpus), and the extraction settings (package extractsettings).
	// Nil: those routes answer 503.
	Bus *bus.Bus
}

// Service is the query service: the engine and the answerer (package ask) behind the
// HTTP API and the MCP tools. It has
// no work of its own between requests; its handlers run on the HTTP server the caller
// mounts them on (Mount), which drains the requests in flight on shutdown.
type Service struct {
	asker *ask.Asker
	api   *httpapi.API
	mcp   http.Handler
}

// New builds the engine and its answerer, the API (reading the API's token file) and the MCP tools.
func New(cfg Config, deps Deps) (*Service, error) {
	ed := engine.Deps{Graph: deps.Graph, Vectors: deps.Vectors, Embedder: deps.Embedder,
		OfflineEmbedder: deps.OfflineEmbedder, Logger: deps.Logger}
	if deps.Bus != nil {
		ed.Aliases = curator{deps.Bus, deps.Graph}.aliases
	}
	a, err := ask.New(cfg.Engine, cfg.Ask, ed, deps.LLM)
	if err != nil {
		return nil, err
	}
	// The entity reads resolve a name curation folded away as entity linking does.
	x := explore.New(deps.Graph, deps.Vectors, explore.WithDefaultNeighbors(a.Engine().Config().MaxNeighbors),
		explore.WithAliases(ed.Aliases))
	api, err := cfg.API.Load()
	if err != nil {
		return nil, fmt.Errorf("query: configuring the HTTP API: %w", err)
	}
	indexing := cfg.Indexing
	if indexing == (costestimate.Options{}) {
		indexing = costestimate.DefaultOptions()
	}
	indexing.Chat, indexing.Embed = deps.LLM != nil, !deps.OfflineEmbedder
	if err := indexing.Validate(); err != nil {
		return nil, fmt.Errorf("query: the indexing settings of the cost estimate: %w", err)
	}
	opts := []httpapi.Option{httpapi.WithExporter(exporter{deps.Graph, deps.Vectors}), httpapi.WithEstimate(indexing)}
	var mcpOpts []mcpserver.Option
	if deps.Bus != nil {
		cat := catalog.New(deps.Bus, deps.Graph, deps.Vectors)
		opts = append(opts, httpapi.WithCatalog(cat), httpapi.WithPublisher(publisher{deps.Bus}),
			httpapi.WithDeleter(deleter{deps.Bus, cat}), httpapi.WithCurator(curator{deps.Bus, deps.Graph}),
			httpapi.WithExtractionSettings(settings{deps.Bus, deps.Vectors, deps.LLM}))
		mcpOpts = append(mcpOpts, mcpserver.WithCatalog(cat))
	}
	h, err := httpapi.New(a, x, api, deps.Logger, opts...)
	if err != nil {
		return nil, fmt.Errorf("query: %w", err)
	}
	return &Service{
		asker: a,
		api:   h,
		mcp:   mcpserver.HTTPHandler(mcpserver.New(a, x, deps.Version, deps.Logger, mcpOpts...)),
	}, nil
}

// Asker returns the answerer and, through it, the engine, for callers in the same
// process (the CLI, eval).
func (s *Service) Asker() *ask.Asker { return s.asker }

// Mount adds the service's routes to mux: the HTTP API (/v1/..., the Ollama-compatible
// /api/..., /openapi.json) and the MCP tools over streamable HTTP (/mcp), behind the same authentication (with the
// token's scopes handed to the tools), rate limit and deadline (the transport's own
// plain-text errors answered in the API's JSON error shape), and the web console
// (/ui/), whose pages call the API with the same token.
func (s *Service) Mount(mux *http.ServeMux) {
	s.api.Mount(mux)
	mux.Handle("/mcp", s.api.Guard(httpapi.JSONErrors(mcpserver.GrantMiddleware(s.mcp))))
	console.Mount(mux)
}

// publisher publishes uploads as `graphrag publish` does.
type publisher struct{ b *bus.Bus }

func (p publisher) PublishDocument(ctx context.Context, d events.Document) error {
	_, err := pipeline.PublishDocument(ctx, p.b, d)
	return err
}

// deleter publishes deletion events as `graphrag delete` does, for documents and
// corpora the catalog knows (a deletion of nothing is a 404, not an accepted no-op).
// curator opens the state bucket for each operation (the bus keeps it open) and
// hands it to a curation.Curator.
type curator struct {
	b *bus.Bus
	g curation.EntityReader
}

func (c curator) open(ctx context.Context) (*curation.Curator, error) {
	kv, err := c.b.KV(ctx, schema.StateBucket)
	if err != nil {
		return nil, fmt.Errorf("opening the state bucket: %w", err)
	}
	return &curation.Curator{KV: kv, Bus: c.b, Graph: c.g}, nil
}

// aliases are the curated aliases of a corpus, for the engine's entity linking and the
// entity reads (explore.WithAliases).
func (c curator) aliases(ctx context.Context, corpus string) (map[string]string, error) {
	kv, err := c.b.KV(ctx, schema.StateBucket)
	if err != nil {
		return nil, fmt.Errorf("opening the state bucket: %w", err)
	}
	st, err := curation.AppliedState(ctx, kv, corpus)
	if err != nil {
		return nil, err
	}
	return st.Aliases(), nil
}

func (c curator) Apply(ctx context.Context, corpus string, op curation.Op) (curation.Entry, error) {
	cur, err := c.open(ctx)
	if err != nil {
		return curation.Entry{}, err
	}
	return cur.Apply(ctx, corpus, op)
}

func (c curator) Undo(ctx context.Context, corpus, id string) (curation.Entry, error) {
	cur, err := c.open(ctx)
	if err != nil {
		return curation.Entry{}, err
	}
	return cur.Undo(ctx, corpus, id)
}

func (c curator) Log(ctx context.Context, corpus string) ([]curation.Report, error) {
	cur, err := c.open(ctx)
	if err != nil {
		return nil, err
	}
	return cur.Log(ctx, corpus)
}

type deleter struct {
	b   *bus.Bus
	cat *catalog.Catalog
}

func (d deleter) DeleteDocument(ctx context.Context, corpus, id string) (string, error) {
	if _, err := d.cat.Document(ctx, corpus, id); err != nil {
		return "", err
	}
	del, err := pipeline.PublishDeletion(ctx, d.b, corpus, id, "deleted through the HTTP API")
	return del.EventID, err
}

func (d deleter) DropCorpus(ctx context.Context, corpus string) (string, error) {
	if _, err := d.cat.Corpus(ctx, corpus); err != nil {
		return "", err
	}
	drop, err := pipeline.DropCorpus(ctx, d.b, corpus, "dropped through the HTTP API")
	return drop.EventID, err
}

// exporter writes exports as zip archives.
type exporter struct {
	g export.GraphReader
	v export.VectorReader
}

func (x exporter) Export(ctx context.Context, corpus, format string, w io.Writer) error {
	f, err := export.ParseFormat(format)
	if err != nil {
		return err
	}
	z := export.Zip(w)
	if _, err := export.Write(ctx, x.g, x.v, corpus, f, z); err != nil {
		return err
	}
	return z.Close()
}
