package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/graphrag/graphrag/services/query/ask"
	"github.com/graphrag/graphrag/services/query/engine"
	"github.com/graphrag/graphrag/services/query/explore"
	"github.com/graphrag/graphrag/services/query/internal/querytest"
)

// stdioSession serves s over pipes as `graphrag mcp` serves stdin and stdout; send writes
// one line, recv reads one.
type stdioSession struct {
	in   *io.PipeWriter
	out  *bufio.Reader
	done chan error
}

func startStdio(t *testing.T, s *mcp.Server) *stdioSession {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ss := &stdioSession{in: inW, out: bufio.NewReader(outR), done: make(chan error, 1)}
	go func() {
		ss.done <- ServeIO(context.WithoutCancel(t.Context()), s, inR, outW)
		_ = outW.Close()
	}()
	t.Cleanup(func() {
		_ = inW.Close()
		_, _ = io.Copy(io.Discard, outR) // drain until the server is done
		if err := <-ss.done; err != nil {
			t.Errorf("ServeIO: %v", err)
		}
	})
	return ss
}

func (ss *stdioSession) send(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(ss.in, line+"\n"); err != nil {
		t.Fatalf("writing %q: %v", line, err)
	}
}

type rpcReply struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func (ss *stdioSession) recv(t *testing.T) rpcReply {
	t.Helper()
	line, err := ss.out.ReadString('\n')
	if err != nil {
		t.Fatalf("reading a reply: %v (the session ended)", err)
	}
	var r rpcReply
	if err := json.Unmarshal([]byte(line), &r); err != nil {
		t.Fatalf("reply %q is not JSON: %v", line, err)
	}
	return r
}

// A malformed line gets a JSON-RPC error and the session goes on (issue 12, item 7: it
// ended the session silently).
func TestStdioMalformedLineKeepsSession(t *testing.T) {
	ss := startStdio(t, newTestServer(t, "test"))
	ss.send(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`)
	if r := ss.recv(t); r.Error != nil || string(r.ID) != "1" {
		t.Fatalf("initialize: %+v", r)
	}
	ss.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	for _, tc := range []struct {
		line   string
		code   int
		wantID string
	}{
		{`this is not json`, codeParseError, "null"},
		{`{"jsonrpc":"2.0","id":2,"method":`, codeParseError, "null"},
		{`{"id":3,"hello":"world"}`, codeInvalidRequest, "3"},
		{`42`, codeInvalidRequest, "null"},
	} {
		ss.send(t, tc.line)
		r := ss.recv(t)
		if r.Error == nil || r.Error.Code != tc.code || string(r.ID) != tc.wantID {
			t.Errorf("line %q: reply %+v, want error %d with id %s", tc.line, r, tc.code, tc.wantID)
		}
	}
	ss.send(t, "") // blank lines are skipped
	ss.send(t, `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"get_corpus_stats","arguments":{"corpus":"demo"}}}`)
	r := ss.recv(t)
	if r.Error != nil || string(r.ID) != "4" || !strings.Contains(string(r.Result), `"chunks":3`) {
		t.Errorf("the session did not go on: %+v %s", r, r.Result)
	}
}

// The SDK's own client works over the filtered transport.
func TestStdioWithSDKClient(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- ServeIO(context.WithoutCancel(t.Context()), newTestServer(t, "test"), inR, outW)
		_ = outW.Close()
	}()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "0"}, nil).Connect(t.Context(), &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: ToolSearch, Arguments: map[string]any{"corpus": "demo", "query": "Who designed the Analytical Engine?"}})
	if err != nil || res.IsError {
		t.Fatalf("search: %v %s", err, toolText(res))
	}
	_ = cs.Close()
	if err := <-done; err != nil {
		t.Errorf("ServeIO: %v", err)
	}
}

// A concise search result is a small fraction of the full one: short passages, no
// entities, relationships or reports (issue 12, item 7: 18-45 KB a call).
func TestSearchConciseIsSmall(t *testing.T) {
	st := querytest.Open(t)
	var passages []querytest.Passage
	for i := range 12 {
		text := fmt.Sprintf("Gullhead Lighthouse keeper log %d. ", i) + strings.Repeat("The keeper of Gullhead Lighthouse trimmed the lamp and wrote the weather into the log. ", 20)
		passages = append(passages, querytest.Passage{ID: fmt.Sprintf("p%02d", i), Doc: fmt.Sprintf("d%d", i), Title: "Keeper's log", Text: text})
	}
	st.WriteChunks(t, "logs", passages)
	e, err := ask.New(engine.Config{}, ask.Config{}, engine.Deps{Graph: st.Graph, Vectors: st.Vectors, Embedder: st.Embedder, Logger: querytest.Logger()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs := connectMCP(t, New(e, explore.New(st.Graph, st.Vectors), "test", querytest.Logger()), nil)
	size := map[string]int{}
	for _, detail := range []string{DetailConcise, DetailFull} {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: ToolSearch, Arguments: map[string]any{"corpus": "logs", "query": "Who keeps Gullhead Lighthouse?", "mode": "local", "detail": detail}})
		if err != nil || res.IsError {
			t.Fatalf("search: %v %s", err, toolText(res))
		}
		b, _ := json.Marshal(res.StructuredContent)
		size[detail] = len(b)
		var r SearchResult
		structured(t, res, &r)
		if len(r.Passages) != 10 {
			t.Fatalf("%d passages, want the default 10", len(r.Passages))
		}
		for _, p := range r.Passages {
			if len(p.Text) > snippetBytes+len("…") {
				t.Errorf("passage %s: %d bytes of text, want at most %d", p.ID, len(p.Text), snippetBytes)
			}
		}
	}
	t.Logf("structured content: concise %d bytes, full %d bytes", size[DetailConcise], size[DetailFull])
	if size[DetailConcise]*3 > size[DetailFull] || size[DetailConcise] > 8<<10 {
		t.Errorf("concise %d bytes, full %d: want concise under 8 KB and under a third of full", size[DetailConcise], size[DetailFull])
	}
}
