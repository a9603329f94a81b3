package query

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strconv"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Names of the MCP tools the query service exposes.
const (
	MCPToolSearch  = "search"
	MCPToolExplore = "explore_entity_graph"
	MCPToolStats   = "get_corpus_stats"
)

// mcpServerName identifies the server to MCP clients.
const mcpServerName = "graphrag-query"

// MCPSearchInput is the input of the search tool.
type MCPSearchInput struct {
	Corpus string `json:"corpus" jsonschema:"name of the indexed corpus to search (e.g. demo)"`
	Query  string `json:"query" jsonschema:"the question in natural language"`
	Mode   string `json:"mode,omitempty" jsonschema:"auto (default) classifies the question; local answers from passages and the entities they mention; global answers from community reports (map-reduce), for questions about the corpus as a whole"`
	TopK   int    `json:"top_k,omitempty" jsonschema:"number of passages in the context (1..100; 0 or absent: the server default)"`
	Level  *int   `json:"level,omitempty" jsonschema:"community level for reports (0 is the finest); absent: chosen automatically"`
}

// MCPExploreInput is the input of the explore_entity_graph tool.
type MCPExploreInput struct {
	Corpus     string `json:"corpus" jsonschema:"name of the indexed corpus"`
	EntityName string `json:"entity_name" jsonschema:"name of the entity as written in the text; it is normalized (case, punctuation) before lookup"`
	Depth      int    `json:"depth,omitempty" jsonschema:"number of hops to walk from the entity (1..4, default 2)"`
}

// MCPStatsInput is the input of the get_corpus_stats tool.
type MCPStatsInput struct {
	Corpus string `json:"corpus" jsonschema:"name of the indexed corpus"`
}

// NewMCPServer returns an MCP server whose tools answer from e: search, explore_entity_graph
// and get_corpus_stats. Input and output JSON Schemas are derived from the Go types.
// Every failure of a call (bad arguments, unknown corpus or entity, a backend error) is a
// tool error result (IsError) with a message meant for the model, never a protocol error.
//
// It panics if a schema cannot be derived from the types, which is a programming error
// caught by the tests.
func NewMCPServer(e *Engine, version string) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: mcpServerName, Title: "GraphRAG query", Version: version}, &mcp.ServerOptions{
		Instructions: "Answers questions over document corpora indexed as a knowledge graph. " +
			"Call get_corpus_stats to check a corpus, search to ask a question (the answer cites passages as [n]), " +
			"and explore_entity_graph to see what an entity is connected to.",
		// Only the tools capability (inferred from AddTool); the server sends no log messages.
		Capabilities: &mcp.ServerCapabilities{},
	})
	readOnly := &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(false)}

	searchIn := mcpSchema[MCPSearchInput]()
	searchIn.Properties["query"].MinLength = new(1)
	searchIn.Properties["query"].MaxLength = new(MaxQueryBytes)
	searchIn.Properties["mode"].Enum = []any{ModeAuto, ModeLocal, ModeGlobal}
	searchIn.Properties["mode"].Default = json.RawMessage(strconv.Quote(ModeAuto))
	searchIn.Properties["top_k"].Minimum = new(0.0)
	searchIn.Properties["top_k"].Maximum = new(100.0)
	searchIn.Properties["level"].Minimum = new(0.0)
	searchIn.Properties["level"].Maximum = new(16.0)
	searchOut := mcpSchema[Response]()
	mcpDescribe(searchOut, map[string]string{
		"answer":          "the answer; [n] cites the n-th passage of context.chunks",
		"mode":            "the mode that answered: local or global",
		"citations":       "the sources cited in the answer",
		"context":         "what retrieval found: passages (chunks) ranked by fused score, entities, relationships, community reports",
		"partial_answers": "global mode: the per-community answers that were reduced into the answer",
		"timings_ms":      "duration of each phase in milliseconds",
	})
	mcp.AddTool(s, &mcp.Tool{
		Name:  MCPToolSearch,
		Title: "Search the knowledge graph",
		Description: "Answers a question from a corpus with cited passages. Retrieval fuses dense, lexical (BM25) and " +
			"knowledge-graph results; global mode summarizes across community reports.",
		Annotations:  readOnly,
		InputSchema:  searchIn,
		OutputSchema: searchOut,
	}, mcpSafe(e.log, MCPToolSearch, e.mcpSearch))

	exploreIn := mcpSchema[MCPExploreInput]()
	exploreIn.Properties["entity_name"].MinLength = new(1)
	exploreIn.Properties["depth"].Minimum = new(1.0)
	exploreIn.Properties["depth"].Maximum = new(4.0)
	exploreIn.Properties["depth"].Default = json.RawMessage("2")
	exploreOut := mcpSchema[Neighborhood]()
	mcpDescribe(exploreOut, map[string]string{
		"entity":        "the entity the name resolved to",
		"neighbors":     "entities within depth hops, with their distance",
		"relationships": "relationships among the entity and its neighbors, strongest first, with evidence chunk ids",
	})
	mcp.AddTool(s, &mcp.Tool{
		Name:         MCPToolExplore,
		Title:        "Explore an entity's neighbourhood",
		Description:  "Returns an entity of the knowledge graph with the entities and relationships around it.",
		Annotations:  readOnly,
		InputSchema:  exploreIn,
		OutputSchema: exploreOut,
	}, mcpSafe(e.log, MCPToolExplore, e.mcpExplore))

	statsOut := mcpSchema[Stats]()
	mcpDescribe(statsOut, map[string]string{
		"chunks":        "indexed passages",
		"entities":      "entities in the graph",
		"relationships": "relationships in the graph",
		"communities":   "detected communities, all levels",
		"levels":        "community levels",
		"reports":       "community reports indexed for search",
	})
	mcp.AddTool(s, &mcp.Tool{
		Name:         MCPToolStats,
		Title:        "Corpus statistics",
		Description:  "Counts what a corpus holds: passages, entities, relationships, communities and reports.",
		Annotations:  readOnly,
		InputSchema:  mcpSchema[MCPStatsInput](),
		OutputSchema: statsOut,
	}, mcpSafe(e.log, MCPToolStats, e.mcpStats))
	return s
}

// MCPHTTPHandler serves s over the streamable HTTP transport. It is stateless: each
// request is served on its own, so no session outlives its request and replicas behind a
// load balancer need no affinity (the tools never call back into the client).
func MCPHTTPHandler(s *mcp.Server) http.Handler {
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true})
}

// ServeMCPStdio serves s over stdin/stdout until the client disconnects or ctx ends;
// cancelling ctx is a normal shutdown and returns nil.
func ServeMCPStdio(ctx context.Context, s *mcp.Server) error {
	err := s.Run(ctx, &mcp.StdioTransport{})
	if err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("serving MCP over stdio: %w", err)
	}
	return nil
}

func (e *Engine) mcpSearch(ctx context.Context, req *mcp.CallToolRequest, in MCPSearchInput) (*mcp.CallToolResult, *Response, error) {
	var onDelta func(string) error
	if req != nil && req.Params != nil && req.Session != nil {
		if token := req.Params.GetProgressToken(); token != nil {
			onDelta = mcpProgress(ctx, req.Session, token)
		}
	}
	resp, err := e.Query(ctx, Request{Corpus: in.Corpus, Query: in.Query, Mode: in.Mode, TopK: in.TopK, Level: in.Level}, onDelta)
	if err != nil {
		return nil, nil, e.mcpError(MCPToolSearch, err)
	}
	if resp.Timings == nil {
		resp.Timings = map[string]float64{} // the schema allows an object, not null
	}
	return nil, resp, nil
}

// mcpProgress streams the answer as progress notifications when the client asked for
// them with a progress token. A failed notification stops the stream, not the answer:
// the final result still carries the whole answer.
func mcpProgress(ctx context.Context, ss *mcp.ServerSession, token any) func(string) error {
	sent, failed := 0, false
	return func(delta string) error {
		if failed || delta == "" {
			return nil
		}
		sent += len(delta)
		if err := ss.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Message: delta, Progress: float64(sent)}); err != nil {
			failed = true
		}
		return nil
	}
}

func (e *Engine) mcpExplore(ctx context.Context, _ *mcp.CallToolRequest, in MCPExploreInput) (*mcp.CallToolResult, Neighborhood, error) {
	depth := in.Depth
	if depth == 0 {
		depth = 2
	}
	nb, err := e.Explore(ctx, in.Corpus, in.EntityName, depth)
	if err != nil {
		return nil, Neighborhood{}, e.mcpError(MCPToolExplore, err)
	}
	return nil, nb, nil
}

func (e *Engine) mcpStats(ctx context.Context, _ *mcp.CallToolRequest, in MCPStatsInput) (*mcp.CallToolResult, Stats, error) {
	st, err := e.Stats(ctx, in.Corpus)
	if err != nil {
		return nil, Stats{}, e.mcpError(MCPToolStats, err)
	}
	return nil, st, nil
}

// mcpError turns an engine error into the text of a tool error: what the caller did wrong
// for its own mistakes, and a logged, generic failure otherwise.
func (e *Engine) mcpError(tool string, err error) error {
	switch {
	case errors.Is(err, ErrBadRequest):
		return fmt.Errorf("invalid arguments: %w", err)
	case errors.Is(err, ErrUnknownCorpus):
		return fmt.Errorf("%w (no indexed passages under this name; check the corpus name)", err)
	case errors.Is(err, ErrNotFound):
		return fmt.Errorf("%w; try the name as written in the documents, or search first", err)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%s was cancelled: %w", tool, err)
	}
	e.log.Warn("mcp tool failed", "tool", tool, "err", err)
	return fmt.Errorf("%s failed: %w", tool, err)
}

// mcpSafe turns a panic in a handler into a tool error, so one bad call cannot take down
// the session (stdio) or the process.
func mcpSafe[In, Out any](log *slog.Logger, tool string, h mcp.ToolHandlerFor[In, Out]) mcp.ToolHandlerFor[In, Out] {
	return func(ctx context.Context, req *mcp.CallToolRequest, in In) (res *mcp.CallToolResult, out Out, err error) {
		defer func() {
			if r := recover(); r != nil {
				log.Error("mcp tool panicked", "tool", tool, "panic", r, "stack", string(debug.Stack()))
				var zero Out
				res, out, err = nil, zero, fmt.Errorf("%s failed: internal error", tool)
			}
		}()
		return h(ctx, req, in)
	}
}

// mcpSchema derives the JSON Schema of T (descriptions from jsonschema struct tags).
func mcpSchema[T any]() *jsonschema.Schema {
	s, err := jsonschema.For[T](nil)
	if err != nil {
		panic(fmt.Sprintf("query: deriving the JSON schema of %T: %v", *new(T), err))
	}
	return s
}

// mcpDescribe documents top-level properties of a schema derived from a type we do not
// tag (the API types are shared with the HTTP API).
func mcpDescribe(s *jsonschema.Schema, desc map[string]string) {
	for name, d := range desc {
		if p, ok := s.Properties[name]; ok {
			p.Description = d
		}
	}
}
