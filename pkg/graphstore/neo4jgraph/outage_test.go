package neo4jgraph

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
	neo4jconfig "github.com/neo4j/neo4j-go-driver/v5/neo4j/config"

	"github.com/graphrag/graphrag/pkg/errkind"
	"github.com/graphrag/graphrag/pkg/graphstore"
)

// The driver's errors for a server that cannot serve now are outages of the graph
// store; its errors for a bad statement, bad credentials or a closed driver are not.
func TestOutageClassifies(t *testing.T) {
	conn := &neo4j.ConnectivityError{Inner: &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}}
	tests := []struct {
		name   string
		err    error
		outage bool
	}{
		{"connection refused", conn, true},
		{"connection lost", &neo4j.ConnectivityError{Inner: io.EOF}, true},
		{"out of retries, last refused", &neo4j.TransactionExecutionLimit{Cause: "timeout (exceeded max retry time: 30s)", Errors: []error{conn, conn}}, true},
		{"out of retries, last a leader switch", &neo4j.TransactionExecutionLimit{Errors: []error{conn, &neo4j.Neo4jError{Code: "Neo.ClientError.Cluster.NotALeader"}}}, true},
		{"out of retries, last a syntax error", &neo4j.TransactionExecutionLimit{Errors: []error{conn, &neo4j.Neo4jError{Code: "Neo.ClientError.Statement.SyntaxError"}}}, false},
		{"out of retries, none recorded", &neo4j.TransactionExecutionLimit{Cause: "x"}, false},
		{"database unavailable", &neo4j.Neo4jError{Code: "Neo.TransientError.General.DatabaseUnavailable"}, true},
		{"deadlock after the retries", &neo4j.Neo4jError{Code: "Neo.TransientError.Transaction.DeadlockDetected"}, true},
		{"read-only follower", &neo4j.Neo4jError{Code: "Neo.ClientError.General.ForbiddenOnReadOnlyDatabase"}, true},
		{"network error before the driver wrapped it", &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}, true},
		{"wrapped", fmt.Errorf("merging: %w", conn), true},
		{"syntax error", &neo4j.Neo4jError{Code: "Neo.ClientError.Statement.SyntaxError"}, false},
		{"unauthorized", &neo4j.Neo4jError{Code: "Neo.ClientError.Security.Unauthorized"}, false},
		{"database not found", &neo4j.Neo4jError{Code: "Neo.ClientError.Database.DatabaseNotFound"}, false},
		{"usage", &neo4j.UsageError{Message: "Trying to create session on closed driver"}, false},
		{"plain", errors.New("boom"), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := translate(context.Background(), tc.err)
			if got := errkind.Is(err, errkind.Unavailable); got != tc.outage {
				t.Fatalf("translate(%v) = %v: unavailable %v, want %v", tc.err, err, got, tc.outage)
			}
			if got := errkind.Dependency(err); tc.outage != (got == graphstore.Dependency) {
				t.Fatalf("translate(%v): dependency %q", tc.err, got)
			}
			if !errors.Is(err, tc.err) {
				t.Fatalf("translate(%v) = %v lost the driver's error", tc.err, err)
			}
			if got := Unavailable(tc.err); errkind.Is(got, errkind.Unavailable) != tc.outage {
				t.Fatalf("Unavailable(%v) = %v", tc.err, got)
			}
		})
	}
	// A call the caller cancelled is not an outage, whatever the driver said.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := translate(ctx, conn); errkind.Is(err, errkind.Unavailable) || !errors.Is(err, context.Canceled) {
		t.Fatalf("translate under a cancelled context = %v", err)
	}
}

// A server that cannot be reached fails Ping at once, and a transaction once the
// driver's retries are spent, both as an outage of the graph store, with the errors
// the driver really returns.
func TestUnreachableServerIsAnOutage(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	_ = lis.Close() // nothing listens there now: connections are refused
	drv, err := neo4j.NewDriverWithContext("bolt://"+addr, neo4j.NoAuth(), func(c *neo4jconfig.Config) {
		c.MaxTransactionRetryTime = 100 * time.Millisecond
	})
	if err != nil {
		t.Fatal(err)
	}
	s := &store{driver: drv, cfg: config{batchRows: 10}}
	t.Cleanup(func() { _ = s.Close() })

	err = s.Ping(t.Context())
	if !errkind.Is(err, errkind.Unavailable) || errkind.Dependency(err) != graphstore.Dependency {
		t.Fatalf("Ping = %v, want an outage of the graph store", err)
	}
	if !neo4j.IsConnectivityError(errors.Unwrap(errors.Unwrap(err))) {
		t.Fatalf("Ping = %v: the driver's ConnectivityError is not in the chain", err)
	}
	err = s.write(t.Context(), "merging", func(tx neo4j.ManagedTransaction) error {
		_, err := run(t.Context(), tx, "RETURN 1", nil)
		return err
	})
	var limit *neo4j.TransactionExecutionLimit
	if !errors.As(err, &limit) || !errkind.Is(err, errkind.Unavailable) || errkind.Dependency(err) != graphstore.Dependency {
		t.Fatalf("write = %v, want the driver's TransactionExecutionLimit as an outage of the graph store", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Ping(t.Context()); !errors.Is(err, graphstore.ErrClosed) || errkind.Is(err, errkind.Unavailable) {
		t.Fatalf("Ping after Close = %v, want ErrClosed", err)
	}
}
