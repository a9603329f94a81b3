// Command chaos is the chaos suite (`make chaos`, not part of CI): it indexes a small
// corpus again and again, published in batches (so that detection runs replace
// communities), while killing processes with SIGKILL at random points, and compares
// everything each run indexed with an uninterrupted run:
//
//   - up: `graphrag up` (embedded NATS and stores) killed 1–3 times per run;
//   - nats: `graphrag up` on a NATS server of its own; the NATS server is killed and
//     started again 1–5 s later, 1–2 times per run;
//   - cluster: `graphrag up` on a 3-node JetStream cluster of its own, every stream and
//     bucket on 3 replicas; the leader of one of the pipeline's streams is killed, later
//     another node once the first is healthy again, each started again 1–5 s later;
//   - multi: a NATS server, 2 extractors, a grapher, a summarizer and a query service as
//     separate processes on Neo4j and Milvus; any of them killed 1–3 times per run and
//     started again 0–2 s later (the NATS server 1–5 s);
//   - rolling: the same with 2 query replicas, every service restarted one replica at a
//     time with SIGTERM as the manifests' update strategies do, while a load generator
//     asks questions through a model of a load balancer (rolling.go);
//   - outage: the multi-process layout while Neo4j, then Milvus, is stopped for 5
//     minutes and started again, questions asked meanwhile (outage.go, pkg/storeoutage);
//   - shards: the multi-process layout with 1, 2 and 4 graphers sharing 16 shards, 50
//     corpora published at once and timed, then one grapher killed (shards.go).
//
// A run passes when its index holds exactly what the uninterrupted run's holds (entities
// with mention counts, chunks and PageRank; relationships with weights and mentions;
// communities; reports; chunks; entity records; chunks by identity: document, position,
// text hash), every community has a report and no report a missing community, and
// nothing was dead-lettered (on the cluster, too, every stream the pipeline provisioned
// has 3 current replicas at the end). tools/cmd/chaos/run.sh builds the binaries and
// this command, starts Neo4j and Milvus for the multi-process layouts, and runs it. The
// suite ends with a summary of the reliability and scale targets (summary.go), which
// -doc writes into docs/operations.md.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/graphrag/graphrag/pkg/events"
)

type options struct {
	bin         string
	work        string
	dataset     string
	docs        int
	batches     int
	runsUp      int
	runsNATS    int
	runsMulti   int
	runsCluster int
	runsRolling int
	drainDelay  time.Duration
	lbLag       time.Duration
	extractors  int
	seed        uint64
	out         string
	neo4jURI    string
	milvusAddr  string
	runTimeout  time.Duration

	// Store outages (outage.go) and sharded graphers (shards.go).
	integrationDir string
	neo4jRunDir    string
	milvusRunDir   string
	outageNeo4j    time.Duration
	outageMilvus   time.Duration
	askEvery       time.Duration
	shardGraphers  []int
	shards         int
	shardCorpora   int
	shardDocs      int
	shardKill      bool

	// The summary (summary.go).
	doc     string
	command string
	// needsStores prints whether the scenarios chosen need Neo4j and Milvus, and exits.
	needsStores bool
}

// harness runs the scenarios.
type harness struct {
	opt    options
	corpus string
	docs   []events.Document
	pool   []events.Document // every document read (the shards scenario's corpora take theirs from it)
	log    *slog.Logger
	rng    *rand.Rand
}

func main() {
	var o options
	flag.StringVar(&o.bin, "bin", "bin", "directory with graphrag, extractor, grapher, summarizer, query and nats-server")
	flag.StringVar(&o.work, "work", "", "work directory (default: a new temporary one)")
	flag.StringVar(&o.dataset, "dataset", "/work/shared/datasets/hotpotqa/corpus.jsonl", "JSON lines of {id, title, text}")
	flag.IntVar(&o.docs, "docs", 120, "documents indexed per run (the first of the dataset)")
	flag.IntVar(&o.batches, "batches", 3, "batches the documents are published in (each makes detection replace communities)")
	flag.IntVar(&o.runsUp, "runs-up", 20, "runs killing graphrag up")
	flag.IntVar(&o.runsNATS, "runs-nats", 5, "runs killing the NATS server under graphrag up")
	flag.IntVar(&o.runsCluster, "runs-cluster", 20, "runs killing a stream leader, then another node, of a 3-node NATS cluster under graphrag up (every stream and bucket on 3 replicas)")
	flag.IntVar(&o.runsMulti, "runs-multi", 20, "runs killing processes of the multi-process layout (needs -neo4j-uri and -milvus-address)")
	flag.IntVar(&o.runsRolling, "runs-rolling", 5, "runs restarting every service of the multi-process layout one replica at a time under query load (needs -neo4j-uri and -milvus-address)")
	flag.DurationVar(&o.drainDelay, "drain-delay", 5*time.Second, "-drain-delay of the query replicas in rolling runs (the manifests' value)")
	flag.DurationVar(&o.lbLag, "lb-lag", time.Second, "rolling runs: the load balancer stops routing to a replica a random 0 to lb-lag after its SIGTERM")
	flag.IntVar(&o.extractors, "extractors", 2, "extractor processes in the multi-process layout")
	flag.Uint64Var(&o.seed, "seed", 0, "random seed (0: from the clock; the report names it)")
	flag.StringVar(&o.out, "out", "", "write the report (Markdown) here too")
	flag.StringVar(&o.neo4jURI, "neo4j-uri", "", "Neo4j Bolt URI for the multi-process layout")
	flag.StringVar(&o.milvusAddr, "milvus-address", "", "Milvus address for the multi-process layout")
	flag.DurationVar(&o.runTimeout, "run-timeout", 15*time.Minute, "longest a run may take to complete")
	flag.StringVar(&o.integrationDir, "integration-dir", "scripts/integration", "the store backends' scripts (start.sh, stop.sh), for the outage scenario")
	flag.StringVar(&o.neo4jRunDir, "neo4j-run-dir", "", "the run directory Neo4j was started in (scripts/integration/neo4j/start.sh RUN_DIR gds), for the outage scenario")
	flag.StringVar(&o.milvusRunDir, "milvus-run-dir", "", "the run directory Milvus was started in, for the outage scenario")
	flag.DurationVar(&o.outageNeo4j, "outage-neo4j", 5*time.Minute, "outage scenario: how long Neo4j is stopped while the multi-process layout indexes (0: no Neo4j outage)")
	flag.DurationVar(&o.outageMilvus, "outage-milvus", 5*time.Minute, "outage scenario: how long Milvus is stopped while the multi-process layout indexes (0: no Milvus outage)")
	flag.DurationVar(&o.askEvery, "outage-ask-every", 5*time.Second, "outage scenario: the pause between two questions asked during an outage")
	graphers := flag.String("shard-graphers", "1,2,4", "shards scenario: the grapher counts to time, comma-separated (empty: no shards scenario)")
	flag.IntVar(&o.shards, "shards", 16, "shards scenario: -shards of the graphers")
	flag.IntVar(&o.shardCorpora, "shard-corpora", 50, "shards scenario: corpora published at once")
	flag.IntVar(&o.shardDocs, "shard-docs", 6, "shards scenario: documents per corpus (corpus i gets the dataset's documents i×n to i×n+n-1)")
	flag.BoolVar(&o.shardKill, "shard-kill", true, "shards scenario: one more run with the most graphers, one of them killed with SIGKILL mid-run")
	flag.StringVar(&o.doc, "doc", "", "update the summary table between the chaos-summary markers of this Markdown file (docs/operations.md) with the rows measured")
	flag.StringVar(&o.command, "command", "", "the command line the summary names (default: this command's)")
	flag.BoolVar(&o.needsStores, "needs-stores", false, "print yes when the scenarios chosen need Neo4j and Milvus, no otherwise, and exit")
	flag.Parse()
	var err error
	if o.shardGraphers, err = parseCounts(*graphers); err != nil {
		fmt.Fprintln(os.Stderr, "chaos: -shard-graphers:", err)
		os.Exit(2)
	}
	if o.needsStores {
		if o.storesNeeded() {
			fmt.Println("yes")
		} else {
			fmt.Println("no")
		}
		return
	}
	if o.command == "" {
		o.command = strings.Join(os.Args, " ")
	}
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "chaos:", err)
		os.Exit(1)
	}
}

func run(o options) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	loadStart, commit := loadAverage(), gitCommit()
	if o.batches < 1 {
		o.batches = 1
	}
	if o.seed == 0 {
		o.seed = uint64(time.Now().UnixNano())
	}
	if o.work == "" {
		dir, err := os.MkdirTemp("", "graphrag-chaos-")
		if err != nil {
			return err
		}
		o.work = dir
	}
	h := &harness{opt: o, corpus: "chaos", log: slog.New(slog.NewTextHandler(os.Stderr, nil)),
		rng: rand.New(rand.NewPCG(o.seed, o.seed^0x9e3779b97f4a7c15))}
	n := o.docs
	if len(o.shardGraphers) > 0 {
		n = max(n, o.shardCorpora*o.shardDocs)
	}
	pool, err := loadDocs(o.dataset, h.corpus, n)
	if err != nil {
		return err
	}
	docs := pool[:min(o.docs, len(pool))]
	h.docs, h.pool = docs, pool
	h.log.Info("chaos suite", "seed", o.seed, "work", o.work, "documents", len(docs))
	var reports []scenarioReport
	if o.runsUp+o.runsNATS+o.runsCluster > 0 {
		reports = append(reports, h.upScenarios(ctx)...)
	}
	if o.runsMulti > 0 {
		if o.neo4jURI == "" || o.milvusAddr == "" {
			return fmt.Errorf("-runs-multi %d needs -neo4j-uri and -milvus-address", o.runsMulti)
		}
		reports = append(reports, h.multiScenario(ctx))
	}
	if o.runsRolling > 0 {
		if o.neo4jURI == "" || o.milvusAddr == "" {
			return fmt.Errorf("-runs-rolling %d needs -neo4j-uri and -milvus-address", o.runsRolling)
		}
		reports = append(reports, h.rollingScenario(ctx))
	}
	if o.outageNeo4j > 0 || o.outageMilvus > 0 {
		if o.neo4jURI == "" || o.milvusAddr == "" || (o.outageNeo4j > 0 && o.neo4jRunDir == "") || (o.outageMilvus > 0 && o.milvusRunDir == "") {
			return errors.New("the outage scenario needs -neo4j-uri, -milvus-address and the run directory of each store it stops (-neo4j-run-dir, -milvus-run-dir)")
		}
		reports = append(reports, h.outageScenario(ctx))
	}
	if len(o.shardGraphers) > 0 {
		if o.neo4jURI == "" || o.milvusAddr == "" {
			return errors.New("the shards scenario needs -neo4j-uri and -milvus-address")
		}
		if o.shards < 1 || o.shardCorpora < 1 || o.shardDocs < 1 {
			return fmt.Errorf("the shards scenario needs -shards, -shard-corpora and -shard-docs of at least 1 (got %d, %d, %d)", o.shards, o.shardCorpora, o.shardDocs)
		}
		reports = append(reports, h.shardsScenario(ctx))
	}
	text := renderReport(o, len(docs), reports)
	rows := summaryRows(reports)
	prov := measureProvenance(o.command, commit, loadStart)
	text += "\n" + renderSummary(rows, prov)
	fmt.Print(text)
	if o.doc != "" {
		if err := updateDoc(o.doc, rows, prov); err != nil {
			return err
		}
	}
	if o.out != "" {
		if err := os.WriteFile(o.out, []byte(text), 0o644); err != nil {
			return err
		}
	}
	for _, r := range reports {
		if r.failed() {
			return fmt.Errorf("scenario %s failed (logs under %s)", r.name, o.work)
		}
	}
	return nil
}

// storesNeeded reports whether a scenario chosen runs the multi-process layout.
func (o options) storesNeeded() bool {
	return o.runsMulti > 0 || o.runsRolling > 0 || o.outageNeo4j > 0 || o.outageMilvus > 0 || len(o.shardGraphers) > 0
}

// parseCounts reads a comma-separated list of positive counts ("" is none).
func parseCounts(s string) ([]int, error) {
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%q is not a count of at least 1", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// loadDocs reads the first n documents of a JSON lines file of {id, title, text}.
func loadDocs(path, corpus string, n int) ([]events.Document, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("opening the dataset: %w", err)
	}
	defer f.Close()
	var docs []events.Document
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 16<<20)
	for sc.Scan() && len(docs) < n {
		var rec struct{ ID, Title, Text string }
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			return nil, fmt.Errorf("reading the dataset: %w", err)
		}
		docs = append(docs, events.Document{Corpus: corpus, ID: rec.ID, Title: rec.Title,
			ContentType: events.ContentTypeText, Text: rec.Text})
	}
	if err := sc.Err(); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("reading the dataset: %w", err)
	}
	if len(docs) == 0 {
		return nil, fmt.Errorf("no document in %s", path)
	}
	return docs, nil
}

// withCorpus returns the documents for another corpus.
func (h *harness) withCorpus(corpus string) []events.Document {
	out := make([]events.Document, len(h.docs))
	for i, d := range h.docs {
		d.Corpus = corpus
		out[i] = d
	}
	return out
}

func join(xs []string) string {
	if len(xs) == 0 {
		return "-"
	}
	return strings.Join(xs, ", ")
}
