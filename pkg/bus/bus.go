package bus

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// instrumentationName names the tracer and meter after the import path.
const instrumentationName = "github.com/graphrag/graphrag/pkg/bus"

// Bus publishes and consumes over one NATS connection. It is safe for
// concurrent use. The caller owns the connection and closes it after
// stopping every Consumer.
type Bus struct {
	nc   *nats.Conn
	js   jetstream.JetStream
	log  *slog.Logger
	tr   trace.Tracer
	prop propagation.TextMapPropagator
	inst instruments
}

type config struct {
	logger *slog.Logger
	tp     trace.TracerProvider
	mp     metric.MeterProvider
	prop   propagation.TextMapPropagator
}

// Option configures New.
type Option interface{ apply(*config) }

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

// WithLogger sets the logger (default: discard).
func WithLogger(l *slog.Logger) Option {
	return optionFunc(func(c *config) { c.logger = l })
}

// WithTracerProvider overrides the global tracer provider.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return optionFunc(func(c *config) { c.tp = tp })
}

// WithMeterProvider overrides the global meter provider.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return optionFunc(func(c *config) { c.mp = mp })
}

// WithPropagator overrides how trace context is written to and read from
// message headers. The default is W3C Trace Context plus Baggage whatever
// the global propagator is, because every service must agree on the wire
// format even if one forgets to set the global.
func WithPropagator(p propagation.TextMapPropagator) Option {
	return optionFunc(func(c *config) { c.prop = p })
}

// New returns a Bus over nc.
func New(nc *nats.Conn, opts ...Option) (*Bus, error) {
	if nc == nil {
		return nil, errors.New("creating bus: nil connection")
	}
	cfg := config{}
	for _, o := range opts {
		o.apply(&cfg)
	}
	if cfg.logger == nil {
		cfg.logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if cfg.tp == nil {
		cfg.tp = otel.GetTracerProvider()
	}
	if cfg.mp == nil {
		cfg.mp = otel.GetMeterProvider()
	}
	if cfg.prop == nil {
		cfg.prop = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("creating JetStream context: %w", err)
	}
	inst, err := newInstruments(cfg.mp.Meter(instrumentationName))
	if err != nil {
		return nil, fmt.Errorf("creating bus metrics: %w", err)
	}
	return &Bus{
		nc:   nc,
		js:   js,
		log:  cfg.logger,
		tr:   cfg.tp.Tracer(instrumentationName),
		prop: cfg.prop,
		inst: inst,
	}, nil
}

// JetStream exposes the underlying JetStream context for what the bus does
// not wrap.
func (b *Bus) JetStream() jetstream.JetStream { return b.js }

// MaxPayload is the largest message the connected server accepts, in bytes.
// Anything larger goes through PutObject.
func (b *Bus) MaxPayload() int { return int(b.nc.MaxPayload()) }

// StreamSpec describes a stream. Zero limits mean unlimited; zero Duplicates
// keeps the server default de-duplication window (2 minutes).
type StreamSpec struct {
	Name       string
	Subjects   []string
	MaxAge     time.Duration
	MaxBytes   int64
	MaxMsgSize int32
	// Duplicates is the window in which a repeated Nats-Msg-Id is dropped.
	Duplicates time.Duration
	// Replicas defaults to 1.
	Replicas int
}

// Transform rewrites the subject of every message a stream stores (a nats-server
// subject mapping: Source a filter of the stream's subjects, Destination with
// {{wildcard(i)}} and {{partition(n,i)}}), so that consumers can filter on a token the
// publisher did not write. SetStreamTransform sets it; EnsureStream keeps it, so that
// the services which ensure a stream at start need not all know it.
type Transform struct {
	Source, Destination string
}

// EnsureStream creates the stream or updates it to match spec (limits
// retention, file storage). Calling it again with the same spec changes
// nothing, so every replica may call it at start.
func (b *Bus) EnsureStream(ctx context.Context, spec StreamSpec) error {
	if spec.Name == "" || len(spec.Subjects) == 0 {
		return fmt.Errorf("ensuring stream %q: %w: name and subjects are required", spec.Name, ErrInvalidSpec)
	}
	replicas := spec.Replicas
	if replicas <= 0 {
		replicas = 1
	}
	maxBytes := spec.MaxBytes
	if maxBytes <= 0 {
		maxBytes = -1
	}
	maxMsgSize := spec.MaxMsgSize
	if maxMsgSize <= 0 {
		maxMsgSize = -1
	}
	cfg := jetstream.StreamConfig{
		Name:              spec.Name,
		Subjects:          spec.Subjects,
		Retention:         jetstream.LimitsPolicy,
		Storage:           jetstream.FileStorage,
		MaxAge:            spec.MaxAge,
		MaxBytes:          maxBytes,
		MaxMsgSize:        maxMsgSize,
		MaxMsgs:           -1,
		MaxMsgsPerSubject: -1,
		Duplicates:        spec.Duplicates,
		Replicas:          replicas,
		Discard:           jetstream.DiscardOld,
	}
	cur, err := b.js.Stream(ctx, spec.Name)
	if err == nil {
		cfg.SubjectTransform = cur.CachedInfo().Config.SubjectTransform
	}
	// An unchanged stream is not updated: every replica ensures the streams at start,
	// and nats-server (v2.15.2) races, in its file store, an update of a stream with
	// the creation of a consumer on it (seen by the race detector in
	// TestExtractorScalesHorizontally once consumers were created at start).
	if err == nil && sameStream(cur.CachedInfo().Config, cfg) {
		return nil
	}
	if _, err := b.js.CreateOrUpdateStream(ctx, cfg); err != nil {
		return fmt.Errorf("ensuring stream %s: %w", spec.Name, err)
	}
	return nil
}

// sameStream reports whether the stream configured as have already is what want asks
// for (a zero Duplicates window in want means the server default).
func sameStream(have, want jetstream.StreamConfig) bool {
	return slices.Equal(have.Subjects, want.Subjects) && have.Retention == want.Retention && have.Storage == want.Storage &&
		have.MaxAge == want.MaxAge && have.MaxBytes == want.MaxBytes && have.MaxMsgSize == want.MaxMsgSize &&
		have.MaxMsgs == want.MaxMsgs && have.MaxMsgsPerSubject == want.MaxMsgsPerSubject &&
		have.Replicas == want.Replicas && have.Discard == want.Discard &&
		(want.Duplicates == 0 || have.Duplicates == want.Duplicates) &&
		(have.SubjectTransform == nil) == (want.SubjectTransform == nil) &&
		(have.SubjectTransform == nil || *have.SubjectTransform == *want.SubjectTransform)
}

// SetStreamTransform gives an existing stream a subject transform (nil: none). Messages
// stored before keep their subjects.
func (b *Bus) SetStreamTransform(ctx context.Context, stream string, t *Transform) error {
	st, err := b.js.Stream(ctx, stream)
	if err != nil {
		return fmt.Errorf("reading stream %s: %w", stream, translate(err))
	}
	cfg := st.CachedInfo().Config
	cfg.SubjectTransform = nil
	if t != nil {
		cfg.SubjectTransform = &jetstream.SubjectTransformConfig{Source: t.Source, Destination: t.Destination}
	}
	if _, err := b.js.UpdateStream(ctx, cfg); err != nil {
		return fmt.Errorf("setting the subject transform of stream %s: %w", stream, err)
	}
	return nil
}

// StreamTransform is the subject transform of a stream (nil: none).
func (b *Bus) StreamTransform(ctx context.Context, stream string) (*Transform, error) {
	st, err := b.js.Stream(ctx, stream)
	if err != nil {
		return nil, fmt.Errorf("reading stream %s: %w", stream, translate(err))
	}
	t := st.CachedInfo().Config.SubjectTransform
	if t == nil {
		return nil, nil //nolint:nilnil // no transform is no error
	}
	return &Transform{Source: t.Source, Destination: t.Destination}, nil
}

// EnsureKV creates or updates a file-backed key-value bucket whose entries
// expire after ttl (0: never).
func (b *Bus) EnsureKV(ctx context.Context, bucket string, ttl time.Duration, opts ...BucketOption) (KV, error) {
	bc := bucketConfig(opts)
	kv, err := b.js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket:   bucket,
		TTL:      ttl,
		Storage:  jetstream.FileStorage,
		Replicas: bc.replicas,
	})
	if err != nil {
		return nil, fmt.Errorf("ensuring key-value bucket %s: %w", bucket, err)
	}
	return jsKV{kv}, nil
}

// KV opens an existing key-value bucket without changing its configuration (ErrNotFound
// when it does not exist). Services use it; provisioning uses EnsureKV.
func (b *Bus) KV(ctx context.Context, bucket string) (KV, error) {
	kv, err := b.keyValue(ctx, bucket)
	if err != nil {
		return nil, err
	}
	return jsKV{kv}, nil
}

func (b *Bus) keyValue(ctx context.Context, bucket string) (jetstream.KeyValue, error) {
	kv, err := b.js.KeyValue(ctx, bucket)
	if err != nil {
		return nil, fmt.Errorf("opening key-value bucket %s: %w", bucket, translate(err))
	}
	return kv, nil
}

// BucketOption configures a bucket EnsureKV or EnsureObjectStore creates or updates.
type BucketOption func(*bucketOptions)

type bucketOptions struct{ replicas int }

// WithReplicas sets the bucket's replication factor in a cluster (default 1).
func WithReplicas(n int) BucketOption { return func(o *bucketOptions) { o.replicas = n } }

func bucketConfig(opts []BucketOption) bucketOptions {
	var o bucketOptions
	for _, f := range opts {
		f(&o)
	}
	return o
}

// EnsureObjectStore creates or updates a file-backed object store bucket.
func (b *Bus) EnsureObjectStore(ctx context.Context, bucket string, opts ...BucketOption) error {
	_, err := b.ensureObjectStore(ctx, bucket, opts...)
	return err
}

func (b *Bus) ensureObjectStore(ctx context.Context, bucket string, opts ...BucketOption) (jetstream.ObjectStore, error) {
	bc := bucketConfig(opts)
	obs, err := b.js.CreateOrUpdateObjectStore(ctx, jetstream.ObjectStoreConfig{
		Bucket:   bucket,
		Storage:  jetstream.FileStorage,
		Replicas: bc.replicas,
	})
	if err != nil {
		return nil, fmt.Errorf("ensuring object store %s: %w", bucket, err)
	}
	return obs, nil
}

// ConsumerState is the progress of a durable consumer.
type ConsumerState struct {
	// NumPending counts messages matching the filter not yet delivered.
	NumPending uint64
	// NumAckPending counts messages delivered and not yet acked.
	NumAckPending uint64
	// NumRedelivered counts messages delivered more than once and not yet acked.
	NumRedelivered uint64
	// Delivered counts deliveries, redeliveries included (the consumer sequence).
	Delivered uint64
	// DeliveredSeq is the highest stream sequence delivered so far: every
	// later message of the consumer's subjects is pending.
	DeliveredSeq uint64
	// AckFloorSeq is the stream sequence up to which every message of the
	// consumer's subjects is acknowledged (or terminated); later ones may
	// be acknowledged too.
	AckFloorSeq uint64
}

// ConsumerInfo reports the state of a durable consumer; ErrNotFound if the
// stream or consumer does not exist.
func (b *Bus) ConsumerInfo(ctx context.Context, stream, durable string) (ConsumerState, error) {
	c, err := b.js.Consumer(ctx, stream, durable)
	if err != nil {
		return ConsumerState{}, fmt.Errorf("looking up consumer %s/%s: %w", stream, durable, translate(err))
	}
	info, err := c.Info(ctx)
	if err != nil {
		return ConsumerState{}, fmt.Errorf("reading consumer %s/%s: %w", stream, durable, translate(err))
	}
	return ConsumerState{
		NumPending:     info.NumPending,
		NumAckPending:  uint64(info.NumAckPending),
		NumRedelivered: uint64(info.NumRedelivered),
		Delivered:      info.Delivered.Consumer,
		DeliveredSeq:   info.Delivered.Stream,
		AckFloorSeq:    info.AckFloor.Stream,
	}, nil
}

// Consumers lists the names of the durable consumers of a stream whose name
// begins with prefix, sorted.
func (b *Bus) Consumers(ctx context.Context, stream, prefix string) ([]string, error) {
	s, err := b.js.Stream(ctx, stream)
	if err != nil {
		return nil, fmt.Errorf("looking up stream %s: %w", stream, translate(err))
	}
	l := s.ConsumerNames(ctx)
	var out []string
	for name := range l.Name() {
		if strings.HasPrefix(name, prefix) {
			out = append(out, name)
		}
	}
	if err := l.Err(); err != nil {
		return nil, fmt.Errorf("listing consumers of %s: %w", stream, translate(err))
	}
	slices.Sort(out)
	return out, nil
}

// DeleteConsumer removes a durable consumer; one that does not exist is not
// an error.
func (b *Bus) DeleteConsumer(ctx context.Context, stream, durable string) error {
	err := b.js.DeleteConsumer(ctx, stream, durable)
	if err != nil && !errors.Is(err, jetstream.ErrConsumerNotFound) {
		return fmt.Errorf("deleting consumer %s/%s: %w", stream, durable, translate(err))
	}
	return nil
}

// CountAfter counts the messages of stream on subject (wildcards allowed)
// whose sequence is greater than seq. It asks the server through a
// short-lived consumer, which computes the count without delivering
// anything.
func (b *Bus) CountAfter(ctx context.Context, stream, subject string, seq uint64) (uint64, error) {
	s, err := b.js.Stream(ctx, stream)
	if err != nil {
		return 0, fmt.Errorf("looking up stream %s: %w", stream, translate(err))
	}
	cons, err := s.CreateConsumer(ctx, jetstream.ConsumerConfig{
		FilterSubject:     subject,
		DeliverPolicy:     jetstream.DeliverByStartSequencePolicy,
		OptStartSeq:       seq + 1,
		AckPolicy:         jetstream.AckNonePolicy,
		MemoryStorage:     true,
		InactiveThreshold: time.Minute, // removed by the server if we die before deleting it
	})
	if err != nil {
		return 0, fmt.Errorf("counting %s after %d in %s: %w", subject, seq, stream, translate(err))
	}
	info := cons.CachedInfo()
	// A failed delete only leaves the consumer for InactiveThreshold.
	_ = s.DeleteConsumer(context.WithoutCancel(ctx), info.Name)
	return info.NumPending, nil
}

// SubjectCounts returns how many messages the stream holds per subject
// matching filter (a subject with wildcards; empty means all).
func (b *Bus) SubjectCounts(ctx context.Context, stream, filter string) (map[string]uint64, error) {
	if filter == "" {
		filter = ">"
	}
	s, err := b.js.Stream(ctx, stream)
	if err != nil {
		return nil, fmt.Errorf("looking up stream %s: %w", stream, translate(err))
	}
	info, err := s.Info(ctx, jetstream.WithSubjectFilter(filter))
	if err != nil {
		return nil, fmt.Errorf("counting subjects %q of stream %s: %w", filter, stream, translate(err))
	}
	counts := make(map[string]uint64, len(info.State.Subjects))
	maps.Copy(counts, info.State.Subjects)
	return counts, nil
}

// translate maps JetStream "does not exist" errors to ErrNotFound, keeping
// the original in the chain.
func translate(err error) error {
	switch {
	case errors.Is(err, jetstream.ErrStreamNotFound),
		errors.Is(err, jetstream.ErrConsumerNotFound),
		errors.Is(err, jetstream.ErrBucketNotFound),
		errors.Is(err, jetstream.ErrObjectNotFound),
		errors.Is(err, jetstream.ErrKeyNotFound),
		errors.Is(err, jetstream.ErrKeyDeleted):
		return fmt.Errorf("%w: %w", ErrNotFound, err)
	}
	return err
}
