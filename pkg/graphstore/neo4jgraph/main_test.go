package neo4jgraph

import (
	"testing"

	"go.uber.org/goleak"
)

// The driver runs connection-pool goroutines; every test must leave none behind.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
