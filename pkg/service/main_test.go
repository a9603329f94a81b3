package service

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/graphrag/graphrag/pkg/telemetry/calltrace/calltracetest"
)

func TestMain(m *testing.M) {
	// Every server instruments itself from the otel globals: only TestHTTPServerIsInstrumented's
	// own server may record into its providers, whichever tests ran before it.
	calltracetest.Detach()
	goleak.VerifyTestMain(m)
}
