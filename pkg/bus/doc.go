// Package bus is the platform's messaging layer over NATS JetStream.
//
// It provisions streams, key-value buckets and object stores idempotently,
// publishes with de-duplication ids and W3C trace context in the message
// headers, and runs durable pull consumers shared by service replicas. The
// bus owns acknowledgement: a handler only returns an error (or nil), and the
// bus acks, naks with backoff, or dead-letters the message with the reason.
// It knows nothing about what a message means.
//
// Services store small records through KV, a key-value bucket interface with
// this package's errors (ErrNotFound for a missing key, ErrConflict for a
// compare-and-set that lost), so that no package but this one and pipeline
// imports the JetStream client. One consumer may read many subjects
// (ConsumerSpec.DeadLetterFor keeps their dead letters apart).
//
// Delivery semantics: at least once. A handler may see a message again
// (after a crash, an ack lost in transit, or AckWait expiring), so handlers
// must be idempotent; the platform uses content-derived ids for that.
//
// Decisions, and why:
//   - Acks are confirmed (DoubleAck): a fire-and-forget ack lost in transit
//     turns into a silent redelivery; a confirmed one is at least logged.
//     It costs one round trip per message, paid in parallel by Workers.
//   - MaxDeliver is counted by the bus, not the server (the server consumer
//     has no limit): if dead-lettering fails the message is naked and
//     retried, never parked by the server without a DLQ record.
//   - A dead letter's Nats-Msg-Id is "<stream>.<seq>.<consumer>": a repeated
//     DLQ write of the same message de-duplicates, while two consumers of one
//     stream giving up on the same message both leave a record.
//   - Stop naks messages pulled but not yet started, so another replica gets
//     them at once instead of after AckWait (a nak counts as a delivery).
//   - At most Workers messages are buffered per process: a buffered message's
//     AckWait runs while it waits and nothing keeps it alive.
//   - Single-active services hold a Lease: a key in an expiring key-value
//     bucket, written with compare-and-set and renewed, so that no second
//     coordination system (Kubernetes leases, etcd) is needed off a cluster.
//     A process that takes what it can of many leases (shards) asks with NoWait.
//   - A stream may carry a subject transform (SetStreamTransform), which
//     EnsureStream keeps: the transform is set by the one service that needs it.
package bus
