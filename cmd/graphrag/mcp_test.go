package main

import (
	"flag"
	"io"
	"log/slog"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/graphrag/graphrag/cmd/graphrag/internal/stack"
	"github.com/graphrag/graphrag/pkg/platform"
	"github.com/graphrag/graphrag/pkg/service"
	"github.com/graphrag/graphrag/services/query"
	"github.com/graphrag/graphrag/services/query/mcpserver"
)

// TestMCPStdioTools: graphrag mcp serves the tools of the /mcp endpoint, the listings
// included, so that an agent on stdio can discover the corpora.
func TestMCPStdioTools(t *testing.T) {
	var common service.CommonFlags
	var backends platform.BackendFlags
	fs := flag.NewFlagSet("mcp", flag.ContinueOnError)
	common.Register(fs)
	backends.Register(fs, stack.Needs())
	if err := fs.Parse([]string{"-data-dir", t.TempDir(), "-nats-port", "-1"}); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	p, err := platform.Open(t.Context(), common, backends, stack.Needs(), "test", log)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = p.Close() }()
	srv, err := newMCPServer(p, query.DefaultConfig(), log)
	if err != nil {
		t.Fatal(err)
	}
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ss.Close() }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, nil).Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cs.Close() }()
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	want := []string{mcpserver.ToolExplore, mcpserver.ToolStats, mcpserver.ToolListCorpora, mcpserver.ToolListDocuments, mcpserver.ToolSearch}
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Errorf("tools %v, want %v (those of /mcp)", names, want)
	}
	call, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: mcpserver.ToolListCorpora, Arguments: map[string]any{}})
	if err != nil || call.IsError {
		t.Errorf("list_corpora: %v %+v", err, call)
	}
}
