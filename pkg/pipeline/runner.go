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
	"github.com/graphrag/graphrag/pkg/service"
)

// Handler processes one message of one corpus. Return bus.Permanent(err) for a message
// that can never succeed (it is dead-lettered at once), any other error to retry later.
type Handler func(ctx context.Context, corpus string, m *bus.Message) error

// StageConfig tunes the consumer of a stage.
type StageConfig struct {
	// Workers is how many messages one replica handles at once.
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
}

// DefaultStageConfig suits an LLM-bound stage on a small machine.
func DefaultStageConfig() StageConfig {
	return StageConfig{
		Workers:       4,
		MaxAckPending: 64,
		MaxDeliver:    5,
		AckWait:       60 * time.Second,
		Backoff:       []time.Duration{time.Second, 5 * time.Second, 30 * time.Second, 2 * time.Minute},
	}
}

// Runner consumes one stage's input for every corpus through the stage's one durable
// consumer over graphrag.<kind>.*, shared by all replicas of the stage. A corpus needs
// no registration and no consumer of its own, so their number has no ceiling; the
// corpus of a message is the last token of its subject, and a message whose token is
// not a valid corpus name is dead-lettered at once on graphrag.dlq.<stage>._unroutable.
type Runner struct {
	bus     *bus.Bus
	stage   string
	input   events.Kind
	cfg     StageConfig
	handler Handler
	log     *slog.Logger
	// durable and filter name the consumer; shard is true for one shard's (NewShardRunner).
	durable, filter string
	shard           bool

	mu       sync.Mutex
	consumer *bus.Consumer
	seen     map[string]bool
	stopped  bool

	rates     *rateMeter    // messages handled, for the stage's rate (rate.go)
	rateEvery time.Duration // how often the rate is recorded: rateFlush
	stopRates func()        // ends the rate record
}

// NewRunner prepares a runner; Start begins consuming.
func NewRunner(b *bus.Bus, stage string, input events.Kind, cfg StageConfig, h Handler, log *slog.Logger) *Runner {
	if log == nil {
		log = slog.Default()
	}
	return &Runner{bus: b, stage: stage, input: input, cfg: cfg, handler: h, log: log.With("stage", stage),
		durable: Durable(stage), filter: events.AllSubjects(input), seen: map[string]bool{}, rates: newRateMeter(time.Now()), rateEvery: rateFlush}
}

// NewShardRunner prepares a runner of one shard of a sharded stream (EnsureShards): its
// own durable consumer (ShardDurable) reads graphrag.<input>.<shard>.*, the messages of
// the corpora in that shard, so that the replica owning the shard alone handles them.
func NewShardRunner(b *bus.Bus, stage string, input events.Kind, shard int, cfg StageConfig, h Handler, log *slog.Logger) *Runner {
	r := NewRunner(b, stage, input, cfg, h, log)
	r.log = r.log.With("shard", shard)
	r.durable, r.filter, r.shard = ShardDurable(stage, shard), ShardSubjects(input, shard), true
	return r
}

// Start creates (or binds to) the stage's durable consumer and starts handling its
// messages. The first replica to start after an upgrade from per-corpus consumers
// takes over where they left off (see migrateStart).
func (r *Runner) Start(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped || r.consumer != nil {
		return nil
	}
	var start uint64
	if !r.shard {
		var err error
		if start, err = r.migrateStart(ctx); err != nil {
			return err
		}
	}
	spec := bus.ConsumerSpec{
		Stream:        StreamName(r.input),
		Durable:       r.durable,
		FilterSubject: r.filter,
		StartSeq:      start,
		AckWait:       r.cfg.AckWait,
		MaxDeliver:    r.cfg.MaxDeliver,
		MaxAckPending: r.cfg.MaxAckPending,
		Backoff:       r.cfg.Backoff,
		Workers:       r.cfg.Workers,
		DeadLetterFor: func(subject string) string { return deadLetterSubject(r.stage, subject) },
	}
	c, err := r.bus.Consume(ctx, spec, r.handle)
	if err != nil {
		return fmt.Errorf("starting the %s consumer: %w", r.stage, err)
	}
	r.consumer = c
	// Recorded until Stop, or until ctx ends, which stops the consumer too.
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		reportRates(rctx, r.bus, replicaKey(ratePrefix, r.stage), r.stage, r.rates, r.rateEvery, r.log)
	}()
	r.stopRates = func() { cancel(); <-done }
	r.log.Info("consuming", "durable", spec.Durable, "subjects", spec.FilterSubject)
	if r.shard {
		return nil
	}
	if err := r.dropLegacy(ctx); err != nil {
		r.log.Warn("removing per-corpus consumers of an earlier version", "err", err)
	}
	return nil
}

func (r *Runner) handle(ctx context.Context, m *bus.Message) error {
	corpus, err := events.CorpusFromSubject(m.Subject)
	if err != nil {
		// Never consumable by name and never valid: dead-letter it once, with the reason.
		return bus.Permanent(fmt.Errorf("%s: %w", m.Subject, err))
	}
	r.mu.Lock()
	if !r.seen[corpus] {
		r.seen[corpus] = true
		r.log.Debug("first message of corpus", "corpus", corpus)
	}
	r.mu.Unlock()
	err = r.handler(ctx, corpus, m)
	if err == nil {
		r.rates.add(corpus)
	}
	return err
}

// Corpora lists the corpora this runner has handled messages of, sorted.
func (r *Runner) Corpora() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, 0, len(r.seen))
	for c := range r.seen {
		out = append(out, c)
	}
	sort.Strings(out)
	return out
}

// Stop stops the consumer: no new message is pulled, in-flight ones finish (or ctx
// expires). Safe to call twice.
func (r *Runner) Stop(ctx context.Context) error {
	r.mu.Lock()
	if r.stopped {
		r.mu.Unlock()
		return nil
	}
	r.stopped = true
	c := r.consumer
	stopRates := r.stopRates
	r.mu.Unlock()
	if c == nil {
		return nil
	}
	err := c.Stop(ctx)
	stopRates()
	if err != nil {
		return fmt.Errorf("stopping the %s consumer: %w", r.stage, err)
	}
	return nil
}

// legacyPrefix begins the names of the per-corpus consumers (<stage>_<corpus>) that
// earlier versions created.
func (r *Runner) legacyPrefix() string { return r.stage + "_" }

// migrateStart returns where a new shared consumer starts: 0 (the beginning) unless
// per-corpus consumers of an earlier version exist, in which case it starts after
// the lowest of their acknowledgement floors, so that nothing they had not finished
// is lost and little they had finished is handled again (handlers are idempotent).
// A corpus with messages and no consumer (one the old ceiling kept waiting) starts
// from the beginning.
func (r *Runner) migrateStart(ctx context.Context) (uint64, error) {
	stream := StreamName(r.input)
	if _, err := r.bus.ConsumerInfo(ctx, stream, Durable(r.stage)); err == nil {
		return 0, nil // exists: it keeps its position
	} else if !errors.Is(err, bus.ErrNotFound) {
		return 0, fmt.Errorf("looking up the %s consumer: %w", r.stage, err)
	}
	legacy, err := r.bus.Consumers(ctx, stream, r.legacyPrefix())
	if err != nil || len(legacy) == 0 {
		return 0, err
	}
	floors := map[string]uint64{}
	for _, name := range legacy {
		ci, err := r.bus.ConsumerInfo(ctx, stream, name)
		if err != nil {
			return 0, err
		}
		floors[events.Subject(r.input, name[len(r.legacyPrefix()):])] = ci.AckFloorSeq
	}
	counts, err := r.bus.SubjectCounts(ctx, stream, events.AllSubjects(r.input))
	if err != nil {
		return 0, err
	}
	start := uint64(0)
	for subject := range counts {
		if _, err := events.CorpusFromSubject(subject); err != nil {
			continue // never consumed before either; the shared consumer dead-letters later ones
		}
		floor, ok := floors[subject]
		if !ok {
			return 0, nil
		}
		if start == 0 || floor+1 < start {
			start = floor + 1
		}
	}
	r.log.Info("taking over from per-corpus consumers", "consumers", len(legacy), "start_seq", start)
	return start, nil
}

// dropLegacy deletes the per-corpus consumers of an earlier version once the shared
// one exists.
func (r *Runner) dropLegacy(ctx context.Context) error {
	legacy, err := r.bus.Consumers(ctx, StreamName(r.input), r.legacyPrefix())
	if err != nil {
		return err
	}
	var errs []error
	for _, name := range legacy {
		errs = append(errs, r.bus.DeleteConsumer(ctx, StreamName(r.input), name))
	}
	return errors.Join(errs...)
}

func lastToken(subject string) string {
	for i := len(subject) - 1; i >= 0; i-- {
		if subject[i] == '.' {
			return subject[i+1:]
		}
	}
	return subject
}

// RegisterFlags adds the stage's consumer flags, named <prefix>-workers and so on, with
// the current values as defaults.
func (c *StageConfig) RegisterFlags(fs *flag.FlagSet, prefix string) {
	fs.IntVar(&c.Workers, prefix+"-workers", c.Workers, "messages handled at once per replica")
	fs.IntVar(&c.MaxAckPending, prefix+"-max-ack-pending", c.MaxAckPending, "unacknowledged messages allowed across replicas (back-pressure)")
	fs.IntVar(&c.MaxDeliver, prefix+"-max-deliver", c.MaxDeliver, "deliveries before a message is dead-lettered")
	fs.DurationVar(&c.AckWait, prefix+"-ack-wait", c.AckWait, "redelivery timeout of an unacknowledged message (extended while handled)")
}

// Or is c, or def when c is unset (zero Workers): a service's Config literal that leaves
// a stage out gets the stage's defaults.
func (c StageConfig) Or(def StageConfig) StageConfig {
	if c.Workers == 0 {
		return def
	}
	return c
}

// Validate reports every invalid value, named by its flag as RegisterFlags names it
// with prefix. No field has a zero that means a default (see Or).
func (c StageConfig) Validate(prefix string) error {
	var p service.Problems
	service.AtLeast(&p, "-"+prefix+"-workers", c.Workers, 1)
	service.AtLeast(&p, "-"+prefix+"-max-ack-pending", c.MaxAckPending, 1)
	service.AtLeast(&p, "-"+prefix+"-max-deliver", c.MaxDeliver, 1)
	service.Positive(&p, "-"+prefix+"-ack-wait", c.AckWait)
	return p.Err()
}
