// Package bustest starts an in-process NATS JetStream server for tests of
// any package that talks to the bus, so they run against a real server
// rather than a fake.
package bustest
