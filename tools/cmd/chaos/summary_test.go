package main

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/graphrag/graphrag/pkg/storeoutage"
)

// updateDoc replaces the rows measured, keeps the others and what surrounds the block,
// and refuses a file without the block.
func TestUpdateDoc(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ops.md")
	before := "# Ops\n\ntext before\n\n" + summaryBegin + "\n" + summaryHeader +
		"| " + measureCluster + " | old target | 20 runs, all fine | yes | 2026-11-01, commit aaa |\n" +
		"| " + measureNeo4j + " | old | down 1 min | no | 2026-11-01 |\n" +
		summaryEnd + "\n\ntext after\n"
	if err := os.WriteFile(path, []byte(before), 0o644); err != nil {
		t.Fatal(err)
	}
	p := provenance{date: "2026-11-29", commit: "bbb", machine: "2 vCPU", command: "make chaos"}
	rows := []summaryRow{{measure: measureNeo4j, measured: "down 5m9s; 0 dead letters", met: true}}
	if err := updateDoc(path, rows, p); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	got := string(b)
	for _, want := range []string{
		"text before", "text after",
		"| " + measureCluster + " | old target | 20 runs, all fine | yes | 2026-11-01, commit aaa |",
		"| " + measureNeo4j + " | 0 dead letters, resumes within 30 s of recovery | down 5m9s; 0 dead letters | yes | 2026-11-29, commit bbb, 2 vCPU: `make chaos` |",
		"| " + measureShards + " | ≤ 0.4× | not measured yet | - | - |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in\n%s", want, got)
		}
	}
	if strings.Contains(got, "down 1 min") {
		t.Errorf("the old Neo4j row stayed:\n%s", got)
	}
	// Every target once, in order.
	var order []string
	for line := range strings.Lines(got) {
		for _, tg := range targets {
			if strings.HasPrefix(line, "| "+tg.measure+" |") {
				order = append(order, tg.measure)
			}
		}
	}
	want := make([]string, len(targets))
	for i, tg := range targets {
		want[i] = tg.measure
	}
	if !slices.Equal(order, want) {
		t.Errorf("rows %v, want %v", order, want)
	}

	if err := os.WriteFile(path, []byte("# no block\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := updateDoc(path, rows, p); err == nil || !strings.Contains(err.Error(), "chaos-summary") {
		t.Errorf("a file without the block: %v", err)
	}
}

// The outage row meets its target only with a 5-minute outage, no dead letter, a
// resumption within 30 s and an identical graph.
func TestOutageRow(t *testing.T) {
	good := func() runResult {
		return runResult{scenario: "outage Milvus", outage: &storeoutage.Report{Down: 5*time.Minute + 3*time.Second, Resumed: 4 * time.Second,
			Answers: []storeoutage.Answer{{Code: 503, RetryAfter: "10"}}}}
	}
	r := outageRow(good())
	if r.measure != measureMilvus || !r.met || !strings.Contains(r.measured, "1 × 503 (Retry-After 10)") {
		t.Errorf("%+v", r)
	}
	for name, change := range map[string]func(*runResult){
		"short outage":   func(r *runResult) { r.outage.Down = time.Minute },
		"slow to resume": func(r *runResult) { r.outage.Resumed = 31 * time.Second },
		"never resumed":  func(r *runResult) { r.outage.Resumed = -1 },
		"dead letters":   func(r *runResult) { r.deadLettered = 1 },
		"lost":           func(r *runResult) { r.diff = diff{lost: map[string]int{catEntities: 1}} },
	} {
		run := good()
		change(&run)
		if outageRow(run).met {
			t.Errorf("%s: met", name)
		}
	}
}

// The shards row: the most graphers' time over one grapher's.
func TestShardsRow(t *testing.T) {
	run := func(g int, took time.Duration, killed bool) runResult {
		return runResult{scenario: "shards", took: took, shard: &shardRun{graphers: g, corpora: 50, killed: killed}}
	}
	rep := scenarioReport{baseline: run(1, 100*time.Second, false),
		runs: []runResult{run(2, 70*time.Second, false), run(4, 38*time.Second, false), run(4, 45*time.Second, true)}}
	r := shardsRow(rep)
	if !r.met || !strings.Contains(r.measured, "4 vs 1: 0.38×") {
		t.Errorf("%+v", r)
	}
	rep.runs[1].took = 60 * time.Second
	if r := shardsRow(rep); r.met || !strings.Contains(r.measured, "4 vs 1: 0.60×") {
		t.Errorf("%+v", r)
	}
}

func TestParseCounts(t *testing.T) {
	for in, want := range map[string][]int{"": nil, "1,2,4": {1, 2, 4}, " 3 , 5": {3, 5}} {
		got, err := parseCounts(in)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("%q: %v %v, want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"0", "x", "1,-2"} {
		if _, err := parseCounts(in); err == nil {
			t.Errorf("%q: no error", in)
		}
	}
}

// Chunk ids compare by identity; two versions of one chunk stay two.
func TestIdentities(t *testing.T) {
	got := identities([]string{"d:1:bbb@12", "d:0:aaa@7", "d:0:aaa@9"})
	if want := []string{"d:0:aaa", "d:0:aaa", "d:1:bbb"}; !slices.Equal(got, want) {
		t.Errorf("%v, want %v", got, want)
	}
}

func TestProcCPU(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	if _, err := procCPU(strconvPid()); err != nil {
		t.Fatal(err)
	}
	if _, err := procCPU("0"); err == nil {
		t.Error("pid 0: no error")
	}
}

func strconvPid() string { return strconv.Itoa(os.Getpid()) }
