// Command testlog reads `go test -json` on stdin, prints the tests' output as `go test -v`
// would, and fails when a real-backend test skipped: every such test skips when its
// server variable is unset, so a broken install or start step would otherwise pass as
// `ok`. scripts/integration/run.sh pipes every integration package through it:
//
//	go test -json -tags integration ./... | go run scripts/integration/testlog/main.go -backends "neo4j milvus llm"
//
// With every backend requested (the default run) any skip fails. With a subset
// (`run.sh neo4j`), a test may skip only when its skip message names a GRAPHRAG_TEST_
// variable that is unset here: the variable of a backend that was not started.
//
// It is a standalone program of the standard library, run with `go run` on its file
// (scripts/ belongs to no module); its test runs with
// `go test scripts/integration/testlog/main.go scripts/integration/testlog/main_test.go`.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strings"
)

// allBackends are the backends run.sh starts by default.
var allBackends = []string{"neo4j", "milvus", "llm"}

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Action  string
	Package string
	Test    string
	Output  string
}

// skip is a skipped test with what it printed.
type skip struct {
	Package, Test string
	Message       string
}

var varRE = regexp.MustCompile(`GRAPHRAG_TEST_[A-Z0-9_]+`)

func main() {
	backends := flag.String("backends", strings.Join(allBackends, " "), "the backends started, space-separated")
	flag.Parse()
	skips, err := scan(os.Stdin, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testlog:", err)
		os.Exit(2)
	}
	bad := judge(skips, strings.Fields(*backends), os.LookupEnv, os.Stderr)
	fmt.Fprintf(os.Stderr, "testlog: %d skipped test(s), %d not allowed\n", len(skips), bad)
	if bad > 0 {
		os.Exit(1)
	}
}

// scan copies the tests' output to out and returns the skipped tests.
func scan(in io.Reader, out io.Writer) ([]skip, error) {
	outputs := map[[2]string][]string{}
	var skips []skip
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			// Not an event (a build error printed by go test itself): pass it on.
			fmt.Fprintln(out, sc.Text())
			continue
		}
		key := [2]string{e.Package, e.Test}
		switch e.Action {
		case "output":
			fmt.Fprint(out, e.Output)
			if e.Test != "" {
				outputs[key] = append(outputs[key], e.Output)
			}
		case "skip":
			if e.Test != "" {
				skips = append(skips, skip{Package: e.Package, Test: e.Test, Message: message(outputs[key])})
			}
		}
		if e.Action == "pass" || e.Action == "fail" || e.Action == "skip" {
			delete(outputs, key)
		}
	}
	return skips, sc.Err()
}

// message is what the test logged, without go test's own lines.
func message(lines []string) string {
	var keep []string
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- ") {
			continue
		}
		keep = append(keep, t)
	}
	return strings.Join(keep, " | ")
}

// judge reports every skip to log and returns how many are not allowed.
func judge(skips []skip, backends []string, lookup func(string) (string, bool), log io.Writer) int {
	subset := !containsAll(backends, allBackends)
	sort.Slice(skips, func(i, j int) bool { return skips[i].Package+skips[i].Test < skips[j].Package+skips[j].Test })
	bad := 0
	for _, s := range skips {
		if subset && namesUnsetVariable(s.Message, lookup) {
			fmt.Fprintf(log, "testlog: skipped (its backend was not started): %s %s: %s\n", s.Package, s.Test, s.Message)
			continue
		}
		fmt.Fprintf(log, "testlog: SKIPPED, counted as a failure: %s %s: %s\n", s.Package, s.Test, s.Message)
		bad++
	}
	return bad
}

func namesUnsetVariable(msg string, lookup func(string) (string, bool)) bool {
	for _, v := range varRE.FindAllString(msg, -1) {
		if val, ok := lookup(v); !ok || val == "" {
			return true
		}
	}
	return false
}

func containsAll(have, want []string) bool {
	set := map[string]bool{}
	for _, h := range have {
		set[h] = true
	}
	for _, w := range want {
		if !set[w] {
			return false
		}
	}
	return true
}
