package main

import (
	"io"
	"strings"
	"testing"
)

// Output of `go test -json` for a package where one test passed, one skipped because the
// Milvus variable is unset, and a subtest skipped because the Neo4j one is.
const goTestJSON = `{"Action":"start","Package":"p"}
{"Action":"run","Package":"p","Test":"TestPass"}
{"Action":"output","Package":"p","Test":"TestPass","Output":"=== RUN   TestPass\n"}
{"Action":"output","Package":"p","Test":"TestPass","Output":"--- PASS: TestPass (0.00s)\n"}
{"Action":"pass","Package":"p","Test":"TestPass","Elapsed":0}
{"Action":"run","Package":"p","Test":"TestMilvus"}
{"Action":"output","Package":"p","Test":"TestMilvus","Output":"=== RUN   TestMilvus\n"}
{"Action":"output","Package":"p","Test":"TestMilvus","Output":"    m_test.go:20: GRAPHRAG_TEST_MILVUS_ADDR is not set: start a server\n"}
{"Action":"output","Package":"p","Test":"TestMilvus","Output":"--- SKIP: TestMilvus (0.00s)\n"}
{"Action":"skip","Package":"p","Test":"TestMilvus","Elapsed":0}
{"Action":"run","Package":"p","Test":"TestNeo4j/merge"}
{"Action":"output","Package":"p","Test":"TestNeo4j/merge","Output":"    n_test.go:28: GRAPHRAG_TEST_NEO4J_URI is not set\n"}
{"Action":"output","Package":"p","Test":"TestNeo4j/merge","Output":"    --- SKIP: TestNeo4j/merge (0.00s)\n"}
{"Action":"skip","Package":"p","Test":"TestNeo4j/merge","Elapsed":0}
{"Action":"output","Package":"p","Output":"ok  \tp\t0.1s\n"}
{"Action":"pass","Package":"p","Elapsed":0.1}
`

func TestSkipsFailTheRun(t *testing.T) {
	var out strings.Builder
	skips, err := scan(strings.NewReader(goTestJSON), &out)
	if err != nil {
		t.Fatal(err)
	}
	if len(skips) != 2 || skips[0].Test != "TestMilvus" || !strings.Contains(skips[0].Message, "GRAPHRAG_TEST_MILVUS_ADDR is not set") ||
		!strings.Contains(skips[1].Message, "GRAPHRAG_TEST_NEO4J_URI") {
		t.Fatalf("skips %+v", skips)
	}
	if !strings.Contains(out.String(), "--- SKIP: TestMilvus") || !strings.Contains(out.String(), "ok  \tp") {
		t.Errorf("the go test -v text is not passed on:\n%s", out.String())
	}
	unset := func(string) (string, bool) { return "", false }
	only := func(name string) func(string) (string, bool) {
		return func(v string) (string, bool) { return "x", v == name }
	}
	for _, tc := range []struct {
		name     string
		backends []string
		lookup   func(string) (string, bool)
		bad      int
	}{
		{"every backend requested: every skip fails", allBackends, unset, 2},
		{"a subset: skips of backends not started pass", []string{"llm"}, unset, 0},
		{"a subset: a skip whose variable is set fails", []string{"milvus"}, only("GRAPHRAG_TEST_MILVUS_ADDR"), 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := judge(skips, tc.backends, tc.lookup, io.Discard); got != tc.bad {
				t.Errorf("%d skips not allowed, want %d", got, tc.bad)
			}
		})
	}
	if got := judge(nil, allBackends, unset, io.Discard); got != 0 {
		t.Errorf("no skip: %d not allowed", got)
	}
}
