package mcpserver

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/graphrag/graphrag/services/query/ask"
	"github.com/graphrag/graphrag/services/query/clienterror"
	"github.com/graphrag/graphrag/services/query/engine"
	"github.com/graphrag/graphrag/services/query/explore"
)

// Explorer serves the explore tool: an *explore.Reader.
type Explorer interface {
	Neighborhood(ctx context.Context, corpus, name string, depth, limit int) (explore.Neighborhood, error)
}

var _ Explorer = (*explore.Reader)(nil)

// Names of the MCP tools the query service exposes.
const (
	ToolSearch  = "search"
	ToolExplore = "explore_entity_graph"
	ToolStats   = "get_corpus_stats"
)

// serverName identifies the server to MCP clients.
const serverName = "graphrag-query"

// SearchInput is the input of the search tool.
type SearchInput struct {
	Corpus string `json:"corpus" jsonschema:"name of the indexed corpus to search (e.g. demo)"`
	Query  string `json:"query" jsonschema:"the question in natural language"`
	Mode   string `json:"mode,omitempty" jsonschema:"auto (default) classifies the question as local or global; naive answers from the dense and BM25 passages alone; local from passages, the entities they mention and their relationships; global from community reports (map-reduce), for questions about the corpus as a whole; hybrid is local plus the reports that rank first for the question; mix is hybrid with the naive passages fused in; drift derives follow-up questions from the top reports and searches each locally"`
	TopK   int    `json:"top_k,omitempty" jsonschema:"number of passages in the context (1..100; 0 or absent: the server default)"`
	Level  *int   `json:"level,omitempty" jsonschema:"community level for reports (0 is the coarsest, the root); absent: chosen automatically"`
	Detail string `json:"detail,omitempty" jsonschema:"concise (default): the answer and each passage's id, title, opening text and why it was retrieved; full: also the whole retrieval context (entities, relationships, reports, full passages) and the partial answers of global mode"`
	// ResponseType, UserPrompt and OnlyContext are the query API's options of the same
	// names.
	ResponseType string `json:"response_type,omitempty" jsonschema:"the answer's form, e.g. Multiple Paragraphs, Single Paragraph, Bullet Points"`
	UserPrompt   string `json:"user_prompt,omitempty" jsonschema:"instructions added to the answer prompt after the question"`
	OnlyContext  bool   `json:"only_context,omitempty" jsonschema:"return the passages and reports the mode assembled, without writing an answer"`
}

// ExploreInput is the input of the explore_entity_graph tool.
type ExploreInput struct {
	Corpus     string `json:"corpus" jsonschema:"name of the indexed corpus"`
	EntityName string `json:"entity_name" jsonschema:"name of the entity as written in the text; it is normalized (case, punctuation) before lookup, and a name a curation merged or renamed finds the entity it is now"`
	Depth      int    `json:"depth,omitempty" jsonschema:"number of hops to walk from the entity (1..4, default 2)"`
	Limit      int    `json:"limit,omitempty" jsonschema:"most neighbours to return, nearest first and then by PageRank (1..500, default 20)"`
	// RelationshipLimit bounds the relationships, which grow faster than the
	// neighbours (70 neighbours had 985 among them on the sample corpus).
	RelationshipLimit int `json:"relationship_limit,omitempty" jsonschema:"most relationships to return: the entity's own first, then the strongest (1..1000, default 40)"`
}

// Defaults and bounds of explore_entity_graph: unbounded, the default depth on the
// 14-document sample corpus answered 144 entities and 205 KB of text.
const (
	DefaultExploreLimit             = 20
	MaxExploreLimit                 = 500
	DefaultExploreRelationshipLimit = 40
	MaxExploreRelationshipLimit     = 1000
)

// ExploreResult is the output of explore_entity_graph: a neighbourhood cut to the
// limits, saying whether it was cut and how to get more.
type ExploreResult struct {
	Entity engine.Entity `json:"entity"`
	// ResolvedFrom is the name asked for when a curation merged or renamed it into
	// Entity; empty when it is the entity's own.
	ResolvedFrom  string                `json:"resolved_from,omitempty"`
	Neighbors     []engine.Entity       `json:"neighbors"`
	Relationships []engine.Relationship `json:"relationships"`
	// Truncated reports that more neighbours or relationships exist than returned.
	Truncated bool `json:"truncated"`
	// More says what was left out and which argument returns it; empty when nothing was.
	More string `json:"more,omitempty"`
}

// StatsInput is the input of the get_corpus_stats tool.
type StatsInput struct {
	Corpus string `json:"corpus" jsonschema:"name of the indexed corpus"`
}

// New returns an MCP server whose tools answer from e and x: search, explore_entity_graph and
// get_corpus_stats, and list_corpora and list_documents with WithCatalog; version is
// reported to clients. Every tool refuses a corpus the client's token may not read
// (served over HTTP behind the guard and GrantMiddleware). Input and output JSON Schemas are
// derived from the Go types. Every failure of a call (bad arguments, unknown corpus or
// entity, a backend error) is a tool error result (IsError) with a message meant for the
// model, never a protocol error. log (nil: slog.Default) records failed and panicking
// calls.
//
// It panics if a schema cannot be derived from the types, which is a programming error
// caught by the tests.
func New(e *ask.Asker, x Explorer, version string, log *slog.Logger, opts ...Option) *mcp.Server {
	if log == nil {
		log = slog.Default()
	}
	s := mcp.NewServer(&mcp.Implementation{Name: serverName, Title: "GraphRAG query", Version: version}, &mcp.ServerOptions{
		Instructions: "Answers questions over document corpora indexed as a knowledge graph. " +
			"Call get_corpus_stats to check a corpus, search to ask a question (the answer cites passages as [n]; detail \"full\" adds the whole retrieval context), " +
			"and explore_entity_graph to see what an entity is connected to.",
		// Only the tools capability (inferred from AddTool); the server sends no log messages.
		Capabilities: &mcp.ServerCapabilities{},
	})
	t := &tools{e: e, x: x, log: log}
	for _, o := range opts {
		o.apply(t)
	}
	t.addSearch(s)
	t.addExplore(s)
	t.addStats(s)
	if t.catalog != nil {
		t.addListCorpora(s)
		t.addListDocuments(s)
	}
	return s
}

// tools are the tool handlers, on the engine's public API and the explorer's.
type tools struct {
	e       *ask.Asker
	x       Explorer
	log     *slog.Logger
	catalog Catalog // nil: no listing tools
}

// readOnly annotates every tool: none changes anything, outside the corpus or in it.
var readOnly = &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(false)}

func (t *tools) addSearch(s *mcp.Server) {
	in := schemaOf[SearchInput]()
	in.Properties["query"].MinLength = new(1)
	in.Properties["query"].MaxLength = new(engine.MaxQueryBytes)
	in.Properties["mode"].Enum = make([]any, len(ask.Modes))
	for i, m := range ask.Modes {
		in.Properties["mode"].Enum[i] = m
	}
	in.Properties["mode"].Default = json.RawMessage(strconv.Quote(ask.ModeAuto))
	in.Properties["top_k"].Minimum = new(0.0)
	in.Properties["top_k"].Maximum = new(100.0)
	in.Properties["level"].Minimum = new(0.0)
	in.Properties["level"].Maximum = new(16.0)
	in.Properties["response_type"].MaxLength = new(ask.MaxResponseTypeBytes)
	in.Properties["user_prompt"].MaxLength = new(ask.MaxUserPromptBytes)
	in.Properties["detail"].Enum = []any{DetailConcise, DetailFull}
	in.Properties["detail"].Default = json.RawMessage(strconv.Quote(DetailConcise))
	out := schemaOf[SearchResult]()
	describe(out, map[string]string{
		"answer":          "the answer; [n] cites the passage (or, in global mode, the theme) whose marker is n; empty with only_context",
		"mode":            "the mode that answered: auto resolves to local or global",
		"passages":        "the retrieved passages, best first: id, document, title, opening text, marker when cited, and why it was retrieved (list and rank; the entity path of the graph list)",
		"themes":          "global, hybrid, mix and drift modes: the community reports the answer was drawn from",
		"follow_ups":      "drift mode: the follow-up questions searched after the question",
		"context":         "detail full: what retrieval found: passages ranked by fused score, entities, relationships, community reports",
		"partial_answers": "detail full, global mode: the per-community answers that were reduced into the answer",
	})
	mcp.AddTool(s, &mcp.Tool{
		Name:  ToolSearch,
		Title: "Search the knowledge graph",
		Description: "Answers a question from a corpus with cited passages. Retrieval fuses dense, lexical (BM25) and " +
			"knowledge-graph results; global mode summarizes across community reports.",
		Annotations:  readOnly,
		InputSchema:  in,
		OutputSchema: out,
	}, safe(t.log, ToolSearch, t.search))
}

func (t *tools) addExplore(s *mcp.Server) {
	in := schemaOf[ExploreInput]()
	in.Properties["entity_name"].MinLength = new(1)
	in.Properties["depth"].Minimum = new(1.0)
	in.Properties["depth"].Maximum = new(4.0)
	in.Properties["depth"].Default = json.RawMessage("2")
	in.Properties["limit"].Minimum = new(1.0)
	in.Properties["limit"].Maximum = new(float64(MaxExploreLimit))
	in.Properties["limit"].Default = json.RawMessage(strconv.Itoa(DefaultExploreLimit))
	in.Properties["relationship_limit"].Minimum = new(1.0)
	in.Properties["relationship_limit"].Maximum = new(float64(MaxExploreRelationshipLimit))
	in.Properties["relationship_limit"].Default = json.RawMessage(strconv.Itoa(DefaultExploreRelationshipLimit))
	out := schemaOf[ExploreResult]()
	describe(out, map[string]string{
		"entity":        "the entity the name resolved to",
		"resolved_from": "the name asked for, when it is not the entity's own but one a curation merged into it or renamed (absent otherwise)",
		"neighbors":     "entities within depth hops, nearest first, then by PageRank, with their distance",
		"relationships": "relationships among the entity and the neighbours returned: the entity's own first, then the strongest, with evidence chunk ids",
		"truncated":     "true when more neighbours or relationships exist than were returned",
		"more":          "when truncated: what was left out and which argument (limit, relationship_limit, depth) returns it",
	})
	mcp.AddTool(s, &mcp.Tool{
		Name:  ToolExplore,
		Title: "Explore an entity's neighbourhood",
		Description: "Returns an entity of the knowledge graph with the entities and relationships around it, " +
			"at most limit neighbours and relationship_limit relationships; truncated says when there are more.",
		Annotations:  readOnly,
		InputSchema:  in,
		OutputSchema: out,
	}, safe(t.log, ToolExplore, t.explore))
}

func (t *tools) addStats(s *mcp.Server) {
	out := schemaOf[engine.Stats]()
	describe(out, map[string]string{
		"chunks":        "indexed passages",
		"entities":      "entities in the graph",
		"relationships": "relationships in the graph",
		"communities":   "detected communities, all levels",
		"levels":        "community levels",
		"reports":       "community reports indexed for search",
	})
	mcp.AddTool(s, &mcp.Tool{
		Name:         ToolStats,
		Title:        "Corpus statistics",
		Description:  "Counts what a corpus holds: passages, entities, relationships, communities and reports.",
		Annotations:  readOnly,
		InputSchema:  schemaOf[StatsInput](),
		OutputSchema: out,
	}, safe(t.log, ToolStats, t.stats))
}

// HTTPHandler serves s over the streamable HTTP transport. It is stateless: each
// request is served on its own, so no session outlives its request and replicas behind a
// load balancer need no affinity (the tools never call back into the client).
func HTTPHandler(s *mcp.Server) http.Handler {
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true})
}

func (t *tools) search(ctx context.Context, req *mcp.CallToolRequest, in SearchInput) (*mcp.CallToolResult, SearchResult, error) {
	if err := t.check(ctx, req, in.Corpus); err != nil {
		return nil, SearchResult{}, err
	}
	switch in.Detail {
	case "", DetailConcise, DetailFull:
	default:
		return nil, SearchResult{}, t.toolError(ctx, ToolSearch, engine.BadRequestf("detail: %q is not %s or %s", in.Detail, DetailConcise, DetailFull))
	}
	var onDelta func(string) error
	if req != nil && req.Params != nil && req.Session != nil {
		if token := req.Params.GetProgressToken(); token != nil {
			onDelta = progress(ctx, req.Session, token)
		}
	}
	resp, err := t.e.Query(ctx, ask.Request{Corpus: in.Corpus, Query: in.Query, Mode: in.Mode, TopK: in.TopK, Level: in.Level,
		ResponseType: in.ResponseType, UserPrompt: in.UserPrompt, OnlyContext: in.OnlyContext}, onDelta)
	if err != nil {
		return nil, SearchResult{}, t.toolError(ctx, ToolSearch, err)
	}
	return nil, searchResult(resp, in.Detail), nil
}

// progress streams the answer as progress notifications when the client asked for
// them with a progress token. A failed notification stops the stream, not the answer:
// the final result still carries the whole answer.
func progress(ctx context.Context, ss *mcp.ServerSession, token any) func(string) error {
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

func (t *tools) explore(ctx context.Context, req *mcp.CallToolRequest, in ExploreInput) (*mcp.CallToolResult, ExploreResult, error) {
	if err := t.check(ctx, req, in.Corpus); err != nil {
		return nil, ExploreResult{}, err
	}
	depth := cmp.Or(in.Depth, 2)
	limit := cmp.Or(in.Limit, DefaultExploreLimit)
	relLimit := cmp.Or(in.RelationshipLimit, DefaultExploreRelationshipLimit)
	switch {
	case limit < 1 || limit > MaxExploreLimit:
		return nil, ExploreResult{}, t.toolError(ctx, ToolExplore, engine.BadRequestf("limit: %d is outside 1..%d", limit, MaxExploreLimit))
	case relLimit < 1 || relLimit > MaxExploreRelationshipLimit:
		return nil, ExploreResult{}, t.toolError(ctx, ToolExplore, engine.BadRequestf("relationship_limit: %d is outside 1..%d", relLimit, MaxExploreRelationshipLimit))
	}
	// One neighbour more than asked tells whether there are more.
	nb, err := t.x.Neighborhood(ctx, in.Corpus, in.EntityName, depth, limit+1)
	if err != nil {
		return nil, ExploreResult{}, t.toolError(ctx, ToolExplore, err)
	}
	return nil, cutNeighborhood(nb, depth, limit, relLimit), nil
}

// cutNeighborhood keeps the first limit neighbours (nb holds at most one more), the
// relationships among what is kept, the entity's own first, and at most relLimit of
// them, saying what it left out.
func cutNeighborhood(nb explore.Neighborhood, depth, limit, relLimit int) ExploreResult {
	out := ExploreResult{Entity: nb.Entity, ResolvedFrom: nb.ResolvedFrom, Neighbors: nb.Neighbors, Relationships: []engine.Relationship{}}
	var more []string
	if len(out.Neighbors) > limit {
		out.Neighbors = out.Neighbors[:limit]
		more = append(more, fmt.Sprintf("more than %d neighbours within depth %d: raise limit (at most %d) or lower depth", limit, depth, MaxExploreLimit))
	}
	kept := map[string]bool{nb.Entity.Key: true}
	for _, n := range out.Neighbors {
		kept[n.Key] = true
	}
	var own, others []engine.Relationship
	for _, r := range nb.Relationships {
		switch {
		case !kept[r.Source] || !kept[r.Target]:
		case r.Source == nb.Entity.Key || r.Target == nb.Entity.Key:
			own = append(own, r)
		default:
			others = append(others, r)
		}
	}
	all := append(own, others...)
	if len(all) > relLimit {
		more = append(more, fmt.Sprintf("%d relationships among these entities, %d returned: raise relationship_limit (at most %d)", len(all), relLimit, MaxExploreRelationshipLimit))
		all = all[:relLimit]
	}
	out.Relationships = append(out.Relationships, all...)
	out.Truncated = len(more) > 0
	out.More = strings.Join(more, "; ")
	return out
}

func (t *tools) stats(ctx context.Context, req *mcp.CallToolRequest, in StatsInput) (*mcp.CallToolResult, engine.Stats, error) {
	if err := t.check(ctx, req, in.Corpus); err != nil {
		return nil, engine.Stats{}, err
	}
	st, err := t.e.Engine().Stats(ctx, in.Corpus)
	if errors.Is(err, engine.ErrUnknownCorpus) && t.catalog != nil {
		// A corpus without passages may still exist (documents pending): zero counts.
		if err = t.known(ctx, in.Corpus); err == nil {
			st = engine.Stats{Corpus: in.Corpus}
		}
	}
	if err != nil {
		return nil, engine.Stats{}, t.toolError(ctx, ToolStats, err)
	}
	return nil, st, nil
}

// toolError turns an error into the text of a tool error, from what package clienterror
// tells a client (as the HTTP API does): the caller's own mistakes with their text and a
// hint for the model, a failure of the service by what failed, logged with its details.
func (t *tools) toolError(ctx context.Context, tool string, err error) error {
	told := clienterror.Of(ctx, err)
	if told.Class.ServiceFailure() {
		t.log.WarnContext(ctx, "mcp tool failed", "tool", tool, "class", told.Class, "err", err)
	}
	switch told.Class {
	case clienterror.Invalid:
		return fmt.Errorf("invalid arguments: %s", told.Message)
	case clienterror.NotFound:
		if told.Code == clienterror.CorpusNotFound {
			return fmt.Errorf("%s (nothing is indexed under this name; check the corpus name)", told.Message)
		}
		return fmt.Errorf("%s; try the name as written in the documents, or search first", told.Message)
	case clienterror.Conflict:
		return fmt.Errorf("%s; read it again and retry", told.Message)
	case clienterror.Canceled, clienterror.Timeout:
		return fmt.Errorf("%s stopped: %s", tool, told.Message)
	case clienterror.Forbidden:
		return errors.New(told.Message)
	}
	// Unavailable, Upstream, Internal: what failed, not a store's text; the details of
	// the service's failures are in the log.
	return fmt.Errorf("%s failed: %s", tool, told.Message)
}

// safe turns a panic in a handler into a tool error, so one bad call cannot take down
// the session (stdio) or the process.
func safe[In, Out any](log *slog.Logger, tool string, h mcp.ToolHandlerFor[In, Out]) mcp.ToolHandlerFor[In, Out] {
	return func(ctx context.Context, req *mcp.CallToolRequest, in In) (res *mcp.CallToolResult, out Out, err error) {
		defer func() {
			if r := recover(); r != nil {
				log.ErrorContext(ctx, "mcp tool panicked", "tool", tool, "panic", r, "stack", string(debug.Stack()))
				var zero Out
				res, out, err = nil, zero, fmt.Errorf("%s failed: internal error", tool)
			}
		}()
		return h(ctx, req, in)
	}
}

// schemaOf derives the JSON Schema of T (descriptions from jsonschema struct tags).
func schemaOf[T any]() *jsonschema.Schema {
	s, err := jsonschema.For[T](nil)
	if err != nil {
		panic(fmt.Sprintf("mcpserver: deriving the JSON schema of %T: %v", *new(T), err))
	}
	return s
}

// describe documents top-level properties of a schema derived from a type we do not
// tag (the API types are shared with the HTTP API).
func describe(s *jsonschema.Schema, desc map[string]string) {
	for name, d := range desc {
		if p, ok := s.Properties[name]; ok {
			p.Description = d
		}
	}
}
