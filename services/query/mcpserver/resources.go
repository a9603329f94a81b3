package mcpserver

import (
	"context"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/graphrag/graphrag/pkg/catalog"
	"github.com/graphrag/graphrag/services/query/access"
	"github.com/graphrag/graphrag/services/query/engine"
)

// Names of the corpus and document tools (present when the server has a Catalog).
const (
	ToolListCorpora   = "list_corpora"
	ToolListDocuments = "list_documents"
)

// Catalog is what the listing tools read (a *catalog.Catalog).
type Catalog interface {
	Exists(ctx context.Context, corpus string) (bool, error)
	Corpora(ctx context.Context, keep func(string) bool) ([]catalog.Corpus, error)
	Documents(ctx context.Context, corpus, cursor string, limit int) (catalog.Page, error)
}

// Option configures the server.
type Option interface{ apply(*tools) }

type optionFunc func(*tools)

func (f optionFunc) apply(t *tools) { f(t) }

// WithCatalog adds the list_corpora and list_documents tools, reading from c.
func WithCatalog(c Catalog) Option { return optionFunc(func(t *tools) { t.catalog = c }) }

// ListCorporaInput is the input of list_corpora: nothing.
type ListCorporaInput struct{}

// CorpusList is the output of list_corpora.
type CorpusList struct {
	Corpora []catalog.Corpus `json:"corpora"`
}

// ListDocumentsInput is the input of list_documents.
type ListDocumentsInput struct {
	Corpus string `json:"corpus" jsonschema:"name of the corpus"`
	Limit  int    `json:"limit,omitempty" jsonschema:"documents per page (1..1000; 0 or absent: 50)"`
	Cursor string `json:"cursor,omitempty" jsonschema:"the next value of the previous page; absent for the first page"`
}

func (t *tools) addListCorpora(s *mcp.Server) {
	out := schemaOf[CorpusList]()
	describe(out, map[string]string{"corpora": "the corpora this client may read: name, documents, chunks, entities, relationships, communities and state (empty, indexing, complete, failed)"})
	mcp.AddTool(s, &mcp.Tool{
		Name:         ToolListCorpora,
		Title:        "List corpora",
		Description:  "Lists the corpora that can be searched, with their size and indexing state.",
		Annotations:  readOnly,
		InputSchema:  schemaOf[ListCorporaInput](),
		OutputSchema: out,
	}, safe(t.log, ToolListCorpora, t.listCorpora))
}

func (t *tools) addListDocuments(s *mcp.Server) {
	in := schemaOf[ListDocumentsInput]()
	in.Properties["limit"].Minimum = new(0.0)
	in.Properties["limit"].Maximum = new(float64(catalog.MaxPage))
	out := schemaOf[catalog.Page]()
	describe(out, map[string]string{
		"documents": "documents with id, title, content hash, chunks, state (pending, indexed, failed) and the reason of a failure",
		"next":      "cursor of the next page; absent on the last page",
	})
	mcp.AddTool(s, &mcp.Tool{
		Name:         ToolListDocuments,
		Title:        "List a corpus's documents",
		Description:  "Lists the documents of a corpus a page at a time, with their indexing state.",
		Annotations:  readOnly,
		InputSchema:  in,
		OutputSchema: out,
	}, safe(t.log, ToolListDocuments, t.listDocuments))
}

func (t *tools) listCorpora(ctx context.Context, req *mcp.CallToolRequest, _ ListCorporaInput) (*mcp.CallToolResult, CorpusList, error) {
	ctx = withGrant(ctx, req)
	cs, err := t.catalog.Corpora(ctx, func(c string) bool { return access.Visible(ctx, c) })
	if err != nil {
		return nil, CorpusList{}, t.toolError(ctx, ToolListCorpora, err)
	}
	return nil, CorpusList{Corpora: cs}, nil
}

func (t *tools) listDocuments(ctx context.Context, req *mcp.CallToolRequest, in ListDocumentsInput) (*mcp.CallToolResult, catalog.Page, error) {
	if err := t.check(ctx, req, in.Corpus); err != nil {
		return nil, catalog.Page{}, err
	}
	if err := t.known(ctx, in.Corpus); err != nil {
		return nil, catalog.Page{}, t.toolError(ctx, ToolListDocuments, err)
	}
	limit := in.Limit
	if limit == 0 {
		limit = 50
	}
	p, err := t.catalog.Documents(ctx, in.Corpus, in.Cursor, limit)
	if err != nil {
		if errors.Is(err, catalog.ErrInvalid) {
			return nil, catalog.Page{}, fmt.Errorf("invalid arguments: %w", err)
		}
		return nil, catalog.Page{}, t.toolError(ctx, ToolListDocuments, err)
	}
	return nil, p, nil
}

// known is engine.ErrUnknownCorpus for a corpus the platform holds nothing of (the
// HTTP API's corpus_not_found): the same rule for every tool. Without a catalog, the
// engine decides.
func (t *tools) known(ctx context.Context, corpus string) error {
	if t.catalog == nil {
		return nil
	}
	ok, err := t.catalog.Exists(ctx, corpus)
	if errors.Is(err, catalog.ErrInvalid) {
		return fmt.Errorf("%w: %w", engine.ErrBadRequest, err)
	}
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%w: %s", engine.ErrUnknownCorpus, corpus)
	}
	return nil
}
