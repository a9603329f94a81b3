// Package bus is the platform's messaging layer over NATS JetStream.
//
// It provisions streams, key-value buckets and object stores idempotently,
// publishes with de-duplication ids and W3C trace context in the message
// headers, and runs durable pull consumers shared by service replicas. The
// bus owns acknowledgement: a handler only returns an error (or nil), and the
// bus acks, naks with backoff, or dead-letters the message with the reason.
// It knows nothing about what a message means.
//
// Delivery semantics: at least once. A handler may see a message again
// (after a crash, an ack lost in transit, or AckWait expiring), so handlers
// must be idempotent; the platform uses content-derived ids for that.
package bus
