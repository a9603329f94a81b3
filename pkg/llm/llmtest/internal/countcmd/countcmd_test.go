package countcmd

import (
	"bufio"
	"flag"
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/graphrag/graphrag/pkg/llm/llmtest"
)

// Serve prints the URL first, answers through the script, and prints the report when the
// process gets SIGTERM, which it catches.
func TestServeReportsOnSIGTERM(t *testing.T) {
	var own string
	f, err := Parse("t", []string{"-dim", "3", "-own", "x"}, func(fs *flag.FlagSet) { fs.StringVar(&own, "own", "", "") })
	if err != nil || own != "x" || f.dim != 3 {
		t.Fatalf("parsed %+v, own %q: %v", f, own, err)
	}
	pr, pw := io.Pipe()
	calls := make(chan string, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer pw.Close()
		Serve(pw, f, func(r llmtest.Request) llmtest.Reply {
			calls <- r.Path
			return llmtest.Reply{}
		}, func(w io.Writer) { _, _ = io.WriteString(w, "the counts\n") })
	}()
	out := bufio.NewReader(pr)
	url, err := out.ReadString('\n')
	if err != nil || !strings.HasSuffix(url, "/v1\n") {
		t.Fatalf("first line %q, %v", url, err)
	}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, strings.TrimSpace(url)+"/embeddings", strings.NewReader(`{"model":"m","input":"x"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if got := <-calls; got != "/v1/embeddings" || !strings.Contains(string(b), `"embedding":[`) {
		t.Fatalf("script saw %q; answer %s", got, b)
	}
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	rest, _ := io.ReadAll(out)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after SIGTERM")
	}
	if string(rest) != "the counts\n" {
		t.Errorf("after the signal %q, want the report", rest)
	}
}
