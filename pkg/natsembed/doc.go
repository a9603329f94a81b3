// Package natsembed runs a NATS server with JetStream inside the current
// process, for the all-in-one mode of the platform and for tests.
//
// The server stores JetStream data in a directory (file storage, so streams
// survive a restart) and listens on a loopback address only: an embedded bus
// is a private detail of one process, never a network service. Use a real
// NATS cluster for anything that must be reachable from other hosts. Servers
// on one loopback host may be routed into a JetStream cluster (Config.Cluster),
// for tests of a cluster that loses a node.
package natsembed
