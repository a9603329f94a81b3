package milvusstore

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/graphrag/graphrag/pkg/errkind"
	"github.com/graphrag/graphrag/pkg/vectorstore"
)

// The errors the gRPC client and Milvus answer for a server that cannot serve now are
// outages of the vector store; an error caused by the request is not.
func TestUnavailableClassifies(t *testing.T) {
	tests := []struct {
		name   string
		st     *commonpb.Status
		err    error
		outage bool
	}{
		{"grpc unavailable", nil, status.Error(codes.Unavailable, "connection error: desc = \"transport: Error while dialing: dial tcp 127.0.0.1:19530: connect: connection refused\""), true},
		{"grpc deadline not the caller's", nil, status.Error(codes.DeadlineExceeded, "context deadline exceeded"), true},
		{"service not ready", &commonpb.Status{Code: codeServiceNotReady, Reason: "service not ready"}, nil, true},
		{"service unavailable", &commonpb.Status{Code: codeServiceUnavailable, Reason: "service unavailable"}, nil, true},
		{"legacy not ready", &commonpb.Status{ErrorCode: commonpb.ErrorCode_NotReadyServe}, nil, true}, //nolint:staticcheck // SA1019: the legacy code alone (older servers)
		{"collection not found", notFound(), nil, false},
		{"grpc invalid argument", nil, status.Error(codes.InvalidArgument, "bad"), false},
		{"grpc internal", nil, status.Error(codes.Internal, "bad"), false},
		{"other server error", &commonpb.Status{Code: 1100, Reason: "bad"}, nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := check(context.Background(), "doing", tc.st, tc.err)
			if got := errkind.Is(err, errkind.Unavailable); got != tc.outage {
				t.Fatalf("check = %v: unavailable %v, want %v", err, got, tc.outage)
			}
			if got := errkind.Dependency(err); tc.outage != (got == vectorstore.Dependency) {
				t.Fatalf("check = %v: dependency %q", err, got)
			}
		})
	}
	// The caller's own deadline stays the caller's: not an outage.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := check(ctx, "doing", nil, status.Error(codes.Unavailable, "x")); errkind.Is(err, errkind.Unavailable) || !errors.Is(err, context.Canceled) {
		t.Fatalf("check under a cancelled context = %v", err)
	}
	if err := check(context.Background(), "doing", nil, status.Error(codes.DeadlineExceeded, "x")); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a server's deadline no longer matches context.DeadlineExceeded: %v", err)
	}
}

// A server that goes away makes every call an outage of the vector store, with the
// error the gRPC client really returns; when it is back on its address, calls succeed
// again without reopening the store.
func TestServerGoneIsAnOutage(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	serve := func(lis net.Listener) func() {
		srv := grpc.NewServer()
		milvuspb.RegisterMilvusServiceServer(srv, newFake(4, false))
		done := make(chan struct{})
		go func() { defer close(done); _ = srv.Serve(lis) }()
		return func() { srv.Stop(); <-done }
	}
	stop := serve(lis)
	s, err := Open(t.Context(), addr)
	if err != nil {
		stop()
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	stop()

	_, err = s.Search(t.Context(), "c", []float32{1, 0, 0, 0}, 3, vectorstore.Filter{})
	if !errkind.Is(err, errkind.Unavailable) || errkind.Dependency(err) != vectorstore.Dependency {
		t.Fatalf("Search on a stopped server = %v, want an outage of the vector store", err)
	}
	if err := s.Ping(t.Context()); !errkind.Is(err, errkind.Unavailable) {
		t.Fatalf("Ping on a stopped server = %v, want an outage", err)
	}

	lis, err = net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("the address of the stopped server was taken meanwhile: %v", err)
	}
	stop = serve(lis)
	t.Cleanup(stop)
	deadline := time.Now().Add(time.Minute)
	for {
		if err = s.Ping(t.Context()); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Ping after the server came back: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
