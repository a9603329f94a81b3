package boltgraph

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
	"testing"

	"github.com/graphrag/graphrag/pkg/graphstore"
)

const (
	crashChildEnv = "BOLTGRAPH_CRASH_CHILD" // path of the store the child writes
	crashStartEnv = "BOLTGRAPH_CRASH_START" // first batch number the child merges
	crashChunks   = 25                      // chunks per batch
	crashCorpus   = "crash"
)

// crashBatch is batch n: a marker entity only its first chunk mentions, chunks
// sharing entities with earlier batches, and a re-extraction of a chunk of batch
// n-1 so that replace semantics are exercised when the kill lands.
func crashBatch(n int) []graphstore.ChunkExtraction {
	var batch []graphstore.ChunkExtraction
	for j := range crashChunks {
		ents := []graphstore.EntityMention{{Key: fmt.Sprintf("shared-%d", (n+j)%17), Name: "Shared", Type: "t", Description: fmt.Sprintf("d%d", j%5)}}
		if j == 0 {
			ents = append(ents, graphstore.EntityMention{Key: fmt.Sprintf("marker-%d", n), Name: "Marker"})
		}
		batch = append(batch, graphstore.ChunkExtraction{
			ChunkID: fmt.Sprintf("b%05d-c%02d", n, j), DocumentID: fmt.Sprintf("doc-%d", n),
			Entities: ents,
			Relations: []graphstore.RelationMention{
				{SourceKey: fmt.Sprintf("shared-%d", (n+j)%17), TargetKey: fmt.Sprintf("shared-%d", (n+j+3)%17), Strength: float64(1 + j%3)},
				{SourceKey: fmt.Sprintf("shared-%d", (n+j)%17), TargetKey: fmt.Sprintf("leaf-%d-%d", n, j)},
			},
		})
	}
	if n > 0 {
		batch = append(batch, graphstore.ChunkExtraction{
			ChunkID:  fmt.Sprintf("b%05d-c01", n-1),
			Entities: []graphstore.EntityMention{{Key: fmt.Sprintf("redo-%d", n-1), Name: "Redo"}},
		})
	}
	return batch
}

// crashChild merges batches until killed, printing each acknowledged one.
func crashChild() int {
	start, err := strconv.Atoi(os.Getenv(crashStartEnv))
	if err != nil {
		fmt.Fprintln(os.Stderr, "crash child: bad start:", err)
		return 2
	}
	s, err := Open(os.Getenv(crashChildEnv))
	if err != nil {
		fmt.Fprintln(os.Stderr, "crash child:", err)
		return 2
	}
	for n := start; n < start+100000; n++ {
		if err := s.Merge(context.Background(), crashCorpus, crashBatch(n)); err != nil {
			fmt.Fprintln(os.Stderr, "crash child:", err)
			return 2
		}
		fmt.Fprintf(os.Stdout, "ack %d\n", n) // os.Stdout is unbuffered: written means acknowledged
	}
	return 0
}

func TestCrashRecovery(t *testing.T) {
	if testing.Short() {
		t.Skip("runs child processes")
	}
	path := filepath.Join(t.TempDir(), "crash.db")
	rng := rand.New(rand.NewPCG(1, 2))
	acked := -1
	for round := range 3 {
		killAfter := 5 + rng.IntN(20)
		t.Run(fmt.Sprintf("round%d", round), func(t *testing.T) {
			cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), crashChildEnv+"="+path, crashStartEnv+"="+strconv.Itoa(acked+1))
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatalf("starting child: %v", err)
			}
			sc := bufio.NewScanner(stdout)
			seen, killed := 0, false
			for sc.Scan() {
				var n int
				if _, err := fmt.Sscanf(sc.Text(), "ack %d", &n); err != nil {
					t.Fatalf("child said %q", sc.Text())
				}
				if n != acked+1 {
					t.Fatalf("child acknowledged batch %d after %d", n, acked)
				}
				acked = n
				if seen++; seen == killAfter && !killed {
					// SIGKILL: no deferred code, no Close; the next Merge is mid-flight.
					if err := cmd.Process.Kill(); err != nil {
						t.Fatalf("killing child: %v", err)
					}
					killed = true
				}
			}
			err = cmd.Wait()
			if !killed {
				t.Fatalf("child ended before it was killed: %v; stderr: %s", err, stderr.String())
			}
			verifyCrashStore(t, path, acked)
		})
	}
}

func verifyCrashStore(t *testing.T, path string, acked int) {
	t.Helper()
	s, err := Open(path)
	if err != nil {
		t.Fatalf("reopening after kill: %v", err)
	}
	defer s.Close()
	ctx := t.Context()
	if err := s.Check(ctx); err != nil {
		t.Fatalf("store inconsistent after kill: %v", err)
	}
	st, err := s.Stats(ctx, crashCorpus)
	if err != nil {
		t.Fatal(err)
	}
	// The batch in flight at the kill may or may not have been committed.
	if min, max := (acked+1)*crashChunks, (acked+2)*crashChunks; st.Chunks < min || st.Chunks > max {
		t.Fatalf("%d chunks stored, want %d..%d after %d acknowledged batches", st.Chunks, min, max, acked+1)
	}
	for n := 0; n <= acked; n++ {
		e, err := s.Entity(ctx, crashCorpus, fmt.Sprintf("marker-%d", n))
		if err != nil {
			t.Fatalf("acknowledged batch %d lost: %v", n, err)
		}
		if want := []string{fmt.Sprintf("b%05d-c00", n)}; len(e.ChunkIDs) != 1 || e.ChunkIDs[0] != want[0] {
			t.Fatalf("marker-%d chunks = %v, want %v", n, e.ChunkIDs, want)
		}
		if n > 0 {
			if _, err := s.Entity(ctx, crashCorpus, fmt.Sprintf("redo-%d", n-1)); err != nil {
				t.Fatalf("re-extraction in acknowledged batch %d lost: %v", n, err)
			}
		}
	}
}
