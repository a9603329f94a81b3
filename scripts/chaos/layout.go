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

	"github.com/graphrag/graphrag/pkg/graphstore/boltgraph"
	"github.com/graphrag/graphrag/pkg/graphstore/neo4jgraph"
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
	ports, err := freePorts(3 * size)
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
	ports, err := freePorts(2)
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
	stores := []string{"-graph-store", "neo4j", "-neo4j-uri", h.opt.neo4jURI, "-neo4j-user", "neo4j",
		"-vector-store", "milvus", "-milvus-address", h.opt.milvusAddr}
	names := []string{"grapher", "summarizer", "query"}
	for i := range h.opt.extractors {
		names = append(names, "extractor-"+strconv.Itoa(i+1))
	}
	for _, name := range names {
		bin := name
		if len(name) > 9 && name[:9] == "extractor" {
			bin = "extractor"
		}
		httpPort, err := freePort()
		if err != nil {
			return nil, err
		}
		httpAddr := "127.0.0.1:" + strconv.Itoa(httpPort)
		args := append([]string{"-nats-url", l.natsURL(), "-data-dir", filepath.Join(dir, name), "-http-addr", httpAddr,
			"-log-level", "warn", "-log-format", "text", "-shutdown-timeout", "20s"}, stores...)
		if bin == "grapher" {
			args = append(args, "-detect-debounce", "300ms", "-detect-warm=false")
		}
		l.procs = append(l.procs, &proc{name: name, bin: filepath.Join(h.opt.bin, bin), args: append(args, ackWaits[bin]...),
			logPath: filepath.Join(dir, name+".log"), ready: readyz(httpAddr), restartDelay: between(0, 2*time.Second)})
	}
	return l, nil
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
	g, err := neo4jgraph.Open(ctx, l.h.opt.neo4jURI, neo4jgraph.WithBasicAuth("neo4j", ""))
	if err != nil {
		return nil, fmt.Errorf("opening Neo4j: %w", err)
	}
	defer g.Close()
	v, err := milvusstore.Open(ctx, l.h.opt.milvusAddr)
	if err != nil {
		return nil, fmt.Errorf("opening Milvus: %w", err)
	}
	defer v.Close()
	return dumpStores(ctx, g, v, l.corpus)
}

// drop removes the layout's corpus from the shared stores.
func (l *multiLayout) drop(ctx context.Context) error {
	g, err := neo4jgraph.Open(ctx, l.h.opt.neo4jURI, neo4jgraph.WithBasicAuth("neo4j", ""))
	if err != nil {
		return fmt.Errorf("opening Neo4j: %w", err)
	}
	defer g.Close()
	v, err := milvusstore.Open(ctx, l.h.opt.milvusAddr)
	if err != nil {
		return fmt.Errorf("opening Milvus: %w", err)
	}
	defer v.Close()
	errs := []error{g.DropCorpus(ctx, l.corpus)}
	for _, k := range []schema.Kind{schema.Chunks, schema.Entities, schema.Communities} {
		errs = append(errs, v.DropCollection(ctx, schema.Collection(l.corpus, k)))
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
