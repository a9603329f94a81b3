package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strconv"
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

// natsProc is a NATS server with JetStream on port, its store in dir.
func (h *harness) natsProc(dir string, port int) *proc {
	addr := "127.0.0.1:" + strconv.Itoa(port)
	return &proc{name: "nats", bin: filepath.Join(h.opt.bin, "nats-server"),
		args:    []string{"-a", "127.0.0.1", "-p", strconv.Itoa(port), "-js", "-sd", filepath.Join(dir, "nats")},
		logPath: filepath.Join(dir, "nats.log"), ready: listening(addr), restartDelay: between(time.Second, 5*time.Second)}
}

// upLayout is `graphrag up` on its embedded stores: with its embedded NATS server (the
// suite kills up), or with a NATS server of its own (the suite kills the NATS server).
type upLayout struct {
	h        *harness
	dir      string
	port     int
	external bool
	nats, up *proc
}

func (h *harness) newUpLayout(dir string, external bool) (*upLayout, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	httpPort, err := freePort()
	if err != nil {
		return nil, err
	}
	l := &upLayout{h: h, dir: dir, port: port, external: external}
	httpAddr := "127.0.0.1:" + strconv.Itoa(httpPort)
	args := []string{"up", "-data-dir", filepath.Join(dir, "data"), "-http-addr", httpAddr, "-log-level", "warn",
		"-log-format", "text", "-detect-debounce", "300ms", "-shutdown-timeout", "20s"}
	if external {
		l.nats = h.natsProc(dir, port)
		args = append(args, "-nats-url", l.natsURL())
	} else {
		args = append(args, "-nats-port", strconv.Itoa(port))
	}
	l.up = &proc{name: "up", bin: filepath.Join(h.opt.bin, "graphrag"), args: append(args, ackWaits["up"]...),
		logPath: filepath.Join(dir, "up.log"), ready: readyz(httpAddr), restartDelay: between(0, 500*time.Millisecond)}
	return l, nil
}

func (l *upLayout) natsURL() string { return "nats://127.0.0.1:" + strconv.Itoa(l.port) }

func (l *upLayout) all() []*proc {
	if l.external {
		return []*proc{l.nats, l.up}
	}
	return []*proc{l.up}
}

func (l *upLayout) victims() []*proc {
	if l.external {
		return []*proc{l.nats}
	}
	return []*proc{l.up}
}

func (l *upLayout) start(ctx context.Context) error { return startAll(ctx, l.all()) }

func (l *upLayout) stop() error {
	// up first: its bus must not lose the server while it drains.
	err := l.up.stop(30 * time.Second)
	if l.external {
		err = errors.Join(err, l.nats.stop(10*time.Second))
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
	l.nats = h.natsProc(dir, port)
	vectors := []string{"-vector-store", "milvus", "-milvus-address", h.opt.milvusAddr}
	graph := []string{"-graph-store", "neo4j", "-neo4j-uri", h.opt.neo4jURI, "-neo4j-user", "neo4j"}
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
			"-log-level", "warn", "-log-format", "text", "-shutdown-timeout", "20s"}, vectors...)
		if bin != "extractor" { // the extractor has no graph store, and no flag for one
			args = append(args, graph...)
		}
		if bin == "grapher" {
			args = append(args, "-detect-debounce", "300ms")
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
