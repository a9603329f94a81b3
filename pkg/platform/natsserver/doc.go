// Package natsserver starts the embedded NATS server (package natsembed, nats-server
// in-process) that `graphrag up` runs when -nats-url is empty. Only the graphrag CLI
// imports it: the service binaries connect to a NATS server and do not link nats-server.
package natsserver
