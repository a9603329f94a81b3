package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// JSON-RPC 2.0 error codes for input that is not a message.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
)

// maxLineBytes bounds one line of input (the SDK's own default frame limit).
const maxLineBytes = mcp.DefaultMaxLineLength

// ServeStdio serves s over stdin/stdout until the client disconnects or ctx ends;
// cancelling ctx is a normal shutdown and returns nil. See ServeIO.
func ServeStdio(ctx context.Context, s *mcp.Server) error {
	return ServeIO(ctx, s, os.Stdin, os.Stdout)
}

// ServeIO serves s over newline-delimited JSON-RPC on in and out. A line that is not
// JSON is answered with a JSON-RPC parse error (-32700), and JSON that is not a JSON-RPC
// message with an invalid-request error (-32600); the session goes on. The SDK's own
// transport decodes the input as one JSON stream, so that one bad line would end the
// session, silently for the client.
func ServeIO(ctx context.Context, s *mcp.Server, in io.Reader, out io.Writer) error {
	w := &lockedWriter{w: out}
	pr, pw := io.Pipe()
	go filterLines(in, pw, w)
	err := s.Run(ctx, &mcp.IOTransport{Reader: pr, Writer: w})
	_ = pr.Close() // stops the filter at its next line
	if err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("serving MCP over stdio: %w", err)
	}
	return nil
}

// filterLines passes the lines of in that are JSON-RPC messages (or batches) to pw, one
// per line, and answers the others on w itself.
func filterLines(in io.Reader, pw *io.PipeWriter, w io.Writer) {
	br := bufio.NewReaderSize(in, 64<<10)
	for {
		line, tooLong, err := readLine(br)
		if line = bytes.TrimSpace(line); len(line) > 0 || tooLong {
			if reply := refusal(line, tooLong); reply != nil {
				if _, werr := w.Write(reply); werr != nil {
					pw.CloseWithError(werr)
					return
				}
			} else if _, werr := pw.Write(append(line, '\n')); werr != nil {
				return // the session is over
			}
		}
		if err != nil {
			pw.CloseWithError(err) // io.EOF: a clean end of the session
			return
		}
	}
}

// readLine reads one line, keeping at most maxLineBytes of it; tooLong says more was
// dropped.
func readLine(br *bufio.Reader) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		if len(line)+len(chunk) <= maxLineBytes {
			line = append(line, chunk...)
		} else {
			tooLong = true
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return line, tooLong, err
		}
	}
}

// refusal is the error response to a line that is not a JSON-RPC message, or nil when it
// is one (or a batch, which the SDK answers).
func refusal(line []byte, tooLong bool) []byte {
	switch {
	case tooLong:
		return errorResponse(nil, codeParseError, fmt.Sprintf("Parse error: the line is longer than %d bytes", maxLineBytes))
	case !json.Valid(line):
		return errorResponse(nil, codeParseError, "Parse error: the line is not valid JSON")
	case line[0] == '[':
		return nil
	}
	if _, err := jsonrpc.DecodeMessage(line); err != nil {
		var probe struct {
			ID json.RawMessage `json:"id"`
		}
		_ = json.Unmarshal(line, &probe)
		return errorResponse(probe.ID, codeInvalidRequest, "Invalid Request: not a JSON-RPC 2.0 message")
	}
	return nil
}

func errorResponse(id json.RawMessage, code int, msg string) []byte {
	if len(id) == 0 || (id[0] != '"' && (id[0] < '0' || id[0] > '9') && id[0] != '-') {
		id = json.RawMessage("null") // only a string or a number is an id
	}
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: "2.0", ID: id, Error: struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}{code, msg}})
	return append(b, '\n')
}

// lockedWriter serializes the SDK's messages and the filter's error responses: each is
// one Write of a whole line.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// Close does not close the underlying writer (stdout outlives the session).
func (l *lockedWriter) Close() error { return nil }
