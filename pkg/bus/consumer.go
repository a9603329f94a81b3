package bus

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/graphrag/graphrag/pkg/errkind"
)

// Headers the bus adds to a dead-lettered message, next to the original
// headers (minus Nats-* control headers) and the original data.
const (
	HeaderDLQReason     = "Graphrag-Dlq-Reason"
	HeaderDLQSubject    = "Graphrag-Dlq-Subject"
	HeaderDLQStream     = "Graphrag-Dlq-Stream"
	HeaderDLQStreamSeq  = "Graphrag-Dlq-Stream-Seq"
	HeaderDLQConsumer   = "Graphrag-Dlq-Consumer"
	HeaderDLQDeliveries = "Graphrag-Dlq-Deliveries"
	HeaderDLQTime       = "Graphrag-Dlq-Time"
)

// ErrHandlerPanic wraps the value of a recovered handler panic.
var ErrHandlerPanic = errors.New("handler panicked")

// Defaults for a ConsumerSpec's zero fields.
const (
	DefaultAckWait    = 30 * time.Second
	DefaultMaxDeliver = 5
)

// DefaultBackoff is the nak delay schedule when ConsumerSpec.Backoff is empty.
var DefaultBackoff = []time.Duration{time.Second, 5 * time.Second, 30 * time.Second}

const (
	// ackTimeout bounds waiting for the server to confirm an ack or a DLQ write.
	ackTimeout = 10 * time.Second
	// maxReasonLen keeps the reason header well under server header limits.
	maxReasonLen = 1024
	// reopenMin/reopenMax bound the pause before re-creating a consumer
	// whose message iterator failed (consumer deleted, say).
	reopenMin = 100 * time.Millisecond
	reopenMax = 10 * time.Second
	// nextPoll bounds each wait for a message. nats.go (v1.55) decides to
	// send the next pull request only when Next is entered, and skips it if
	// the previous request is still being sent; a Next that then blocks
	// waits for the pull to expire (30s) with messages pending. Returning
	// and re-entering Next re-runs that check, so a stall lasts at most
	// this long.
	nextPoll = 200 * time.Millisecond
	// stallCheck is how long a consumer waits for a message before it asks the
	// server whether its pull request is still there (pullLost).
	stallCheck = 5 * time.Second
)

// ConsumerSpec describes a durable pull consumer. Processes calling Consume
// with the same Stream and Durable share its messages.
type ConsumerSpec struct {
	Stream  string
	Durable string
	// FilterSubject limits the consumer to matching subjects (empty: all).
	FilterSubject string
	// StartSeq, when not 0, makes a consumer created now start at this
	// stream sequence instead of the first message. It is used only when
	// the durable does not exist yet: an existing consumer keeps its
	// position (a server cannot move it).
	StartSeq uint64
	// AckWait is how long the server waits for an ack before redelivering
	// (default 30s). Running handlers are kept alive with InProgress every
	// AckWait/3, so it bounds how long a crashed replica holds a message,
	// not how long a handler may run.
	AckWait time.Duration
	// MaxDeliver is how many times a message is tried before it is
	// dead-lettered (default 5). The bus counts, not the server: the server
	// consumer has no delivery limit so that a message whose DLQ write
	// failed is retried rather than silently parked.
	MaxDeliver int
	// MaxAckPending caps delivered-but-unacked messages across all replicas
	// (0: server default, 1000). This is the back-pressure knob.
	MaxAckPending int
	// Backoff[i] is the nak delay after the (i+1)th failed delivery; the
	// last entry repeats (default DefaultBackoff).
	Backoff []time.Duration
	// Workers is how many handlers run at once in this process (default 1).
	Workers int
	// DeadLetterSubject receives messages the bus gives up on (required
	// unless DeadLetterFor is set; a stream must capture it or
	// dead-lettering fails and the message is retried instead).
	DeadLetterSubject string
	// DeadLetterFor, when set, names the dead-letter subject of each
	// message from its subject instead, so that one consumer over many
	// subjects keeps their dead letters apart. It must never return the
	// subject it is given or one the consumer reads.
	DeadLetterFor func(subject string) string
}

// deadLetterSubject is where m goes when the bus gives up on it.
func (s ConsumerSpec) deadLetterSubject(subject string) string {
	if s.DeadLetterFor != nil {
		return s.DeadLetterFor(subject)
	}
	return s.DeadLetterSubject
}

func (s ConsumerSpec) withDefaults() (ConsumerSpec, error) {
	switch {
	case s.Stream == "" || s.Durable == "":
		return s, fmt.Errorf("%w: stream and durable are required", ErrInvalidSpec)
	case strings.ContainsAny(s.Durable, ".*> \t"):
		return s, fmt.Errorf("%w: durable %q must not contain '.', '*', '>' or spaces", ErrInvalidSpec, s.Durable)
	case s.DeadLetterSubject == "" && s.DeadLetterFor == nil:
		return s, fmt.Errorf("%w: dead-letter subject is required", ErrInvalidSpec)
	case s.DeadLetterFor == nil && s.DeadLetterSubject == s.FilterSubject:
		return s, fmt.Errorf("%w: dead-letter subject equals the filter subject", ErrInvalidSpec)
	case s.AckWait < 0 || s.MaxDeliver < 0 || s.MaxAckPending < 0 || s.Workers < 0:
		return s, fmt.Errorf("%w: negative limit", ErrInvalidSpec)
	}
	if s.AckWait == 0 {
		s.AckWait = DefaultAckWait
	}
	if s.MaxDeliver == 0 {
		s.MaxDeliver = DefaultMaxDeliver
	}
	if len(s.Backoff) == 0 {
		s.Backoff = DefaultBackoff
	}
	if s.Workers == 0 {
		s.Workers = 1
	}
	return s, nil
}

func (s ConsumerSpec) backoff(deliveries uint64) time.Duration {
	i := int(min(deliveries, uint64(len(s.Backoff)))) - 1
	return s.Backoff[max(i, 0)]
}

// Message is one delivery handed to a Handler.
type Message struct {
	Subject string
	Data    []byte
	Header  nats.Header
	// Deliveries is 1 on the first delivery.
	Deliveries uint64
	StreamSeq  uint64
	Stream     string
	Consumer   string
}

// Handler processes one message. Return nil to ack it, an error to have it
// retried with backoff, Permanent(err) to dead-letter it at once, or
// Unavailable(err) to have it retried and never dead-lettered (a dependency is down). The ctx
// carries the CONSUMER span and is cancelled only if Stop gives up waiting.
type Handler func(ctx context.Context, m *Message) error

// Consumer runs a Handler over a durable consumer until Stop.
type Consumer struct {
	b     *Bus
	spec  ConsumerSpec
	h     Handler
	log   *slog.Logger
	attrs metric.MeasurementOption

	// handlerCtx is the parent of every handler ctx: the Consume ctx's
	// values without its cancellation, cancelled when Stop runs out of time.
	handlerCtx    context.Context
	cancelHandler context.CancelFunc
	stopAfterCtx  func() bool

	mu       sync.Mutex
	iter     jetstream.MessagesContext
	stopping chan struct{}
	stopped  bool

	wg   sync.WaitGroup
	done chan struct{}
}

// Consume creates or updates the durable consumer spec describes and starts
// handling its messages. ctx bounds the setup; cancelling it later starts a
// graceful stop (like Stop without waiting).
func (b *Bus) Consume(ctx context.Context, spec ConsumerSpec, h Handler) (*Consumer, error) {
	if h == nil {
		return nil, fmt.Errorf("consuming %s/%s: %w: nil handler", spec.Stream, spec.Durable, ErrInvalidSpec)
	}
	spec, err := spec.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("consuming %s/%s: %w", spec.Stream, spec.Durable, err)
	}
	c := &Consumer{
		b:    b,
		spec: spec,
		h:    h,
		log:  b.log.With("stream", spec.Stream, "consumer", spec.Durable),
		attrs: metric.WithAttributeSet(attribute.NewSet(
			attribute.String("stream", spec.Stream),
			attribute.String("consumer", spec.Durable))),
		stopping: make(chan struct{}),
		done:     make(chan struct{}),
	}
	iter, err := c.open(ctx)
	if err != nil {
		return nil, err
	}
	c.iter = iter
	// The counters exist from the start, at zero, so that an alert on any increase
	// (dead letters) sees the first one.
	for _, ctr := range []metric.Int64Counter{b.inst.processed, b.inst.failed, b.inst.deadLettered} {
		ctr.Add(ctx, 0, c.attrs)
	}
	c.handlerCtx, c.cancelHandler = context.WithCancel(context.WithoutCancel(ctx))
	c.stopAfterCtx = context.AfterFunc(ctx, c.beginStop)
	go c.run() //nolint:contextcheck // run uses c.handlerCtx, derived from ctx above
	return c, nil
}

// open creates or updates the server consumer and starts pulling from it.
func (c *Consumer) open(ctx context.Context) (jetstream.MessagesContext, error) {
	s := c.spec
	cfg := jetstream.ConsumerConfig{
		Durable:       s.Durable,
		FilterSubject: s.FilterSubject,
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       s.AckWait,
		DeliverPolicy: jetstream.DeliverAllPolicy,
		MaxDeliver:    -1, // the bus enforces MaxDeliver, see ConsumerSpec
		MaxAckPending: s.MaxAckPending,
	}
	existing, err := c.b.js.Consumer(ctx, s.Stream, s.Durable)
	switch {
	case err == nil:
		// Deliver policy and start cannot change on an existing consumer.
		ec := existing.CachedInfo().Config
		cfg.DeliverPolicy, cfg.OptStartSeq = ec.DeliverPolicy, ec.OptStartSeq
	case errors.Is(err, jetstream.ErrConsumerNotFound):
		if s.StartSeq > 0 {
			cfg.DeliverPolicy, cfg.OptStartSeq = jetstream.DeliverByStartSequencePolicy, s.StartSeq
		}
	default:
		return nil, fmt.Errorf("looking up consumer %s/%s: %w", s.Stream, s.Durable, translate(err))
	}
	cons, err := c.b.js.CreateOrUpdateConsumer(ctx, s.Stream, cfg)
	if err != nil {
		return nil, fmt.Errorf("ensuring consumer %s/%s: %w", s.Stream, s.Durable, translate(err))
	}
	// Buffer no more than one batch per worker: a buffered message's
	// AckWait is already running and nothing keeps it alive.
	iter, err := cons.Messages(jetstream.PullMaxMessages(s.Workers))
	if err != nil {
		return nil, fmt.Errorf("pulling from consumer %s/%s: %w", s.Stream, s.Durable, err)
	}
	return iter, nil
}

// Done is closed when the consumer has stopped (after Stop, after the
// Consume ctx is cancelled, or when the connection is closed).
func (c *Consumer) Done() <-chan struct{} { return c.done }

// Stop stops pulling, lets running handlers finish (their messages are acked
// or naked as usual), naks messages pulled but not started so another
// replica gets them at once, and returns when all is done. If ctx expires
// first, handler contexts are cancelled and Stop returns ctx's error without
// waiting further. Safe to call more than once.
func (c *Consumer) Stop(ctx context.Context) error {
	c.beginStop()
	select {
	case <-c.done:
		return nil
	case <-ctx.Done():
		c.cancelHandler()
		return fmt.Errorf("stopping consumer %s/%s: %w", c.spec.Stream, c.spec.Durable, ctx.Err())
	}
}

func (c *Consumer) beginStop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		return
	}
	c.stopped = true
	close(c.stopping)
	// Drain, not Stop: buffered messages come out of Next and get naked.
	c.iter.Drain()
}

func (c *Consumer) isStopping() bool {
	select {
	case <-c.stopping:
		return true
	default:
		return false
	}
}

// run pulls messages while a worker slot is free and hands each to a
// goroutine; it returns after the iterator is closed and handlers are done.
func (c *Consumer) run() {
	defer close(c.done)
	defer c.stopAfterCtx()
	defer c.cancelHandler()
	defer c.wg.Wait()

	slots := make(chan struct{}, c.spec.Workers)
	iter := c.currentIter()
	pause := reopenMin
	idleSince := time.Now()
	lostChecks := 0
	for {
		select {
		case slots <- struct{}{}:
		case <-c.stopping:
			c.nakRest(iter)
			return
		}
		jm, err := iter.Next(jetstream.NextMaxWait(nextPoll))
		if errors.Is(err, nats.ErrTimeout) {
			<-slots
			if time.Since(idleSince) < stallCheck {
				continue
			}
			idleSince = time.Now()
			if !c.pullLost() {
				lostChecks = 0
				continue
			}
			// A pull request that just expired is renewed a moment later (later still on
			// a loaded machine): only two checks in a row without one mean it is lost.
			if lostChecks++; lostChecks < 2 {
				continue
			}
			lostChecks = 0
			c.log.Warn("the server holds no pull request of the consumer's (its leader changed?); re-opening it")
			iter.Stop()
			if iter = c.reopen(reopenMin); iter == nil {
				return
			}
			continue
		}
		idleSince, lostChecks = time.Now(), 0
		if err != nil {
			<-slots
			if c.isStopping() {
				c.nakRest(iter)
				return
			}
			if c.b.nc.IsClosed() {
				c.log.Warn("connection closed; consumer stopped", "err", err)
				return
			}
			c.log.Warn("pulling messages failed; re-opening consumer", "err", err, "pause", pause)
			iter.Stop() // usually closed already; make sure nothing is left pulling
			if iter = c.reopen(pause); iter == nil {
				return
			}
			pause = min(pause*2, reopenMax)
			continue
		}
		pause = reopenMin
		if c.isStopping() {
			<-slots
			c.nak(jm)
			continue
		}
		c.wg.Go(func() {
			defer func() { <-slots }()
			c.process(jm)
		})
	}
}

// pullLost reports whether the server's consumer has no pull request waiting although
// this one is pulling: when a cluster loses the server leading the consumer, the pull
// requests waiting there are lost without a word, and nats.go (v1.55) notices missing
// heartbeats only within one Next call, which nextPoll keeps shorter than two
// heartbeats, so the iterator would wait forever with messages pending.
func (c *Consumer) pullLost() bool {
	ctx, cancel := context.WithTimeout(c.handlerCtx, ackTimeout)
	defer cancel()
	cons, err := c.b.js.Consumer(ctx, c.spec.Stream, c.spec.Durable)
	if err != nil {
		return false // no leader to ask yet: the next check asks again
	}
	return cons.CachedInfo().NumWaiting == 0
}

func (c *Consumer) currentIter() jetstream.MessagesContext {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.iter
}

// reopen waits pause, then re-creates the consumer and iterator; nil means
// the consumer is stopping.
func (c *Consumer) reopen(pause time.Duration) jetstream.MessagesContext {
	for {
		t := time.NewTimer(pause)
		select {
		case <-c.stopping:
			t.Stop()
			return nil
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(c.handlerCtx, ackTimeout)
		iter, err := c.open(ctx)
		cancel()
		if err != nil {
			c.log.Warn("re-opening consumer failed", "err", err)
			pause = min(pause*2, reopenMax)
			continue
		}
		c.mu.Lock()
		if c.stopped {
			c.mu.Unlock()
			iter.Stop()
			return nil
		}
		c.iter = iter
		c.mu.Unlock()
		return iter
	}
}

// nakRest naks what the drained iterator still holds.
func (c *Consumer) nakRest(iter jetstream.MessagesContext) {
	for {
		jm, err := iter.Next()
		if err != nil {
			return
		}
		c.nak(jm)
	}
}

func (c *Consumer) nak(jm jetstream.Msg) {
	if err := jm.Nak(); err != nil {
		c.log.Warn("nak of an unstarted message failed; it is redelivered after AckWait", "err", err)
	}
}

// process runs the handler on one delivery and settles the message.
func (c *Consumer) process(jm jetstream.Msg) {
	meta, err := jm.Metadata()
	if err != nil {
		// Not a JetStream delivery; nothing sensible to do but let the
		// server redeliver it.
		c.log.Error("reading message metadata", "err", err)
		c.nak(jm)
		return
	}
	m := &Message{
		Subject:    jm.Subject(),
		Data:       jm.Data(),
		Header:     jm.Headers(),
		Deliveries: meta.NumDelivered,
		StreamSeq:  meta.Sequence.Stream,
		Stream:     meta.Stream,
		Consumer:   meta.Consumer,
	}
	parent := c.b.prop.Extract(c.handlerCtx, headerCarrier(m.Header))
	ctx, span := c.b.tr.Start(parent, "process "+m.Subject,
		trace.WithSpanKind(trace.SpanKindConsumer),
		trace.WithAttributes(
			attribute.String("messaging.system", "nats"),
			attribute.String("messaging.operation.type", "process"),
			attribute.String("messaging.destination.name", m.Subject),
			attribute.String("messaging.consumer.group.name", c.spec.Durable),
			attribute.String("messaging.nats.stream", m.Stream),
			attribute.Int64("messaging.nats.stream_sequence", int64(m.StreamSeq)),
			attribute.Int64("messaging.nats.deliveries", int64(m.Deliveries)),
			attribute.Int("messaging.message.body.size", len(m.Data)),
		))
	defer span.End()

	start := time.Now()
	stopKeepAlive := c.keepAlive(jm)
	herr := c.invoke(ctx, m)
	stopKeepAlive()
	c.b.inst.duration.Record(ctx, time.Since(start).Seconds(), c.attrs)

	// Settling must not fail because Stop cancelled the handler context.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ackTimeout)
	defer cancel()
	if herr == nil {
		// A confirmed ack: a plain ack lost in transit would be redelivered
		// silently; here it is at least logged.
		if err := jm.DoubleAck(sctx); err != nil {
			span.RecordError(err)
			c.log.WarnContext(sctx, "ack not confirmed; message may be redelivered", "seq", m.StreamSeq, "err", err)
		}
		c.b.inst.processed.Add(ctx, 1, c.attrs)
		return
	}

	c.b.inst.failed.Add(ctx, 1, c.attrs)
	span.RecordError(herr)
	span.SetStatus(codes.Error, "handler failed")
	switch {
	case giveUp(herr, m.Deliveries, c.spec.MaxDeliver):
		c.deadLetter(sctx, jm, m, herr)
	default:
		delay := c.spec.backoff(m.Deliveries)
		c.log.DebugContext(ctx, "handler failed; retrying", "seq", m.StreamSeq, "deliveries", m.Deliveries, "delay", delay, "err", herr)
		if err := jm.NakWithDelay(delay); err != nil {
			c.log.WarnContext(ctx, "nak failed; message is redelivered after AckWait", "seq", m.StreamSeq, "err", err)
		}
	}
}

// giveUp reports whether a message whose handler failed with herr on its
// deliveries-th delivery goes to the dead-letter subject rather than back for a
// retry: at once for a Permanent error, after maxDeliver deliveries otherwise,
// and never for an Unavailable one (an outage of any length loses nothing).
// Kinds are looked for anywhere in herr's chain.
func giveUp(herr error, deliveries uint64, maxDeliver int) bool {
	if errkind.Is(herr, errkind.Permanent) {
		return true
	}
	return deliveries >= uint64(maxDeliver) && !errkind.Is(herr, errkind.Unavailable)
}

// invoke calls the handler, turning a panic into an error.
func (c *Consumer) invoke(ctx context.Context, m *Message) (err error) {
	defer func() {
		if r := recover(); r != nil {
			c.log.ErrorContext(ctx, "handler panicked", "seq", m.StreamSeq, "panic", r, "stack", string(debug.Stack()))
			err = fmt.Errorf("%w: %v", ErrHandlerPanic, r)
		}
	}()
	return c.h(ctx, m)
}

// keepAlive tells the server the message is still being worked on every
// AckWait/3 until the returned func is called (which waits for it to end).
func (c *Consumer) keepAlive(jm jetstream.Msg) func() {
	quit := make(chan struct{})
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		t := time.NewTicker(c.spec.AckWait / 3)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
				if err := jm.InProgress(); err != nil {
					c.log.Warn("in-progress signal failed", "err", err)
				}
			}
		}
	}()
	return func() {
		close(quit)
		<-exited
	}
}

// deadLetter publishes the original message with the reason to the
// dead-letter subject, then terminates it. If the publish fails the message
// is naked instead, so it is never lost.
func (c *Consumer) deadLetter(ctx context.Context, jm jetstream.Msg, m *Message, reason error) {
	dlSubject := c.spec.deadLetterSubject(m.Subject)
	if dlSubject == "" || dlSubject == m.Subject {
		// A dead letter on the subject it came from would be consumed again.
		c.log.Error("no dead-letter subject for message; it will be retried", "seq", m.StreamSeq, "subject", m.Subject)
		if err := jm.NakWithDelay(c.spec.backoff(m.Deliveries)); err != nil {
			c.log.Warn("nak failed; message is redelivered after AckWait", "seq", m.StreamSeq, "err", err)
		}
		return
	}
	dl := nats.NewMsg(dlSubject)
	dl.Data = m.Data
	for k, vs := range m.Header {
		// Control headers of the original (msg id, expectations, TTL)
		// would make the DLQ write fail or de-duplicate wrongly.
		if strings.HasPrefix(k, "Nats-") {
			continue
		}
		dl.Header[k] = append([]string(nil), vs...)
	}
	dl.Header.Set(HeaderDLQReason, headerSafe(reason.Error()))
	dl.Header.Set(HeaderDLQSubject, m.Subject)
	dl.Header.Set(HeaderDLQStream, m.Stream)
	dl.Header.Set(HeaderDLQStreamSeq, strconv.FormatUint(m.StreamSeq, 10))
	dl.Header.Set(HeaderDLQConsumer, m.Consumer)
	dl.Header.Set(HeaderDLQDeliveries, strconv.FormatUint(m.Deliveries, 10))
	dl.Header.Set(HeaderDLQTime, time.Now().UTC().Format(time.RFC3339Nano))
	c.b.prop.Inject(ctx, headerCarrier(dl.Header))

	// Stream + sequence makes a repeated DLQ write of the same message a
	// duplicate; the consumer name keeps two consumers of one stream that
	// both give up on a message from collapsing into one DLQ entry.
	id := m.Stream + "." + strconv.FormatUint(m.StreamSeq, 10) + "." + m.Consumer
	if _, err := c.b.js.PublishMsg(ctx, dl, jetstream.WithMsgID(id)); err != nil {
		c.log.ErrorContext(ctx, "dead-letter publish failed; message will be retried", "seq", m.StreamSeq, "dlq", dlSubject, "err", err)
		if err := jm.NakWithDelay(c.spec.backoff(m.Deliveries)); err != nil {
			c.log.WarnContext(ctx, "nak failed; message is redelivered after AckWait", "seq", m.StreamSeq, "err", err)
		}
		return
	}
	c.b.inst.deadLettered.Add(ctx, 1, c.attrs)
	c.log.WarnContext(ctx, "message dead-lettered", "seq", m.StreamSeq, "subject", m.Subject, "deliveries", m.Deliveries, "reason", reason)
	if err := jm.Term(); err != nil {
		// The DLQ has it; a redelivery would only write a duplicate there.
		c.log.WarnContext(ctx, "term after dead-letter failed", "seq", m.StreamSeq, "err", err)
	}
}

// headerSafe makes s a valid single-line header value of bounded length.
func headerSafe(s string) string {
	s = strings.Map(func(r rune) rune {
		if r == '\r' || r == '\n' {
			return ' '
		}
		return r
	}, s)
	if len(s) > maxReasonLen {
		s = strings.ToValidUTF8(s[:maxReasonLen], "")
	}
	return s
}
