//go:build tools

// Package modpin pins module versions that no package imports directly, so that
// `go mod tidy` keeps them. It is never built (the tools tag is never set).
//
// Why: the Milvus protobuf stubs require an old google.golang.org/genproto whose
// googleapis/rpc packages now live in their own modules; with that old version selected,
// grpc's imports become ambiguous. Requiring a recent genproto (which no longer holds
// those packages) resolves them to the split modules.
package modpin

import _ "google.golang.org/genproto/googleapis/type/date"
