package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/graphrag/graphrag/services/query/ask"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The tests in this file run the graphrag binary as a user does, from the outside: the
// defects of issue 12 were found that way, and each is checked that way here.

// cliBinary builds graphrag into a temporary directory once per test binary.
var cliBinary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "graphrag-cli-test-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "graphrag")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("building graphrag: %w\n%s", err, out)
	}
	return bin, nil
})

func buildCLI(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the graphrag binary")
	}
	bin, err := cliBinary()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// cliResult is what a finished command printed and how it ended.
type cliResult struct {
	stdout, stderr string
	code           int
}

// runCLI runs the binary in dir (the test's working directory when ""), with stdin, and
// waits for it (a safety bound of two minutes, not a speed goal).
func runCLI(t *testing.T, bin, dir, stdin string, args ...string) cliResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = scalingEnv()
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	res := cliResult{stdout: out.String(), stderr: errOut.String()}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		res.code = ee.ExitCode()
	case err != nil:
		t.Fatalf("graphrag %s: %v\n%s", strings.Join(args, " "), err, errOut.String())
	}
	if ctx.Err() != nil {
		t.Fatalf("graphrag %s did not finish:\n%s", strings.Join(args, " "), errOut.String())
	}
	return res
}

// upProcess is a running `graphrag up`.
type upProcess struct {
	cmd               *exec.Cmd
	stdout, stderr    *lockedBuffer
	natsURL, api, dir string
	exited            chan error
	stopped           bool
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startUp runs `graphrag up` in workDir with args, on free ports, and waits until it
// says it serves (or fails the test with its log).
func startUp(t *testing.T, bin, workDir string, args ...string) *upProcess {
	t.Helper()
	natsPort := crashFreePort(t)
	httpAddr := scalingFreeAddr(t)
	u := &upProcess{stdout: &lockedBuffer{}, stderr: &lockedBuffer{}, natsURL: crashURL(natsPort), api: "http://" + httpAddr,
		dir: filepath.Join(t.TempDir(), "data"), exited: make(chan error, 1)}
	all := append([]string{"up", "-data-dir", u.dir, "-nats-port", strconv.Itoa(natsPort), "-http-addr", httpAddr,
		"-detect-debounce", "300ms"}, args...)
	u.cmd = exec.Command(bin, all...)
	u.cmd.Dir = workDir
	u.cmd.Env = scalingEnv()
	u.cmd.Stdout, u.cmd.Stderr = u.stdout, u.stderr
	if err := u.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { u.exited <- u.cmd.Wait() }()
	t.Cleanup(func() {
		if !u.stopped {
			_ = u.cmd.Process.Kill()
			<-u.exited //nolint:errcheck // killed: the exit error says nothing
		}
		if t.Failed() {
			t.Logf("graphrag up stderr:\n%s", tail(u.stderr.String(), 6000))
		}
	})
	return u
}

// waitFor waits until the process printed want on stderr (a safety bound of four
// minutes: indexing the sample corpus on a loaded machine takes one).
func (u *upProcess) waitFor(t *testing.T, want string) {
	t.Helper()
	deadline := time.Now().Add(4 * time.Minute)
	for !strings.Contains(u.stderr.String(), want) {
		select {
		case err := <-u.exited:
			u.stopped = true
			t.Fatalf("graphrag up exited (%v) before printing %q", err, want)
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("graphrag up did not print %q", want)
		}
	}
}

// interrupt sends SIGINT, as Ctrl-C does, and returns how the process ended.
func (u *upProcess) interrupt(t *testing.T) error {
	t.Helper()
	if err := u.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-u.exited:
		u.stopped = true
		return err
	case <-time.After(2 * time.Minute): // a safety net; with a 5 s telemetry bound it is far off
		t.Fatal("graphrag up did not stop after SIGINT")
		return nil
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// deafCollector accepts connections and never answers: an OTLP endpoint behind a
// firewall that drops packets.
func deafCollector(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			_ = c.Close()
		}
	})
	return ln.Addr().String()
}

// The defaults a first run meets: the HTTP API on loopback (issue 12, item 5).
func TestCLIDefaults(t *testing.T) {
	bin := buildCLI(t)
	res := runCLI(t, bin, "", "", "up", "-h")
	if !strings.Contains(res.stderr, `-http-addr string`) || !strings.Contains(res.stderr, `(default "127.0.0.1:8080")`) {
		t.Errorf("up -h does not show a loopback default for -http-addr:\n%s", res.stderr)
	}
}

// Commands given a mistake fail with its cause, exit 1, and publish or wait for nothing
// (issue 12, items 2, 3, 4).
func TestCLIMistakesFailWithTheirCause(t *testing.T) {
	bin := buildCLI(t)
	elsewhere := t.TempDir()
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"demo outside the repository", []string{"up", "-demo", "-data-dir", filepath.Join(elsewhere, "d"), "-nats-port", "-1", "-http-addr", "127.0.0.1:0"},
			[]string{"-demo: no sample corpus in examples", "-examples"}},
		{"demo with a wrong -examples", []string{"up", "-demo", "-examples", filepath.Join(elsewhere, "nope"), "-data-dir", filepath.Join(elsewhere, "e"), "-nats-port", "-1", "-http-addr", "127.0.0.1:0"},
			[]string{"no sample corpus in " + filepath.Join(elsewhere, "nope")}},
		{"eval without its dataset", []string{"eval", "-dataset", filepath.Join(elsewhere, "hotpotqa"), "-out", filepath.Join(elsewhere, "eval.json")},
			[]string{"-dataset " + filepath.Join(elsewhere, "hotpotqa"), "no such file or directory"}},
		{"up with invalid values", []string{"up", "-data-dir", filepath.Join(elsewhere, "f"), "-nats-port", "-1", "-http-addr", "127.0.0.1:0",
			"-entity-min-similarity", "1.5", "-pagerank-damping", "1", "-chunk-tokens", "-5"},
			[]string{"-entity-min-similarity: must be -1 (automatic) or in (0, 1], got 1.5", "-pagerank-damping: must be in (0, 1), got 1", "-chunk-tokens: must be at least 1, got -5"}},
		{"query in an unknown mode", []string{"query", "-api", "http://127.0.0.1:1", "-corpus", "demo", "-mode", "deep", "x"},
			[]string{`mode: "deep" is not one of auto, naive, local, global, hybrid, mix, drift`}},
		{"query with too long a user prompt", []string{"query", "-api", "http://127.0.0.1:1", "-corpus", "demo", "-user-prompt", strings.Repeat("u", 2001), "x"},
			[]string{"user_prompt: is 2001 bytes, limit 2000"}},
		{"publish a path that does not exist", []string{"publish", "-nats-url", "nats://127.0.0.1:1", "-corpus", "notes", filepath.Join(elsewhere, "notes")},
			[]string{"nothing published", "no such file or directory"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := runCLI(t, bin, elsewhere, "", tc.args...)
			if res.code != 1 {
				t.Errorf("exit status %d, want 1\n%s", res.code, res.stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(res.stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, tail(res.stderr, 3000))
				}
			}
			if strings.Contains(res.stderr, "interrupted before") {
				t.Errorf("the cause is lost:\n%s", res.stderr)
			}
		})
	}
}

var citationLine = regexp.MustCompile(`(?m)^   \[(\d+)\] (.+): (.+) \((\S+)\)$`)

// checkCitations: citation lines name a title and an opening of the passage, and their
// markers count 1, 2, 3, … (issue 12, item 8).
func checkCitations(t *testing.T, out string) {
	t.Helper()
	lines := citationLine.FindAllStringSubmatch(out, -1)
	if len(lines) == 0 {
		t.Fatalf("no citation line with a title and a snippet in:\n%s", out)
	}
	next := 1
	for _, l := range lines {
		n, _ := strconv.Atoi(l[1])
		if n == 1 {
			next = 1 // the next answer's citations
		}
		if n != next {
			t.Errorf("citation [%d] where [%d] was due:\n%s", n, next, out)
		}
		next++
		if strings.TrimSpace(l[2]) == "" || len(l[3]) < 20 {
			t.Errorf("citation without a title or a snippet: %q", l[0])
		}
	}
}

// One `graphrag up -demo`, started from a subdirectory of the repository with an OTLP
// endpoint that never answers, used the way the README says.
func TestCLIAgainstRunningUp(t *testing.T) {
	bin := buildCLI(t)
	root := repoRoot(t)
	up := startUp(t, bin, filepath.Join(root, "docs", "adr"), "-demo", "-otlp-endpoint", deafCollector(t), "-otlp-insecure")
	up.waitFor(t, "serving the query API")

	t.Run("demo found its examples and cites by title", func(t *testing.T) {
		if !strings.Contains(up.stderr.String(), "published 14 documents") {
			t.Errorf("the demo did not publish the sample corpus:\n%s", tail(up.stderr.String(), 2000))
		}
		checkCitations(t, up.stdout.String())
	})
	t.Run("query cites in order with titles", func(t *testing.T) {
		res := runCLI(t, bin, "", "", "query", "-api", up.api, "-corpus", "demo", "Who keeps Gullhead Lighthouse?")
		if res.code != 0 {
			t.Fatalf("exit %d: %s", res.code, res.stderr)
		}
		checkCitations(t, res.stdout)
		stream := runCLI(t, bin, "", "", "query", "-api", up.api, "-corpus", "demo", "-stream", "Who keeps Gullhead Lighthouse?")
		checkCitations(t, stream.stdout)
	})
	t.Run("a question of stop words is answered", func(t *testing.T) {
		for _, mode := range ask.Modes {
			if res := runCLI(t, bin, "", "", "query", "-api", up.api, "-corpus", "demo", "-mode", mode, "What is this about?"); res.code != 0 {
				t.Errorf("%s: exit %d: %s", mode, res.code, res.stderr)
			}
		}
	})
	t.Run("every mode answers with citations, or shows its context", func(t *testing.T) {
		for _, mode := range []string{ask.ModeNaive, ask.ModeHybrid, ask.ModeMix, ask.ModeDrift} {
			res := runCLI(t, bin, "", "", "query", "-api", up.api, "-corpus", "demo", "-mode", mode, "-response-type", "Bullet Points", "Who keeps Gullhead Lighthouse?")
			if res.code != 0 {
				t.Fatalf("%s: exit %d: %s", mode, res.code, res.stderr)
			}
			if !strings.Contains(res.stdout, "Q ("+mode+")") || !strings.Contains(res.stdout, "A: - ") {
				t.Errorf("%s: the answer is not a list from this mode:\n%s", mode, res.stdout)
			}
			checkCitations(t, res.stdout)
		}
		res := runCLI(t, bin, "", "", "query", "-api", up.api, "-corpus", "demo", "-mode", ask.ModeDrift, "-only-context", "Who keeps Gullhead Lighthouse?")
		if res.code != 0 || !strings.Contains(res.stdout, "Q (drift, context only)") || !strings.Contains(res.stdout, "follow-up: ") || !strings.Contains(res.stdout, "   1. ") {
			t.Errorf("drift -only-context: exit %d, stdout:\n%s", res.code, res.stdout)
		}
	})
	t.Run("status of an unknown corpus fails", func(t *testing.T) {
		for _, args := range [][]string{{}, {"-wait", "10m"}} {
			res := runCLI(t, bin, "", "", append([]string{"status", "-nats-url", up.natsURL, "-corpus", "demo_typo"}, args...)...)
			if res.code != 1 || !strings.Contains(res.stderr, "no document was ever published") || strings.Contains(res.stdout, "in progress") {
				t.Errorf("status %v: exit %d, stdout %q, stderr %q: want exit 1 saying the corpus has no document", args, res.code, res.stdout, res.stderr)
			}
		}
	})
	t.Run("publish warns of ids that collide", func(t *testing.T) {
		dir := t.TempDir()
		for _, sub := range []string{"a", "b"} {
			if err := os.MkdirAll(filepath.Join(dir, sub), 0o750); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, sub, "notes.md"), []byte("# Notes "+sub+"\n\nOrla Venn keeps the "+sub+" archive."), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		res := runCLI(t, bin, dir, "", "publish", "-nats-url", up.natsURL, "-corpus", "notes", "a", "b")
		if res.code != 1 || !strings.Contains(res.stdout, `document id "notes.md" is already a/notes.md's`) || !strings.Contains(res.stderr, "-id-prefix") {
			t.Errorf("exit %d, stdout %q, stderr %q: want the collision reported and -id-prefix offered", res.code, res.stdout, res.stderr)
		}
		res = runCLI(t, bin, dir, "", "publish", "-nats-url", up.natsURL, "-corpus", "notes", "-id-prefix", "b/", "b")
		if res.code != 0 || !strings.Contains(res.stdout, "published 1,") {
			t.Errorf("with -id-prefix: exit %d, %s %s", res.code, res.stdout, res.stderr)
		}
		// Not a terminal: no progress bar, so no stale progress line in a log.
		if strings.ContainsAny(res.stderr, "\r") || strings.Contains(res.stderr, "publishing") {
			t.Errorf("progress output on a non-terminal: %q", res.stderr)
		}
	})
	t.Run("mcp names the process holding the data dir", func(t *testing.T) {
		res := runCLI(t, bin, "", "", "mcp", "-data-dir", up.dir)
		want := fmt.Sprintf("is locked by another process, pid %d (", up.cmd.Process.Pid)
		if res.code != 1 || !strings.Contains(res.stderr, want) || !strings.Contains(res.stderr, "graphrag up") {
			t.Errorf("exit %d, stderr %q: want %q and the holder's command", res.code, tail(res.stderr, 2000), want)
		}
	})
	t.Run("paths outside /v1 answer JSON errors", func(t *testing.T) {
		for _, path := range []string{"/nowhere", "/v1/nowhere"} {
			resp, err := http.Get(up.api + path)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			var e struct{ Error string }
			if resp.StatusCode != http.StatusNotFound || json.Unmarshal(body, &e) != nil || e.Error == "" {
				t.Errorf("GET %s: %d %q: want a JSON 404", path, resp.StatusCode, body)
			}
		}
	})
	t.Run("mcp over HTTP answers concisely", func(t *testing.T) {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "0"}, nil).Connect(t.Context(),
			&mcp.StreamableClientTransport{Endpoint: up.api + "/mcp", MaxRetries: -1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = cs.Close() }()
		size := map[string]int{}
		for _, detail := range []string{"concise", "full"} {
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "search", Arguments: map[string]any{
				"corpus": "demo", "query": "Which institute employs the scientist who chaired the Storm Hester inquiry?", "detail": detail}})
			if err != nil || res.IsError {
				t.Fatalf("search: %v %+v", err, res)
			}
			b, _ := json.Marshal(res.StructuredContent)
			size[detail] = len(b)
		}
		t.Logf("search result: concise %d bytes, full %d bytes", size["concise"], size["full"])
		if size["concise"] > 8<<10 || size["concise"]*2 > size["full"] {
			t.Errorf("concise %d bytes, full %d: want concise under 8 KB and under half of full", size["concise"], size["full"])
		}
	})
	t.Run("metrics", func(t *testing.T) {
		resp, err := http.Get(up.api + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		for _, want := range []string{`http_route="/v1/query"`, `outcome="error"`, `reason="invalid_output"`} {
			if !strings.Contains(string(body), want) {
				t.Errorf("/metrics lacks %s", want)
			}
		}
		// Every metric docs/operations.md documents is served, but those of the NATS
		// exporter, of a model endpoint (none here) and those whose series begin with a
		// failed call (none here).
		doc, err := os.ReadFile(filepath.Join(repoRoot(t), "docs", "operations.md"))
		if err != nil {
			t.Fatal(err)
		}
		// The metrics table is in "## Watching it", before its "### Dashboard and alerts".
		_, section, _ := strings.Cut(string(doc), "\n## Watching it\n")
		section, _, _ = strings.Cut(section, "\n### Dashboard and alerts")
		rows := regexp.MustCompile("(?m)^\\| `([a-z_]+)` \\|[^|]*\\| ([^|]+) \\|").FindAllStringSubmatch(section, -1)
		if len(rows) < 20 {
			t.Fatalf("found %d metric rows in docs/operations.md", len(rows))
		}
		for _, r := range rows {
			if from := r[2]; strings.Contains(from, "NATS exporter") || strings.Contains(from, "with a model") || strings.Contains(from, "from its first failed call") {
				continue
			}
			if !regexp.MustCompile(`(?m)^` + r[1] + `(_bucket|_count|_sum)?\{`).Match(body) {
				t.Errorf("/metrics lacks %s, which docs/operations.md documents", r[1])
			}
		}
	})

	// Ctrl-C with a collector that never answers: a clean, bounded exit.
	if err := up.interrupt(t); err != nil {
		t.Errorf("graphrag up after SIGINT: %v", err)
	}
	t.Run("log lines are JSON without duplicate keys", func(t *testing.T) {
		checkLogLines(t, up.stderr.String())
	})
	t.Run("mcp over stdio survives a malformed line", func(t *testing.T) {
		checkStdioSession(t, bin, up.dir)
	})
}

// checkStdioSession talks to `graphrag mcp` over stdin and stdout as a client does, one
// line at a time, with a malformed line in the middle (issue 12, item 7).
func checkStdioSession(t *testing.T, bin, dataDir string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute) // a safety bound
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "mcp", "-data-dir", dataDir, "-log-level", "warn")
	cmd.Env = scalingEnv()
	var errOut lockedBuffer
	cmd.Stderr = &errOut
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	replies := bufio.NewScanner(stdout)
	replies.Buffer(nil, 1<<20)
	exchange := func(line string, wantReply bool) map[string]any {
		t.Helper()
		if _, err := io.WriteString(stdin, line+"\n"); err != nil {
			t.Fatalf("writing %q: %v\n%s", line, err, errOut.String())
		}
		if !wantReply {
			return nil
		}
		if !replies.Scan() {
			t.Fatalf("no reply to %q: the session ended\n%s", line, errOut.String())
		}
		var r map[string]any
		if err := json.Unmarshal(replies.Bytes(), &r); err != nil {
			t.Fatalf("reply %q is not JSON: %v", replies.Text(), err)
		}
		return r
	}
	exchange(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`, true)
	exchange(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, false)
	if r := exchange(`this line is not JSON`, true); r["error"] == nil || r["error"].(map[string]any)["code"] != float64(-32700) {
		t.Errorf("reply to the malformed line: %v, want a parse error", r)
	}
	r := exchange(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search","arguments":{"corpus":"demo","query":"Who keeps Gullhead Lighthouse?"}}}`, true)
	if r["id"] != float64(2) || r["result"] == nil {
		t.Errorf("the search after it: %v", r)
	}
	_ = stdin.Close() // the client leaves: the process ends
	if err := cmd.Wait(); err != nil {
		t.Errorf("graphrag mcp after stdin closed: %v\n%s", err, errOut.String())
	}
}

// checkLogLines: every structured line is a JSON object with each key once, and nothing
// is printed by the OpenTelemetry SDK as plain text (issue 12, item 10).
func checkLogLines(t *testing.T, log string) {
	t.Helper()
	structured := 0
	for line := range strings.SplitSeq(log, "\n") {
		if strings.Contains(line, "traces export") || strings.Contains(line, "metrics export") {
			if !strings.HasPrefix(line, "{") {
				t.Errorf("an exporter error as plain text: %q", line)
			}
		}
		if !strings.HasPrefix(line, "{") {
			continue // the demo's own output: status table, answers
		}
		structured++
		dec := json.NewDecoder(strings.NewReader(line))
		if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
			t.Errorf("log line %q is not a JSON object", line)
			continue
		}
		seen := map[string]bool{}
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				t.Errorf("log line %q: %v", line, err)
				break
			}
			key, _ := tok.(string)
			if seen[key] {
				t.Errorf("key %q twice in %s", key, line)
			}
			seen[key] = true
			var v json.RawMessage
			if err := dec.Decode(&v); err != nil {
				t.Errorf("log line %q: %v", line, err)
				break
			}
		}
	}
	if structured == 0 {
		t.Error("no structured log line at all")
	}
}
