package embedded_test

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/graphrag/graphrag/pkg/vectorstore"
	"github.com/graphrag/graphrag/pkg/vectorstore/embedded"
)

const (
	crashEnv   = "GRAPHRAG_VECTORSTORE_CRASH_DIR"
	crashColl  = "crash_chunks"
	crashDim   = 8
	crashBatch = 10
	// crashGraphAt is the exact-scan threshold used by child and verifier.
	crashGraphAt = 50
)

// crashVec is the vector of record i, recomputable by the parent.
func crashVec(i int) []float32 {
	r := rand.New(rand.NewPCG(uint64(i), 99))
	v := make([]float32, crashDim)
	for j := range v {
		v[j] = float32(r.NormFloat64())
	}
	return v
}

func crashWord(i int) string { return "word" + strconv.Itoa(i) }

// crashChild runs in the child process: it writes batches forever, printing
// "ack N" after the Upsert of records < N returned, until it is killed.
func crashChild() bool {
	dir := os.Getenv(crashEnv)
	if dir == "" {
		return false
	}
	ctx := context.Background()
	// A low threshold puts the collection on the HNSW path, with snapshots
	// written while the child runs, so recovery covers graph reconciliation.
	s, err := embedded.Open(dir, embedded.WithExactThreshold(crashGraphAt), embedded.WithSnapshotEvery(25))
	if err != nil {
		fmt.Fprintln(os.Stderr, "open:", err)
		os.Exit(2)
	}
	if err := s.EnsureCollection(ctx, vectorstore.CollectionSpec{Name: crashColl, Dim: crashDim, Lexical: true}); err != nil {
		fmt.Fprintln(os.Stderr, "ensure:", err)
		os.Exit(2)
	}
	for n := 0; ; n += crashBatch {
		recs := make([]vectorstore.Record, crashBatch)
		for i := range recs {
			id := n + i
			recs[i] = vectorstore.Record{ID: fmt.Sprintf("c%06d", id), Vector: crashVec(id), Text: "crash test " + crashWord(id)}
		}
		if err := s.Upsert(ctx, crashColl, recs); err != nil {
			fmt.Fprintln(os.Stderr, "upsert:", err)
			os.Exit(2)
		}
		fmt.Printf("ack %d\n", n+crashBatch)
	}
}

// TestCrashRecovery kills a writer with SIGKILL and checks that every
// acknowledged record is present and searchable, densely and with BM25.
func TestCrashRecovery(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns a child process")
	}
	dir := t.TempDir()
	for round := range 2 { // the second round crashes a store recovered from a crash
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), crashEnv+"="+dir)
		cmd.Stderr = os.Stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatalf("starting child: %v", err)
		}
		acked := 0
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if n, ok := strings.CutPrefix(sc.Text(), "ack "); ok {
				acked, _ = strconv.Atoi(n)
			}
			if acked >= 120*(round+1) {
				break
			}
		}
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatalf("killing child: %v", err)
		}
		_ = cmd.Wait()
		if acked == 0 {
			t.Fatalf("round %d: the child acknowledged nothing", round)
		}
		verifyCrash(t, dir, acked)
	}
}

func verifyCrash(t *testing.T, dir string, acked int) {
	t.Helper()
	ctx := context.Background()
	// The child wrote HNSW snapshots: recovery loads one and reconciles it.
	if _, err := os.Stat(filepath.Join(dir, "collections", crashColl, "hnsw.snap")); err != nil {
		t.Fatalf("the child left no HNSW snapshot: %v", err)
	}
	// Every record and its open index entry were written together.
	if err := embedded.CheckOpenIndex(dir); err != nil {
		t.Fatalf("after kill -9: %v", err)
	}
	s, err := embedded.Open(dir, embedded.WithExactThreshold(crashGraphAt))
	if err != nil {
		t.Fatalf("reopening after kill -9: %v", err)
	}
	defer s.Close()
	n, err := s.Count(ctx, crashColl)
	if err != nil || n < acked {
		t.Fatalf("Count after crash = %d, %v; want at least the %d acknowledged", n, err, acked)
	}
	for i := range acked {
		id := fmt.Sprintf("c%06d", i)
		hits, err := s.Search(ctx, crashColl, crashVec(i), 1, vectorstore.Filter{})
		if err != nil || len(hits) != 1 || hits[0].ID != id {
			t.Fatalf("dense Search for acknowledged %s = %+v, %v", id, hits, err)
		}
		hits, err = s.SearchText(ctx, crashColl, crashWord(i), 1, vectorstore.Filter{})
		if err != nil || len(hits) != 1 || hits[0].ID != id {
			t.Fatalf("BM25 SearchText for acknowledged %s = %+v, %v", id, hits, err)
		}
	}
}
