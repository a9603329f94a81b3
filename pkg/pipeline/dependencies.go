package pipeline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/errkind"
)

// Probe reports whether a dependency answers now: a store's Ping.
type Probe func(ctx context.Context) error

// Probe timings of Dependencies: how long after an outage began a dependency is first
// asked whether it answers again, doubling up to the last, and how long one probe may
// take. probeMax bounds how long a stage stays paused after its store is back.
const (
	depProbeMin     = time.Second
	depProbeMax     = 10 * time.Second
	depProbeTimeout = 5 * time.Second
)

// Dependencies makes a stage wait out the outage of a store it depends on, as the
// model client makes it wait out its endpoint's (llm.WaitOutOutages): a handler that
// fails because a dependency is down (errkind.Dependency names it: a store driver's
// Unavailable error) waits until the dependency answers its probe, then runs again,
// with the message kept in progress (the bus extends its ack deadline), so its
// delivery count does not grow. A consumer whose workers all wait pulls nothing more,
// so the stage pauses, and resumes by itself. Other workers that meet the outage wait
// for the same probe; one probe loop runs per dependency down.
//
// It is an OutageSource, for ReportPauses: the dependency down the longest, since
// when, and the error that found it down.
type Dependencies struct {
	probes   map[string]Probe
	log      *slog.Logger
	probeMin time.Duration
	probeMax time.Duration

	// stopped ends the waits and the probes when Stop cancels it.
	stopped context.Context
	cancel  context.CancelFunc

	mu     sync.Mutex
	down   map[string]*depOutage
	closed bool
	wg     sync.WaitGroup
}

// depOutage is one dependency found down.
type depOutage struct {
	since time.Time
	cause string
	back  chan struct{} // closed when it answers again
}

// NewDependencies returns the waits of a stage over the dependencies named in probes
// (graphstore.Dependency, vectorstore.Dependency: the names errkind.Down gives). A
// dependency found down that has no probe is tried again by running the handler
// again, at the probes' intervals.
func NewDependencies(probes map[string]Probe, log *slog.Logger) *Dependencies {
	if log == nil {
		log = slog.Default()
	}
	stopped, cancel := context.WithCancel(context.Background())
	return &Dependencies{probes: probes, log: log, probeMin: depProbeMin, probeMax: depProbeMax,
		stopped: stopped, cancel: cancel, down: map[string]*depOutage{}}
}

// Handler runs h, and again each time a dependency it failed on answers again (see
// Await). An outage still unresolved when the stage stops (or ctx ends) is h's error,
// of kind Unavailable: the bus naks the message and never dead-letters it for that.
func (d *Dependencies) Handler(h Handler) Handler {
	return func(ctx context.Context, corpus string, m *bus.Message) error {
		for {
			err := h(ctx, corpus, m)
			if err == nil {
				return nil
			}
			if werr := d.Await(ctx, err); werr != nil {
				return werr
			}
		}
	}
}

// Await decides what a failed call does next. When err says a dependency is down
// (errkind.Dependency, of kind Unavailable), Await waits until the dependency answers a
// probe and returns nil: the call may be made again. The wait ends early with ctx or
// when Stop is called; Await then returns err. Any other error is returned as it is.
func (d *Dependencies) Await(ctx context.Context, err error) error {
	dep := errkind.Dependency(err)
	if dep == "" || !errkind.Is(err, errkind.Unavailable) {
		return err
	}
	back, ok := d.markDown(dep, err) //nolint:contextcheck // the probes outlive the call that found the outage; Stop ends them
	if !ok {
		return err // stopped
	}
	select {
	case <-back:
		return nil
	case <-ctx.Done():
	case <-d.stopped.Done():
	}
	return err
}

// markDown records dep down (unless it is already) and starts probing it; it returns
// the channel closed when dep answers again, and false after Stop.
func (d *Dependencies) markDown(dep string, err error) (<-chan struct{}, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil, false
	}
	if o, ok := d.down[dep]; ok {
		return o.back, true
	}
	cause := err.Error()
	if de, ok := errors.AsType[*errkind.DependencyError](err); ok {
		cause = de.Err.Error()
	}
	o := &depOutage{since: time.Now(), cause: cause, back: make(chan struct{})}
	d.down[dep] = o
	d.log.Warn(dep+" unavailable; the stage waits until it answers", "dependency", dep, "err", err)
	d.wg.Add(1)
	go d.probeUntilUp(dep, o)
	return o.back, true
}

// probeUntilUp asks dep at growing intervals until it answers or Stop is called.
func (d *Dependencies) probeUntilUp(dep string, o *depOutage) {
	defer d.wg.Done()
	probe := d.probes[dep]
	delay := d.probeMin
	for {
		t := time.NewTimer(delay)
		select {
		case <-d.stopped.Done():
			t.Stop()
			return
		case <-t.C:
		}
		if probe == nil || d.probe(probe) == nil {
			d.mu.Lock()
			delete(d.down, dep)
			close(o.back)
			d.mu.Unlock()
			d.log.Info(dep+" answers again; the stage resumes", "dependency", dep, "down_for", time.Since(o.since).Round(time.Millisecond).String())
			return
		}
		delay = min(2*delay, d.probeMax)
	}
}

func (d *Dependencies) probe(p Probe) error {
	ctx, cancel := context.WithTimeout(d.stopped, depProbeTimeout)
	defer cancel()
	if err := p(ctx); err != nil {
		return err
	}
	return d.stopped.Err() // a probe cut by Stop proves nothing
}

// Outage implements OutageSource: the dependency down the longest.
func (d *Dependencies) Outage() (down bool, since time.Time, reason string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	deps := make([]string, 0, len(d.down))
	for dep := range d.down {
		deps = append(deps, dep)
	}
	sort.Strings(deps)
	for _, dep := range deps {
		o := d.down[dep]
		if !down || o.since.Before(since) {
			down, since, reason = true, o.since, fmt.Sprintf("%s unavailable: %s", dep, o.cause)
		}
	}
	return down, since, reason
}

// Stop ends every wait (the waiting calls return their errors) and the probes, and
// waits for the probes to return; safe twice.
func (d *Dependencies) Stop() {
	d.mu.Lock()
	d.closed = true
	d.mu.Unlock()
	d.cancel()
	d.wg.Wait()
}

// ProbeOf returns the Ping method of store as a Probe, or nil when store has none.
func ProbeOf(store any) Probe {
	if p, ok := store.(interface{ Ping(context.Context) error }); ok {
		return p.Ping
	}
	return nil
}
