package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/pkg/graphstore/boltgraph"
	"github.com/graphrag/graphrag/pkg/graphstore/neo4jgraph"
	"github.com/graphrag/graphrag/pkg/natsembed"
	"github.com/graphrag/graphrag/pkg/pipeline"
	"github.com/graphrag/graphrag/pkg/schema"
	"github.com/graphrag/graphrag/pkg/vectorstore/embedded"
	"github.com/graphrag/graphrag/pkg/vectorstore/milvusstore"
)

// layout is one way of running the platform: its processes, the ones the suite may
// kill, and how to read what it indexed.
type layout interface {
	start(ctx context.Context) error
	natsURL() string
	victims() []*proc
	all() []*proc
	// stop ends every process with SIGTERM (all stop cleanly or it fails).
	stop() error
	// dump reads what the run indexed, after stop.
	dump(ctx context.Context) (dump, error)
}

// Runs compare communities with the uninterrupted run's, so the graphers detect them
// cold (-detect-warm=false): a warm-started hierarchy depends on the order in which
// documents were merged, which kills change (ADR 0042).
//
// ackWaits make what a killed process held come back after 3 s instead of a minute
// (live handlers extend it), as the crash test does.
var ackWaits = map[string][]string{
	"up":         {"-chunker-ack-wait", "3s", "-extract-ack-wait", "3s", "-grapher-ack-wait", "3s", "-summarizer-ack-wait", "3s"},
	"extractor":  {"-chunker-ack-wait", "3s", "-extract-ack-wait", "3s"},
	"grapher":    {"-grapher-ack-wait", "3s"},
	"summarizer": {"-summarizer-ack-wait", "3s"},
	"query":      nil,
}

func between(lo, hi time.Duration) func() time.Duration {
	return func() time.Duration { return lo + rand.N(hi-lo+1) }
}

// natsProc is a NATS server with JetStream on port, its store in dir/name.
func (h *harness) natsProc(dir, name string, port int, extra ...string) *proc {
	addr := "127.0.0.1:" + strconv.Itoa(port)
	return &proc{name: name, bin: filepath.Join(h.opt.bin, "nats-server"),
		args:    append([]string{"-a", "127.0.0.1", "-p", strconv.Itoa(port), "-js", "-sd", filepath.Join(dir, name)}, extra...),
		logPath: filepath.Join(dir, name+".log"), ready: listening(addr), restartDelay: between(time.Second, 5*time.Second)}
}

// clusterProcs are three NATS servers routed into one JetStream cluster on loopback,
// each with its own store, client, route and monitoring port. A server is ready once its
// /healthz says it is current with the cluster (JetStream's meta group and every stream
// and consumer it holds), so none is ready before a meta leader exists.
func (h *harness) clusterProcs(dir string, size int) ([]*proc, []int, error) {
	ports, err := natsembed.FreePorts(3 * size)
	if err != nil {
		return nil, nil, err
	}
	client, route, monitor := ports[:size], ports[size:2*size], ports[2*size:]
	routes := make([]string, size)
	for i, p := range route {
		routes[i] = "nats://127.0.0.1:" + strconv.Itoa(p)
	}
	procs := make([]*proc, size)
	for i := range size {
		name := "nats-" + strconv.Itoa(i+1)
		procs[i] = h.natsProc(dir, name, client[i], "-n", name, "--cluster_name", "graphrag",
			"--cluster", routes[i], "--routes", strings.Join(routes, ","), "-m", strconv.Itoa(monitor[i]))
		procs[i].ready = healthz("127.0.0.1:" + strconv.Itoa(monitor[i]))
	}
	return procs, client, nil
}

// upLayout is `graphrag up` on its embedded stores: with its embedded NATS server (the
// suite kills up), or with NATS servers of its own, one or a cluster of three with every
// stream and bucket on three replicas (the suite kills NATS servers).
type upLayout struct {
	h     *harness
	dir   string
	ports []int // the client ports of the NATS servers (of up's embedded one, or of nats)
	nats  []*proc
	up    *proc
	// killed are the servers the suite has killed so far in this run (cluster).
	killed []*proc
}

// newUpLayout makes the layout with servers NATS servers of its own (0: up's embedded
// one; 3: a cluster).
func (h *harness) newUpLayout(dir string, servers int) (*upLayout, error) {
	ports, err := natsembed.FreePorts(2)
	if err != nil {
		return nil, err
	}
	l := &upLayout{h: h, dir: dir, ports: ports[:1]}
	httpAddr := "127.0.0.1:" + strconv.Itoa(ports[1])
	args := []string{"up", "-data-dir", filepath.Join(dir, "data"), "-http-addr", httpAddr, "-log-level", "warn",
		"-log-format", "text", "-detect-debounce", "300ms", "-detect-warm=false", "-shutdown-timeout", "20s"}
	switch servers {
	case 0:
		args = append(args, "-nats-port", strconv.Itoa(l.ports[0]))
	case 1:
		l.nats = []*proc{h.natsProc(dir, "nats", l.ports[0])}
		args = append(args, "-nats-url", l.natsURL())
	default:
		if l.nats, l.ports, err = h.clusterProcs(dir, servers); err != nil {
			return nil, err
		}
		args = append(args, "-nats-url", l.natsURL(), "-stream-replicas", strconv.Itoa(servers))
	}
	l.up = &proc{name: "up", bin: filepath.Join(h.opt.bin, "graphrag"), args: append(args, ackWaits["up"]...),
		logPath: filepath.Join(dir, "up.log"), ready: readyz(httpAddr), restartDelay: between(0, 500*time.Millisecond)}
	return l, nil
}

// natsURL lists every server of the layout, as a client of a cluster is configured.
func (l *upLayout) natsURL() string {
	urls := make([]string, len(l.ports))
	for i, p := range l.ports {
		urls[i] = "nats://127.0.0.1:" + strconv.Itoa(p)
	}
	return strings.Join(urls, ",")
}

func (l *upLayout) all() []*proc { return append(slices.Clone(l.nats), l.up) }

func (l *upLayout) victims() []*proc {
	if len(l.nats) > 0 {
		return l.nats
	}
	return []*proc{l.up}
}

func (l *upLayout) start(ctx context.Context) error {
	if len(l.nats) < 2 {
		return startAll(ctx, l.all())
	}
	// The servers of a cluster are ready together (a meta leader needs a quorum).
	for _, p := range l.nats {
		if err := p.start(); err != nil {
			return err
		}
	}
	wctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	for _, p := range l.nats {
		if err := p.waitReady(wctx); err != nil {
			return err
		}
	}
	return startAll(ctx, []*proc{l.up})
}

func (l *upLayout) stop() error {
	// up first: its bus must not lose the servers while it drains.
	err := l.up.stop(30 * time.Second)
	for _, p := range l.nats {
		err = errors.Join(err, p.stop(10*time.Second))
	}
	return err
}

func (l *upLayout) dump(ctx context.Context) (dump, error) {
	g, err := boltgraph.Open(filepath.Join(l.dir, "data", "graph.db"))
	if err != nil {
		return nil, fmt.Errorf("opening the graph of %s: %w", l.dir, err)
	}
	defer g.Close()
	if err := g.Check(ctx); err != nil {
		return nil, fmt.Errorf("fsck of the graph of %s: %w", l.dir, err)
	}
	v, err := embedded.Open(filepath.Join(l.dir, "data", "vectors"))
	if err != nil {
		return nil, fmt.Errorf("opening the vectors of %s: %w", l.dir, err)
	}
	defer v.Close()
	return dumpStores(ctx, g, v, l.h.corpus)
}

// multiLayout is the production layout on one machine: a NATS server, extractors, a
// grapher, a summarizer and a query service as separate processes, on Neo4j and Milvus
// (shared by every run; each run indexes its own corpus).
type multiLayout struct {
	h      *harness
	dir    string
	port   int
	corpus string
	nats   *proc
	procs  []*proc // the services
}

func (h *harness) newMultiLayout(dir, corpus string) (*multiLayout, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	l := &multiLayout{h: h, dir: dir, port: port, corpus: corpus}
	l.nats = h.natsProc(dir, "nats", port)
	names := []string{"grapher", "summarizer", "query"}
	for i := range h.opt.extractors {
		names = append(names, "extractor-"+strconv.Itoa(i+1))
	}
	for _, name := range names {
		bin := name
		if strings.HasPrefix(name, "extractor") {
			bin = "extractor"
		}
		p, err := l.serviceProc(name, bin)
		if err != nil {
			return nil, err
		}
		l.procs = append(l.procs, p)
	}
	return l, nil
}

// serviceProc is one process of service bin named name, with a data dir, log and HTTP
// port of its own, on the layout's NATS server, Neo4j and Milvus.
func (l *multiLayout) serviceProc(name, bin string) (*proc, error) {
	h := l.h
	vectors := []string{"-vector-store", "milvus", "-milvus-address", h.opt.milvusAddr}
	graph := []string{"-graph-store", "neo4j", "-neo4j-uri", h.opt.neo4jURI, "-neo4j-user", "neo4j"}
	httpPort, err := freePort()
	if err != nil {
		return nil, err
	}
	httpAddr := "127.0.0.1:" + strconv.Itoa(httpPort)
	args := append([]string{"-nats-url", l.natsURL(), "-data-dir", filepath.Join(l.dir, name), "-http-addr", httpAddr,
		"-log-level", "warn", "-log-format", "text", "-shutdown-timeout", "20s"}, vectors...)
	if bin != "extractor" { // the extractor has no graph store, and no flag for one
		args = append(args, graph...)
	}
	if bin == "grapher" {
		args = append(args, "-detect-debounce", "300ms", "-detect-warm=false")
	}
	return &proc{name: name, bin: filepath.Join(h.opt.bin, bin), args: append(args, ackWaits[bin]...),
		logPath: filepath.Join(l.dir, name+".log"), ready: readyz(httpAddr), restartDelay: between(0, 2*time.Second)}, nil
}

func (l *multiLayout) natsURL() string                 { return "nats://127.0.0.1:" + strconv.Itoa(l.port) }
func (l *multiLayout) all() []*proc                    { return append([]*proc{l.nats}, l.procs...) }
func (l *multiLayout) victims() []*proc                { return l.all() }
func (l *multiLayout) start(ctx context.Context) error { return startAll(ctx, l.all()) }

func (l *multiLayout) stop() error {
	var err error
	for _, p := range l.procs {
		err = errors.Join(err, p.stop(30*time.Second))
	}
	return errors.Join(err, l.nats.stop(10*time.Second))
}

func (l *multiLayout) dump(ctx context.Context) (dump, error) {
	ds, err := l.h.dumpCorpora(ctx, []string{l.corpus})
	if err != nil {
		return nil, err
	}
	return ds[0], nil
}

// drop removes the layout's corpus from the shared stores.
func (l *multiLayout) drop(ctx context.Context) error {
	return l.h.dropCorpora(ctx, []string{l.corpus})
}

// openStores opens the shared Neo4j and Milvus of the multi-process layouts.
func (h *harness) openStores(ctx context.Context) (*neo4jgraph.Store, *milvusstore.Store, error) {
	g, err := neo4jgraph.Open(ctx, h.opt.neo4jURI, neo4jgraph.WithBasicAuth("neo4j", ""))
	if err != nil {
		return nil, nil, fmt.Errorf("opening Neo4j: %w", err)
	}
	v, err := milvusstore.Open(ctx, h.opt.milvusAddr)
	if err != nil {
		_ = g.Close()
		return nil, nil, fmt.Errorf("opening Milvus: %w", err)
	}
	return g, v, nil
}

// dumpCorpora reads what the multi-process layout indexed of each corpus.
func (h *harness) dumpCorpora(ctx context.Context, corpora []string) ([]dump, error) {
	g, v, err := h.openStores(ctx)
	if err != nil {
		return nil, err
	}
	defer g.Close()
	defer v.Close()
	out := make([]dump, len(corpora))
	for i, c := range corpora {
		if out[i], err = dumpStores(ctx, g, v, c); err != nil {
			return nil, fmt.Errorf("corpus %s: %w", c, err)
		}
	}
	return out, nil
}

// dropCorpora removes corpora from the shared stores.
func (h *harness) dropCorpora(ctx context.Context, corpora []string) error {
	g, v, err := h.openStores(ctx)
	if err != nil {
		return err
	}
	defer g.Close()
	defer v.Close()
	var errs []error
	for _, c := range corpora {
		errs = append(errs, g.DropCorpus(ctx, c))
		for _, k := range []schema.Kind{schema.Chunks, schema.Entities, schema.Communities} {
			errs = append(errs, v.DropCollection(ctx, schema.Collection(c, k)))
		}
	}
	return errors.Join(errs...)
}

// startAll starts the processes in order, each once the one before serves.
func startAll(ctx context.Context, procs []*proc) error {
	for _, p := range procs {
		if err := p.start(); err != nil {
			return err
		}
		wctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
		err := p.waitReady(wctx)
		cancel()
		if err != nil {
			return err
		}
	}
	return nil
}

// A cluster layout chooses its victims itself and checks its replicas at the end.
type clustered interface {
	// pick returns the next server to kill and why it was chosen, or nil to choose at
	// random among the victims.
	pick(ctx context.Context, b *bus.Bus, rng *rand.Rand) (*proc, string)
	// checkReplicas fails unless everything the pipeline provisioned is replicated on
	// every server of the cluster, and every replica is current.
	checkReplicas(ctx context.Context, b *bus.Bus) error
}

var _ clustered = (*upLayout)(nil)

// pick chooses, on a cluster, first the leader of one of the pipeline's event streams
// (at random), then any server but the one killed last, once that one is healthy again:
// the cluster loses one node at a time, which a replication factor of 3 survives.
func (l *upLayout) pick(ctx context.Context, b *bus.Bus, rng *rand.Rand) (*proc, string) {
	if len(l.nats) < 2 {
		return nil, ""
	}
	if len(l.killed) == 0 {
		stream := pipeline.StreamName(events.Kinds[rng.IntN(len(events.Kinds))])
		if p := l.streamLeader(ctx, b, stream); p != nil {
			l.killed = append(l.killed, p)
			return p, "leader of " + stream
		}
		l.h.log.Warn("no leader found; killing a server at random", "stream", stream)
		p := l.nats[rng.IntN(len(l.nats))]
		l.killed = append(l.killed, p)
		return p, ""
	}
	last := l.killed[len(l.killed)-1]
	wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	err := last.waitReady(wctx)
	cancel()
	if err != nil {
		l.h.log.Warn("the server killed last is not healthy again; killing another all the same", "server", last.name, "err", err)
	}
	others := slices.DeleteFunc(slices.Clone(l.nats), func(p *proc) bool { return p == last })
	p := others[rng.IntN(len(others))]
	l.killed = append(l.killed, p)
	return p, ""
}

// streamLeader is the server leading stream, asked for up to 15 s (nil: none found).
func (l *upLayout) streamLeader(ctx context.Context, b *bus.Bus, stream string) *proc {
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		ictx, cancel := context.WithTimeout(ctx, 5*time.Second)
		leader := ""
		if s, err := b.JetStream().Stream(ictx, stream); err == nil {
			if info, err := s.Info(ictx); err == nil && info.Cluster != nil {
				leader = info.Cluster.Leader
			}
		}
		cancel()
		for _, p := range l.nats {
			if p.name == leader {
				return p
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	return nil
}

// checkReplicas waits up to a minute for every stream of the pipeline (the streams
// behind its key-value buckets and object store included) to have one current replica on
// every server; on anything but a cluster it checks nothing.
func (l *upLayout) checkReplicas(ctx context.Context, b *bus.Bus) error {
	if len(l.nats) < 2 {
		return nil
	}
	deadline := time.Now().Add(time.Minute)
	for {
		problems, err := l.replicaProblems(ctx, b)
		if err == nil && len(problems) == 0 {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			if err != nil {
				return fmt.Errorf("checking replicas: %w", err)
			}
			return fmt.Errorf("replicas: %s", strings.Join(problems, "; "))
		}
		time.Sleep(time.Second)
	}
}

// pipelineStreams are the streams the pipeline provisions: its event streams and dead
// letters, and the streams behind its key-value buckets and object store.
var pipelineStreams = func() []string {
	names := []string{pipeline.DLQStream, "KV_" + schema.StateBucket, "KV_" + schema.LLMCacheBucket,
		"KV_" + schema.LeaseBucket, "OBJ_" + schema.DocumentBucket}
	for _, k := range events.Kinds {
		names = append(names, pipeline.StreamName(k))
	}
	return names
}()

func (l *upLayout) replicaProblems(ctx context.Context, b *bus.Bus) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var problems []string
	seen := map[string]bool{}
	list := b.JetStream().ListStreams(ctx)
	for info := range list.Info() {
		name := info.Config.Name
		if !slices.Contains(pipelineStreams, name) {
			continue
		}
		seen[name] = true
		if info.Config.Replicas != len(l.nats) {
			problems = append(problems, fmt.Sprintf("%s has %d replicas", name, info.Config.Replicas))
			continue
		}
		if info.Cluster == nil || info.Cluster.Leader == "" {
			problems = append(problems, name+" has no leader")
			continue
		}
		current := 1 // the leader
		for _, r := range info.Cluster.Replicas {
			if r.Current && !r.Offline {
				current++
			}
		}
		if current != len(l.nats) {
			problems = append(problems, fmt.Sprintf("%s has %d current replicas of %d", name, current, len(l.nats)))
		}
	}
	if err := list.Err(); err != nil {
		return nil, err
	}
	for _, name := range pipelineStreams {
		if !seen[name] {
			problems = append(problems, name+" is missing")
		}
	}
	return problems, nil
}
