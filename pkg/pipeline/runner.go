package pipeline

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/events"
)

// Handler processes one message of one corpus. Return bus.Permanent(err) for a message
// that can never succeed (it is dead-lettered at once), any other error to retry later.
type Handler func(ctx context.Context, corpus string, m *bus.Message) error

// StageConfig tunes the consumers of a stage.
type StageConfig struct {
	// Workers is how many messages one replica handles at once, per corpus.
	Workers int
	// MaxAckPending bounds unacknowledged messages across all replicas (back-pressure).
	MaxAckPending int
	// MaxDeliver is how many times a message is tried before it is dead-lettered.
	MaxDeliver int
	// AckWait is how long a delivery may stay unacknowledged before redelivery; the bus
	// extends it while a handler is still running.
	AckWait time.Duration
	// Backoff are the redelivery delays after failures, by attempt.
	Backoff []time.Duration
	// Discovery is how often new corpora are looked for.
	Discovery time.Duration
}

// DefaultStageConfig suits an LLM-bound stage on a small machine.
func DefaultStageConfig() StageConfig {
	return StageConfig{
		Workers:       4,
		MaxAckPending: 64,
		MaxDeliver:    5,
		AckWait:       60 * time.Second,
		Backoff:       []time.Duration{time.Second, 5 * time.Second, 30 * time.Second, 2 * time.Minute},
		Discovery:     time.Second,
	}
}

// Runner consumes one stage's input for every corpus: it discovers corpora from the
// input stream's subjects and keeps one shared durable consumer per corpus.
type Runner struct {
	bus     *bus.Bus
	stage   string
	input   events.Kind
	cfg     StageConfig
	handler Handler
	log     *slog.Logger

	mu        sync.Mutex
	consumers map[string]*bus.Consumer
	cancel    context.CancelFunc
	done      chan struct{}
	stopped   bool
}

// NewRunner prepares a runner; Start begins consuming.
func NewRunner(b *bus.Bus, stage string, input events.Kind, cfg StageConfig, h Handler, log *slog.Logger) *Runner {
	if log == nil {
		log = slog.Default()
	}
	return &Runner{bus: b, stage: stage, input: input, cfg: cfg, handler: h, log: log.With("stage", stage),
		consumers: map[string]*bus.Consumer{}}
}

// Start discovers the corpora present now, starts their consumers, and keeps looking for
// new ones until Stop.
func (r *Runner) Start(ctx context.Context) error {
	if err := r.discover(ctx); err != nil {
		return err
	}
	loopCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	r.mu.Lock()
	r.cancel, r.done = cancel, make(chan struct{})
	r.mu.Unlock()
	go func() {
		defer close(r.done)
		t := time.NewTicker(r.cfg.Discovery)
		defer t.Stop()
		for {
			select {
			case <-loopCtx.Done():
				return
			case <-t.C:
				if err := r.discover(loopCtx); err != nil && loopCtx.Err() == nil {
					r.log.Warn("discovering corpora", "err", err)
				}
			}
		}
	}()
	return nil
}

// Corpora lists the corpora this runner consumes.
func (r *Runner) Corpora() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, 0, len(r.consumers))
	for c := range r.consumers {
		out = append(out, c)
	}
	sort.Strings(out)
	return out
}

func (r *Runner) discover(ctx context.Context) error {
	counts, err := r.bus.SubjectCounts(ctx, StreamName(r.input), events.AllSubjects(r.input))
	if err != nil {
		return fmt.Errorf("listing %s subjects: %w", r.input, err)
	}
	for subject := range counts {
		corpus, err := events.CorpusFromSubject(subject)
		if err != nil {
			// A subject with a bad corpus token cannot be consumed by name: dead-letter its
			// messages once. Never crash on outside input.
			r.deadLetterUnroutable(ctx, subject, err)
			continue
		}
		if err := r.ensure(ctx, corpus); err != nil {
			return err
		}
	}
	return nil
}

// Ensure starts the consumer of a corpus now instead of at the next discovery.
func (r *Runner) Ensure(ctx context.Context, corpus string) error { return r.ensure(ctx, corpus) }

func (r *Runner) ensure(ctx context.Context, corpus string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped {
		return nil
	}
	if _, ok := r.consumers[corpus]; ok {
		return nil
	}
	spec := bus.ConsumerSpec{
		Stream:            StreamName(r.input),
		Durable:           Durable(r.stage, corpus),
		FilterSubject:     events.Subject(r.input, corpus),
		AckWait:           r.cfg.AckWait,
		MaxDeliver:        r.cfg.MaxDeliver,
		MaxAckPending:     r.cfg.MaxAckPending,
		Backoff:           r.cfg.Backoff,
		Workers:           r.cfg.Workers,
		DeadLetterSubject: events.DeadLetterSubject(r.stage, corpus),
	}
	c, err := r.bus.Consume(ctx, spec, func(ctx context.Context, m *bus.Message) error {
		return r.handler(ctx, corpus, m)
	})
	if err != nil {
		return fmt.Errorf("starting %s consumer for corpus %s: %w", r.stage, corpus, err)
	}
	r.consumers[corpus] = c
	r.log.Info("consuming corpus", "corpus", corpus, "durable", spec.Durable)
	return nil
}

// Stop stops discovery, then every consumer: no new message is pulled, in-flight ones
// finish (or ctx expires). Safe to call twice.
func (r *Runner) Stop(ctx context.Context) error {
	r.mu.Lock()
	if r.stopped {
		r.mu.Unlock()
		return nil
	}
	r.stopped = true
	cancel, done := r.cancel, r.done
	consumers := r.consumers
	r.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
	var wg sync.WaitGroup
	errs := make([]error, 0, len(consumers))
	var emu sync.Mutex
	for corpus, c := range consumers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := c.Stop(ctx); err != nil {
				emu.Lock()
				errs = append(errs, fmt.Errorf("stopping %s consumer of %s: %w", r.stage, corpus, err))
				emu.Unlock()
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// RegisterFlags adds the stage's consumer flags, named <prefix>-workers and so on, with
// the current values as defaults.
func (c *StageConfig) RegisterFlags(fs *flag.FlagSet, prefix string) {
	fs.IntVar(&c.Workers, prefix+"-workers", c.Workers, "messages handled at once per replica and corpus")
	fs.IntVar(&c.MaxAckPending, prefix+"-max-ack-pending", c.MaxAckPending, "unacknowledged messages allowed across replicas (back-pressure)")
	fs.IntVar(&c.MaxDeliver, prefix+"-max-deliver", c.MaxDeliver, "deliveries before a message is dead-lettered")
	fs.DurationVar(&c.AckWait, prefix+"-ack-wait", c.AckWait, "redelivery timeout of an unacknowledged message (extended while handled)")
}
