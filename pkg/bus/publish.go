package bus

import (
	"context"
	"fmt"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// headerCarrier lets a propagator read and write NATS headers.
type headerCarrier nats.Header

// nats.Header has no Keys(), so it is not a TextMapCarrier by itself.
var _ propagation.TextMapCarrier = headerCarrier{}

func (c headerCarrier) Get(key string) string { return nats.Header(c).Get(key) }
func (c headerCarrier) Set(key, value string) { nats.Header(c).Set(key, value) }
func (c headerCarrier) Keys() []string {
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	return keys
}

// PubAck is the stream's receipt for a published message.
type PubAck struct {
	Stream   string
	Sequence uint64
	// Duplicate is true when the stream already had a message with the same
	// msg id inside its de-duplication window; nothing new was stored.
	Duplicate bool
}

type publishConfig struct {
	msgID  string
	header nats.Header
}

// PublishOption configures one Publish.
type PublishOption interface{ apply(*publishConfig) }

type publishOptionFunc func(*publishConfig)

func (f publishOptionFunc) apply(c *publishConfig) { f(c) }

// WithMsgID sets Nats-Msg-Id so that JetStream drops a re-publish of the same
// message inside the stream's de-duplication window. Use a content-derived id.
func WithMsgID(id string) PublishOption {
	return publishOptionFunc(func(c *publishConfig) { c.msgID = id })
}

// WithHeader adds a header to the message.
func WithHeader(key, value string) PublishOption {
	return publishOptionFunc(func(c *publishConfig) {
		if c.header == nil {
			c.header = nats.Header{}
		}
		c.header.Add(key, value)
	})
}

// Publish stores data on subject in whichever stream captures it and waits
// for the stream's ack. The current trace context travels in the headers.
func (b *Bus) Publish(ctx context.Context, subject string, data []byte, opts ...PublishOption) (PubAck, error) {
	var pc publishConfig
	for _, o := range opts {
		o.apply(&pc)
	}
	ctx, span := b.tr.Start(ctx, "publish "+subject,
		trace.WithSpanKind(trace.SpanKindProducer),
		trace.WithAttributes(
			attribute.String("messaging.system", "nats"),
			attribute.String("messaging.operation.type", "send"),
			attribute.String("messaging.destination.name", subject),
			attribute.Int("messaging.message.body.size", len(data)),
		))
	defer span.End()
	if pc.msgID != "" {
		span.SetAttributes(attribute.String("messaging.message.id", pc.msgID))
	}

	msg := nats.NewMsg(subject)
	msg.Data = data
	for k, vs := range pc.header {
		for _, v := range vs {
			msg.Header.Add(k, v)
		}
	}
	b.prop.Inject(ctx, headerCarrier(msg.Header))

	var jsOpts []jetstream.PublishOpt
	if pc.msgID != "" {
		jsOpts = append(jsOpts, jetstream.WithMsgID(pc.msgID))
	}
	ack, err := b.js.PublishMsg(ctx, msg, jsOpts...)
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, "publish failed")
		return PubAck{}, fmt.Errorf("publishing to %s: %w", subject, err)
	}
	span.SetAttributes(
		attribute.String("messaging.destination.stream", ack.Stream),
		attribute.Int64("messaging.nats.stream_sequence", int64(ack.Sequence)),
		attribute.Bool("messaging.nats.duplicate", ack.Duplicate),
	)
	return PubAck{Stream: ack.Stream, Sequence: ack.Sequence, Duplicate: ack.Duplicate}, nil
}
