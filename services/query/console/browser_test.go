//go:build browser

package console_test

// Browser tests: `graphrag up -demo` on the sample corpus (examples/), driven through
// headless Chromium (Debian's chromium package; scripts/ui/chromium.sh installs it) by
// chromedp. Run with `make test-ui`. Screenshots of every page go to
// $GRAPHRAG_UI_SCREENSHOTS (default: screenshots/ beside this file, git-ignored).

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

var (
	repoRoot    string
	graphragBin string
	chromePath  string
	shotDir     string
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	wd, _ := os.Getwd()
	repoRoot = filepath.Clean(filepath.Join(wd, "../../.."))
	chromePath = os.Getenv("CHROME_BIN")
	if chromePath == "" {
		p, err := exec.LookPath("chromium")
		if err != nil {
			fmt.Fprintln(os.Stderr, "chromium not found: run scripts/ui/chromium.sh (make test-ui does) or set CHROME_BIN")
			return 1
		}
		chromePath = p
	}
	shotDir = os.Getenv("GRAPHRAG_UI_SCREENSHOTS")
	if shotDir == "" {
		shotDir = filepath.Join(wd, "screenshots")
	}
	if err := os.MkdirAll(shotDir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	tmp, err := os.MkdirTemp("", "graphrag-ui-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(tmp)
	// The integration run (scripts/integration/run.sh) opens the console once on Neo4j
	// and Milvus: it passes their flags here, and every graphrag up gets them.
	upExtraArgs = strings.Fields(os.Getenv("GRAPHRAG_UI_UP_ARGS"))
	graphragBin = os.Getenv("GRAPHRAG_BIN")
	if graphragBin == "" {
		graphragBin = filepath.Join(tmp, "graphrag")
		build := exec.Command("go", "build", "-o", graphragBin, "./cmd/graphrag")
		build.Dir, build.Stdout, build.Stderr = repoRoot, os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "building graphrag:", err)
			return 1
		}
	}
	code := m.Run()
	for _, s := range stacks {
		s.stop()
	}
	if rootCtx != nil {
		_ = chromedp.Cancel(rootCtx)
	}
	return code
}

// freePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// stack is one `graphrag up -demo` process, possibly behind the resource fake.
type stack struct {
	base    string // what the browser opens: the process, or the fake in front of it
	direct  string // the process itself
	natsURL string
	cmd     *exec.Cmd
	done    chan struct{}
	fake    *resourceFake
}

// upExtraArgs are added to every graphrag up the tests start (GRAPHRAG_UI_UP_ARGS).
var upExtraArgs []string

var (
	stacksMu sync.Mutex
	stacks   = map[string]*stack{}
)

// upStack returns the shared stack started with args (started once per distinct args).
func upStack(t *testing.T, args ...string) *stack {
	t.Helper()
	key := strings.Join(args, " ")
	stacksMu.Lock()
	defer stacksMu.Unlock()
	if s, ok := stacks[key]; ok {
		return s
	}
	s := startStack(t, args...)
	stacks[key] = s
	return s
}

func startStack(t *testing.T, args ...string) *stack {
	t.Helper()
	dir, err := os.MkdirTemp("", "graphrag-ui-data-")
	if err != nil {
		t.Fatal(err)
	}
	httpPort, natsPort := freePort(t), freePort(t)
	s := &stack{direct: fmt.Sprintf("http://127.0.0.1:%d", httpPort), natsURL: fmt.Sprintf("nats://127.0.0.1:%d", natsPort), done: make(chan struct{})}
	all := append([]string{"up", "-demo", "-examples", filepath.Join(repoRoot, "examples"), "-data-dir", dir,
		"-http-addr", fmt.Sprintf("127.0.0.1:%d", httpPort), "-nats-port", fmt.Sprint(natsPort), "-log-level", "warn",
		"-detect-debounce", "200ms"}, append(slices.Clone(upExtraArgs), args...)...)
	s.cmd = exec.Command(graphragBin, all...)
	stderr, err := s.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	s.cmd.Stdout = nil
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("starting graphrag up: %v", err)
	}
	ready := make(chan string, 1)
	var log strings.Builder
	var logMu sync.Mutex
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := stderr.Read(buf)
			logMu.Lock()
			log.Write(buf[:n])
			if strings.Contains(log.String(), "serving the query API") {
				select {
				case ready <- "":
				default:
				}
			}
			logMu.Unlock()
			if err != nil {
				close(s.done)
				return
			}
		}
	}()
	select {
	case <-ready:
	case <-s.done:
		t.Fatalf("graphrag up exited: %s", log.String())
	case <-time.After(3 * time.Minute):
		s.stop()
		t.Fatalf("graphrag up did not finish the demo in 3 minutes: %s", log.String())
	}
	s.base = s.direct
	if !routeExists(s.direct, "/v1/corpora") {
		// The documents-and-corpora routes are not on this branch yet: serve a thin fake
		// of them (resourcefake_test.go) in front of the real process.
		s.fake = newResourceFake(t, s)
		s.base = s.fake.url
	}
	return s
}

// routeExists tells a served route from the API's "no route" 404.
func routeExists(base, path string) bool {
	resp, err := http.Get(base + path)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	var e struct{ Error string }
	_ = json.NewDecoder(resp.Body).Decode(&e)
	return resp.StatusCode != http.StatusNotFound || !strings.HasPrefix(e.Error, "no route")
}

func (s *stack) stop() {
	if s.fake != nil {
		s.fake.close()
	}
	if s.cmd.Process != nil {
		_ = s.cmd.Process.Signal(syscall.SIGINT)
		select {
		case <-s.done:
		case <-time.After(20 * time.Second):
			_ = s.cmd.Process.Kill()
		}
		_ = s.cmd.Wait()
	}
}

// browser is one tab of a fresh headless Chromium, with the dialogs it saw counted.
type browser struct {
	ctx     context.Context
	dialogs atomic.Int32
}

// rootBrowser is the one headless Chromium of the run; each test opens its own tab in
// a fresh browser context (its own storage), so the browser starts once.
var (
	rootOnce sync.Once
	rootCtx  context.Context
	rootErr  error
)

func startRoot() {
	dir, err := os.MkdirTemp("", "graphrag-ui-chromium-")
	if err != nil {
		rootErr = err
		return
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromePath),
		chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck, chromedp.Headless,
		chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(dir),
		chromedp.WindowSize(1280, 800),
	}
	actx, _ := chromedp.NewExecAllocator(context.Background(), opts...)
	rootCtx, _ = chromedp.NewContext(actx)
	rootErr = chromedp.Do(rootCtx)
}

func newBrowser(t testing.TB, width, height int) *browser {
	t.Helper()
	rootOnce.Do(startRoot)
	if rootErr != nil {
		t.Fatalf("starting chromium: %v", rootErr)
	}
	ctx, cancel := chromedp.NewContext(rootCtx, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	b := &browser{ctx: ctx}
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(int64(width), int64(height))); err != nil {
		t.Fatalf("opening a tab: %v", err)
	}
	// Count and dismiss every JavaScript dialog (alert, confirm, prompt).
	dialogs := chromedp.Events(ctx, page.JavascriptDialogOpening)
	go func() {
		for _, err := range dialogs {
			if err != nil {
				return
			}
			b.dialogs.Add(1)
			_, _ = chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
		}
	}()
	return b
}

// run runs actions with a deadline, failing the test with what was being done.
func (b *browser) run(t testing.TB, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 60*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		html, _ := chromedp.Run(b.ctx, chromedp.OuterHTML(chromedp.CSS("main")))
		t.Fatalf("%s: %v\npage: %.3000s", what, err, html)
	}
}

// get runs one action that returns a value.
func get[T any](t testing.TB, b *browser, what string, a chromedp.Action[T]) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 60*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return v
}

// screenshot saves the viewport as name.png in shotDir.
func (b *browser) screenshot(t testing.TB, name string) {
	t.Helper()
	b.run(t, "settling before screenshot "+name, chromedp.Sleep(300*time.Millisecond))
	png := get(t, b, "screenshot "+name, chromedp.CaptureScreenshot())
	if err := os.WriteFile(filepath.Join(shotDir, name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// waitJS polls a JavaScript expression until it is true.
func waitJS(expr string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := chromedp.Poll[any](expr, chromedp.WithPollingInterval(100*time.Millisecond), chromedp.WithPollingTimeout(50*time.Second))(ctx, tg)
		return err
	})
}

// eval runs JavaScript for its effect.
func eval(expr string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := chromedp.Evaluate[any](expr, chromedp.EvalAwaitPromise)(ctx, tg)
		return err
	})
}

func textOf(b *browser, t *testing.T, sel string) string {
	t.Helper()
	return get(t, b, "reading "+sel, chromedp.Text(chromedp.CSS(sel)))
}

func jsString(t *testing.T, b *browser, expr string) string {
	t.Helper()
	return get(t, b, "evaluating "+expr, chromedp.Evaluate[string](expr, chromedp.EvalAwaitPromise))
}
