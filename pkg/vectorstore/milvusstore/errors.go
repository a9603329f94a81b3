package milvusstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/graphrag/graphrag/pkg/errkind"
	"github.com/graphrag/graphrag/pkg/vectorstore"
)

// Milvus error codes (the server's merr package) this driver branches on.
const (
	codeServiceNotReady     = 1
	codeServiceUnavailable  = 2
	codeCollectionNotFound  = 100
	codeCollectionNotLoaded = 101
	codeNotFullyLoaded      = 103
)

// ServerError is an error status returned by Milvus. errors.Is maps it to
// the vectorstore sentinels: a missing collection is vectorstore.ErrNotFound.
type ServerError struct {
	// Code is Milvus' error code (merr), 0 on old servers.
	Code int32
	// ErrorCode is the legacy error code.
	ErrorCode commonpb.ErrorCode //nolint:staticcheck // SA1019: the legacy code, still the only one older Milvus servers set
	// Reason is the server's message.
	Reason string
}

func (e *ServerError) Error() string {
	return fmt.Sprintf("milvus error %d (%s): %s", e.Code, e.ErrorCode, e.Reason)
}

// Is reports whether the server error means target.
func (e *ServerError) Is(target error) bool {
	switch target {
	case vectorstore.ErrNotFound:
		return e.notFound()
	}
	return false
}

// ErrorKind is errkind.NotFound when the error means vectorstore.ErrNotFound.
func (e *ServerError) ErrorKind() errkind.Kind {
	if e.notFound() {
		return errkind.NotFound
	}
	return errkind.Unknown
}

// notReady: the server answers that it cannot serve yet or now (starting, a
// coordinator being activated, a component down behind the proxy).
func (e *ServerError) notReady() bool {
	return e.Code == codeServiceNotReady || e.Code == codeServiceUnavailable ||
		e.ErrorCode == commonpb.ErrorCode_NotReadyServe || e.ErrorCode == commonpb.ErrorCode_NotReadyCoordActivating //nolint:staticcheck // SA1019: the legacy code, still the only one older Milvus servers set
}

func (e *ServerError) notFound() bool {
	return e.Code == codeCollectionNotFound || e.ErrorCode == commonpb.ErrorCode_CollectionNotExists
}

func (e *ServerError) notLoaded() bool {
	return e.Code == codeCollectionNotLoaded || e.Code == codeNotFullyLoaded
}

// statusError turns a response status into an error (nil on success).
func statusError(st *commonpb.Status) error {
	if st == nil || (st.GetErrorCode() == commonpb.ErrorCode_Success && st.GetCode() == 0) { //nolint:staticcheck // SA1019: the legacy code, still the only one older Milvus servers set
		return nil
	}
	return &ServerError{Code: st.GetCode(), ErrorCode: st.GetErrorCode(), Reason: st.GetReason()} //nolint:staticcheck // SA1019: the legacy code, still the only one older Milvus servers set
}

// check combines a transport error and a response status into one error
// saying what was being done. A transport failure caused by ctx returns ctx's
// error (so errors.Is(err, context.Canceled) holds); gRPC's own status error
// does not wrap it. A server that cannot serve now is an outage (Unavailable).
func check(ctx context.Context, what string, st *commonpb.Status, err error) error {
	if err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return fmt.Errorf("milvusstore: %s: %w", what, cerr)
		}
		if s, ok := status.FromError(err); ok && s.Code() == codes.Canceled {
			return fmt.Errorf("milvusstore: %s: %w (%v)", what, context.Canceled, err) //nolint:errorlint // ctx's error is the one to match; the gRPC status is detail
		}
		return fmt.Errorf("milvusstore: %s: %w", what, Unavailable(err))
	}
	if err := statusError(st); err != nil {
		return fmt.Errorf("milvusstore: %s: %w", what, Unavailable(err))
	}
	return nil
}

// Unavailable returns err as the failure of a vector store that is down
// (errkind.Down(vectorstore.Dependency, err)) when it means the server cannot serve
// now, and err unchanged otherwise:
//   - a gRPC status Unavailable: no connection (refused, reset, the server gone,
//     DNS failing), which the gRPC client reports for every call until it reconnects;
//   - a gRPC status DeadlineExceeded that the caller's context did not cause (check
//     returns the context's error for that): a deadline of the connection or a
//     proxy's, missed by a server that did not answer in time. It still matches
//     context.DeadlineExceeded;
//   - a ServerError whose code says the service is not ready or unavailable.
//
// Tests give it the client's error types to make a store's outage.
func Unavailable(err error) error {
	if err == nil {
		return nil
	}
	if s, ok := status.FromError(err); ok {
		switch s.Code() {
		case codes.Unavailable:
			return errkind.Down(vectorstore.Dependency, err)
		case codes.DeadlineExceeded:
			return errkind.Down(vectorstore.Dependency, fmt.Errorf("%w (%v)", context.DeadlineExceeded, err)) //nolint:errorlint // ctx's error is the one to match; the gRPC status is detail
		}
	}
	var se *ServerError
	if errors.As(err, &se) && se.notReady() {
		return errkind.Down(vectorstore.Dependency, err)
	}
	return err
}

func isNotLoaded(err error) bool {
	var se *ServerError
	return errors.As(err, &se) && se.notLoaded()
}
