package main

import (
	"bufio"
	"context"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// docCommand is one shell command of a Markdown document: the lines of a ```sh block,
// continuation lines joined, comments removed.
type docCommand struct {
	file string // relative to the repository
	line int
	text string
}

func (c docCommand) String() string { return fmt.Sprintf("%s:%d: %s", c.file, c.line, c.text) }

var shellFence = regexp.MustCompile("^```(sh|bash|shell|console)\\s*$")

// docCommands extracts the shell commands of the repository's Markdown documents
// (README.md, docs/, deploy/; test data left out), in file order.
func docCommands(root string) ([]docCommand, error) {
	var files []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			if d.Name() == "testdata" || d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".") && rel != "." {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(p, ".md") && (rel == "README.md" || strings.HasPrefix(rel, "docs/") || strings.HasPrefix(rel, "deploy/")) {
			files = append(files, rel)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(files)
	var out []docCommand
	for _, f := range files {
		cmds, err := fileCommands(root, f)
		if err != nil {
			return nil, err
		}
		out = append(out, cmds...)
	}
	return out, nil
}

func fileCommands(root, rel string) ([]docCommand, error) {
	f, err := os.Open(filepath.Join(root, rel))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []docCommand
	var cur *docCommand
	inShell, inFence, loop := false, false, false
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(line, "```") {
			inShell = !inFence && shellFence.MatchString(line)
			inFence = !inFence
			continue
		}
		if !inShell {
			continue
		}
		text := strings.TrimSpace(stripComment(line))
		if text == "" {
			continue
		}
		if cur == nil {
			cur = &docCommand{file: rel, line: n}
			loop = strings.HasPrefix(text, "for ") || strings.HasPrefix(text, "while ")
		} else {
			cur.text += " "
		}
		cont := strings.HasSuffix(text, "\\")
		cur.text += strings.TrimSpace(strings.TrimSuffix(text, "\\"))
		if loop {
			cont = text != "done"
			if !cont {
				loop = false
			} else if !strings.HasSuffix(cur.text, ";") && !strings.HasSuffix(cur.text, "do") {
				cur.text += ";"
			}
		}
		if !cont {
			out = append(out, *cur)
			cur = nil
		}
	}
	return out, sc.Err()
}

// stripComment removes a "# comment" that starts a line or follows a blank, outside
// quotes.
func stripComment(line string) string {
	var quote rune
	for i, r := range line {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case r == '\'' || r == '"':
			quote = r
		case r == '#' && (i == 0 || line[i-1] == ' ' || line[i-1] == '\t'):
			return line[:i]
		}
	}
	return line
}

// skippedDocCommands are the documented commands the test does not run, and why. The
// test fails when a document gains a command that is neither run nor listed here, and
// when one listed here is no longer documented.
var skippedDocCommands = map[string]string{
	"make test":             "the test suite this test is part of",
	"make test-integration": "installs and starts Neo4j, Milvus and a model server",
	"make lint":             "minutes of analysis of every module; CI's static checks",
	"go run ./pkg/llm/llmtest/cmd/embedcount -dataset ../shared/datasets/musique > counts.txt &":                                                                                                                 "the counting endpoint of the measurement below, which indexes MuSiQue (minutes)",
	"go run ./pkg/llm/llmtest/cmd/embedcount -dataset ../shared/datasets/musique -latency 20ms -concurrency 2 > counts.txt &":                                                                                    "the counting endpoint of the measurement below, which indexes MuSiQue (minutes)",
	"bin/graphrag eval -dataset ../shared/datasets/musique -llm-embed-base-url $(head -1 counts.txt) -llm-embed-model fake -strategies dense -limit 20 -data-dir /tmp/ec -out /tmp/ec.json [-entity-embed name]": "indexes MuSiQue against the counting endpoint above (minutes)",
	"go run ./tools/cmd/embedrate -dataset ../shared/datasets/musique -base-url http://127.0.0.1:18900/v1 -model multilingual-e5-small-q4 -batch 128 -concurrency 2":                                             "needs an embedding model server (minutes)",
	"kill -INT %1; cat counts.txt":                              "stops the counting endpoint above",
	"go run ./pkg/llm/llmtest/cmd/chatcount > chatcounts.txt &": "the counting chat endpoint of the measurement below, which indexes MuSiQue (minutes)",
	"bin/graphrag eval -dataset ../shared/datasets/musique -llm-base-url $(head -1 chatcounts.txt) -llm-chat-model fake -strategies dense -limit 1 -data-dir /tmp/cc -out /tmp/cc.json": "indexes MuSiQue against the counting chat endpoint above (minutes)",
	"kill %1; cat chatcounts.txt": "stops the counting chat endpoint above",
	"bin/graphrag estimate -dataset ../shared/datasets/musique -json > estimate.json": "reads MuSiQue, outside the repository",
	"bin/graphrag eval -dataset ../shared/datasets/musique -llm-base-url $(head -1 chatcounts.txt) -llm-chat-model fake -llm-embed-base-url $(head -1 counts.txt) -llm-embed-model fake -strategies dense -limit 1 -data-dir /tmp/est -out /tmp/est.json": "indexes MuSiQue against the counting endpoints above (minutes)",
	"kill -INT %1 %2; cat chatcounts.txt counts.txt":                                                                                             "stops the counting endpoints above",
	"bin/graphrag eval -dataset ../shared/datasets/hotpotqa -out eval.json":                                                                      "indexes the HotpotQA development set, outside the repository (minutes)",
	"go run ./tools/cmd/bench -out docs/benchmarks.md":                                                                                           "45 minutes of benchmarks; rewrites docs/benchmarks.md",
	"bin/graphrag eval -dataset ../shared/datasets/hotpotqa -out eval.json -strategies bm25,dense,hybrid,graph,graph_path":                       "indexes the HotpotQA development set (minutes)",
	"bin/graphrag eval -dataset ../shared/datasets/hotpotqa -titles opaque -out eval-opaque.json -strategies bm25,dense,hybrid,graph,graph_path": "indexes the HotpotQA development set (minutes)",
	"scripts/integration/llm/install.sh && scripts/integration/llm/start.sh /tmp/llm > /tmp/llm/env.sh":                                          "installs and starts a model server",
	". /tmp/llm/env.sh": "the model server's environment",
	"bin/graphrag eval -dataset ../shared/datasets/hotpotqa -out e5-as-shipped.json -data-dir /tmp/e5-as-shipped -strategies bm25,dense,hybrid,graph,graph_path -llm-embed-base-url $GRAPHRAG_TEST_EMBED_BASE_URL -llm-embed-model $GRAPHRAG_TEST_EMBED_MODEL":        "needs the model server",
	"bin/graphrag eval -dataset ../shared/datasets/hotpotqa -titles opaque -out e5-opaque.json -data-dir /tmp/e5-opaque -strategies bm25,dense,hybrid,graph,graph_path -llm-embed-base-url $GRAPHRAG_TEST_EMBED_BASE_URL -llm-embed-model $GRAPHRAG_TEST_EMBED_MODEL": "needs the model server",
	"graphrag export -corpus demo -format parquet -out ./demo-parquet -data-dir .data/demo":                           "opens the stores, which the running graphrag up holds",
	"graphrag publish -nats-url nats://notes_publisher:$GRAPHRAG_NOTES_PASSWORD@127.0.0.1:4222 -corpus notes ~/notes": "needs the scoped nats-server of the line above; TestNATSPermissionsExample runs that configuration",
	"VERSION=0.1.0": "part of the image build below",
	"for s in extractor grapher summarizer query; do docker build -f services/$s/Dockerfile --build-arg VERSION=$VERSION -t ghcr.io/graphrag/$s:$VERSION .; done":                                                     "needs a Docker engine",
	"docker build -f cmd/graphrag/Dockerfile --build-arg VERSION=$VERSION -t ghcr.io/graphrag/graphrag:$VERSION .":                                                                                                    "needs a Docker engine",
	"nats-server -a 127.0.0.1 -p 4222 -js -sd /var/lib/nats-1 -n nats-1 --cluster_name graphrag --cluster nats://127.0.0.1:6222 --routes nats://127.0.0.1:6222,nats://127.0.0.1:6223,nats://127.0.0.1:6224 -m 8222 &": "a server of a 3-node NATS cluster on the standard ports (needs a nats-server binary)",
	"nats-server -a 127.0.0.1 -p 4223 -js -sd /var/lib/nats-2 -n nats-2 --cluster_name graphrag --cluster nats://127.0.0.1:6223 --routes nats://127.0.0.1:6222,nats://127.0.0.1:6223,nats://127.0.0.1:6224 -m 8223 &": "a server of a 3-node NATS cluster on the standard ports (needs a nats-server binary)",
	"nats-server -a 127.0.0.1 -p 4224 -js -sd /var/lib/nats-3 -n nats-3 --cluster_name graphrag --cluster nats://127.0.0.1:6224 --routes nats://127.0.0.1:6222,nats://127.0.0.1:6223,nats://127.0.0.1:6224 -m 8224 &": "a server of a 3-node NATS cluster on the standard ports (needs a nats-server binary)",
	"bin/graphrag up -nats-url nats://127.0.0.1:4222,nats://127.0.0.1:4223,nats://127.0.0.1:4224 -stream-replicas 3":                                                                                                  "graphrag up on the 3-node cluster above",
	`make chaos CHAOS_ARGS="-runs-up 0 -runs-nats 0 -runs-cluster 0 -runs-multi 0 -runs-rolling 5 -docs 60 -seed 20261129"`:                                                                                           "5 runs restarting every service of the multi-process layout under question load (20 minutes, Neo4j and Milvus)",
	`make chaos CHAOS_ARGS="-runs-up 0 -runs-nats 0 -runs-multi 0 -runs-rolling 0 -runs-cluster 20 -seed 20261129"`:                                                                                                   "20 runs killing NATS cluster nodes (16 minutes)",
	`make chaos CHAOS_ARGS="-runs-up 5 -runs-nats 3 -runs-multi 5 -runs-rolling 0 -runs-cluster 0 -seed 20261129"`:                                                                                                    "13 runs killing graphrag up, its NATS server and the multi-process layout (10 minutes)",
	"kubectl -n graphrag-dev port-forward svc/nats 4222 &":                       "needs the dev cluster",
	"bin/graphrag publish -nats-url nats://127.0.0.1:4222 -corpus notes ~/notes": "publishes to the dev cluster's NATS (the port-forward above)",
	"kubectl -n graphrag-dev port-forward svc/graphrag 8080 &":                   "needs the dev cluster",
	"bin/graphrag query -corpus notes \"Who keeps Gullhead Lighthouse?\"":        "asks the dev cluster (the port-forward above)",
	"nats pub graphrag.documents.handbook -H \"Nats-Msg-Id:handbook:leave-policy:req-41\" '{\"schema\":\"graphrag.document.v1\",\"corpus\":\"handbook\",\"id\":\"leave-policy\",\"title\":\"Leave policy\",\"text\":\"Employees accrue two days per month.\"}'": "needs the nats CLI",
	"nats req graphrag.documents.handbook -H \"Nats-Msg-Id:deleted:handbook:leave-policy:req-42\" '{\"schema\":\"graphrag.document.deleted.v1\",\"corpus\":\"handbook\",\"id\":\"leave-policy\",\"event_id\":\"req-42\"}'":                                      "needs the nats CLI",
	"GRAPHRAG_PIPELINE_PASSWORD=... GRAPHRAG_NOTES_PASSWORD=... nats-server -c deploy/nats/scoped-publish.conf":                                                                                                                                                 "needs the nats-server binary; deploy/nats's test runs this configuration",
	"go install github.com/google/ko@v0.18.1":                                       "ko builds images; make images-ko covers it",
	"export KO_CONFIG_PATH=deploy/ko KO_DOCKER_REPO=ghcr.io/graphrag VERSION=0.1.0": "ko's environment",
	"ko build --base-import-paths --tags \"$VERSION\" --platform linux/amd64,linux/arm64 ./services/extractor/cmd/extractor ./services/grapher/cmd/grapher ./services/summarizer/cmd/summarizer ./services/query/cmd/query ./cmd/graphrag":                                     "needs ko and a registry",
	"export KOCACHE=$HOME/.cache/ko KO_CONFIG_PATH=deploy/ko KO_DOCKER_REPO=ghcr.io/graphrag VERSION=0.1.0":                                                                                                                                                                    "ko's environment",
	"export KO_DEFAULTBASEIMAGE=$(cd deploy && GOWORK=off go run ./ko/localbase -cache \"$KOCACHE\")":                                                                                                                                                                          "ko's base image",
	"ko build --base-import-paths --tags \"$VERSION\" --push=false --platform linux/amd64 --tarball /tmp/graphrag-images.tar ./services/extractor/cmd/extractor ./services/grapher/cmd/grapher ./services/summarizer/cmd/summarizer ./services/query/cmd/query ./cmd/graphrag": "needs ko; make images-ko covers it",

	"graphrag prompt-tune -corpus demo -sample 8 -out demo-settings.yaml": "needs a chat model; the documented platform runs offline (TestExtractionSettingsEndToEnd runs it against a fake endpoint)",

	"make dataset-workplace": "generates the workplace development set (tools/gencorpus) into .data/, which git ignores",
	"bin/graphrag eval -dataset .data/datasets/workplace -out wp.json -strategies bm25,dense,hybrid,graph": "indexes the generated workplace set (minutes)",
}

// runnableDoc reports whether the test runs a command: the CLI, make targets that build,
// and curl against the API.
func runnableDoc(text string) bool {
	for _, p := range []string{"bin/graphrag ", "graphrag ", "curl ", "make run", "make build", "make docs"} {
		if strings.HasPrefix(text, p) {
			return true
		}
	}
	return false
}

// The documents' commands are all either run or explicitly skipped, and the skip list
// names only documented commands.
func TestDocCommandsAreAccountedFor(t *testing.T) {
	cmds, err := docCommands(repoRoot(t))
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]bool{}
	for _, c := range cmds {
		documented[c.text] = true
		if _, skipped := skippedDocCommands[c.text]; !skipped && !runnableDoc(c.text) {
			t.Errorf("%s: neither run by TestDocCommands nor in skippedDocCommands (with the reason)", c)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(skippedDocCommands)) {
		if !documented[k] {
			t.Errorf("skippedDocCommands lists %q, which no document has any more", k)
		}
	}
}

// TestDocCommands runs every command of the README and the docs as written, in a fresh
// clone of the repository (its committed HEAD), against the `graphrag up` that the
// README's `make run` starts: a document whose command breaks fails here. Commands that
// need something outside the repository are in skippedDocCommands. The HTTP and NATS
// ports are free ones instead of 8080 and 4222, so that the test runs beside other
// processes: the graphrag commands get them from the environment (GRAPHRAG_API,
// GRAPHRAG_NATS_URL; the server GRAPHRAG_HTTP_ADDR, GRAPHRAG_NATS_PORT), curl's
// "localhost:8080" is rewritten. "~" is a scratch home with the directories the commands
// publish.
func TestDocCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("clones the repository, builds it and runs graphrag up")
	}
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed")
	}
	root := repoRoot(t)
	clone := filepath.Join(t.TempDir(), "graphrag")
	if out, err := exec.Command(git, "clone", "--quiet", root, clone).CombinedOutput(); err != nil {
		t.Skipf("cannot clone %s (not a git checkout?): %v\n%s", root, err, out)
	}
	cmds, err := docCommands(clone)
	if err != nil {
		t.Fatal(err)
	}
	home := scratchHome(t)
	httpAddr, natsPort := scalingFreeAddr(t), crashFreePort(t)
	base := docEnv(t, home, clone)
	server := append(slices.Clone(base), "GRAPHRAG_HTTP_ADDR="+httpAddr, fmt.Sprintf("GRAPHRAG_NATS_PORT=%d", natsPort))
	client := append(slices.Clone(base), "GRAPHRAG_API=http://"+httpAddr, fmt.Sprintf("GRAPHRAG_NATS_URL=nats://127.0.0.1:%d", natsPort))

	var ran []string
	var up *docServer
	for _, c := range cmds {
		if _, skipped := skippedDocCommands[c.text]; skipped || !runnableDoc(c.text) {
			continue
		}
		if c.text == "make run" {
			up = startDocServer(t, clone, server)
			ran = append(ran, c.text)
			continue
		}
		if up == nil && !strings.HasPrefix(c.text, "make ") {
			t.Fatalf("%s: runs before `make run` started the platform", c)
		}
		text := strings.ReplaceAll(c.text, "localhost:8080", httpAddr)
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute) // a safety bound
		cmd := exec.CommandContext(ctx, "bash", "-c", text)
		cmd.Dir, cmd.Env = clone, client
		out, err := cmd.CombinedOutput()
		cancel()
		if err != nil {
			t.Errorf("%s\nfailed: %v\n%s", c, err, tail(string(out), 3000))
			continue
		}
		ran = append(ran, c.text)
	}
	t.Logf("ran %d documented commands: %q", len(ran), ran)
	if up == nil {
		t.Fatal("no document says `make run`: nothing started the platform")
	}
	up.stop(t)
}

// scratchHome is a home directory with what the documents publish from ~.
func scratchHome(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	files := map[string]string{
		"notes/lighthouse.md":      "# Lighthouse notes\n\nOrla Venn keeps Gullhead Lighthouse since 2004. She logs the weather at dawn.\n",
		"handbook/leave-policy.md": "# Leave policy\n\nEmployees accrue two days of leave per month. Mara Dunmore approves requests.\n",
		"hr-docs/onboarding.md":    "# Onboarding\n\nNew staff meet Mara Dunmore in their first week at the Marrow Bay office.\n",
	}
	for name, body := range files {
		p := filepath.Join(home, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return home
}

// docEnv is the environment of the documented commands: the scratch home, the Go caches
// kept (so the clone builds from the same module and build caches), the clone's bin/ on
// PATH, and no GRAPHRAG_ variable from outside.
func docEnv(t *testing.T, home, clone string) []string {
	t.Helper()
	env := []string{"HOME=" + home, "PATH=" + filepath.Join(clone, "bin") + string(os.PathListSeparator) + os.Getenv("PATH")}
	for _, v := range []string{"GOCACHE", "GOMODCACHE", "GOPATH", "GOPROXY", "GOFLAGS", "GOTOOLCHAIN"} {
		out, err := exec.Command("go", "env", v).Output()
		if err != nil {
			t.Fatalf("go env %s: %v", v, err)
		}
		if s := strings.TrimSpace(string(out)); s != "" {
			env = append(env, v+"="+s)
		}
	}
	for _, kv := range scalingEnv() {
		if k, _, _ := strings.Cut(kv, "="); k != "HOME" && k != "PATH" && !strings.HasPrefix(k, "GO") {
			env = append(env, kv)
		}
	}
	return env
}

// docServer is `make run` running in the background.
type docServer struct {
	cmd    *exec.Cmd
	out    *lockedBuffer
	exited chan error
}

func startDocServer(t *testing.T, clone string, env []string) *docServer {
	t.Helper()
	s := &docServer{out: &lockedBuffer{}, exited: make(chan error, 1)}
	s.cmd = exec.Command("make", "run")
	s.cmd.Dir, s.cmd.Env = clone, env
	s.cmd.Stdout, s.cmd.Stderr = s.out, s.out
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // make and graphrag, stopped together
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { s.exited <- s.cmd.Wait() }()
	t.Cleanup(func() {
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		if t.Failed() {
			t.Logf("make run:\n%s", tail(s.out.String(), 6000))
		}
	})
	deadline := time.Now().Add(8 * time.Minute) // building and indexing on a loaded machine
	for !strings.Contains(s.out.String(), "serving the query API") {
		select {
		case err := <-s.exited:
			t.Fatalf("make run exited (%v):\n%s", err, tail(s.out.String(), 6000))
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("make run did not start serving:\n%s", tail(s.out.String(), 6000))
		}
	}
	return s
}

// stop interrupts the platform as Ctrl-C does and waits for make to end.
func (s *docServer) stop(t *testing.T) {
	t.Helper()
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGINT)
	select {
	case <-s.exited: //nolint:errcheck // interrupted: make's exit error says nothing
	case <-time.After(2 * time.Minute):
		t.Error("make run did not stop after SIGINT")
	}
}
