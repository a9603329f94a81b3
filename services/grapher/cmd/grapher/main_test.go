package main

import (
	"testing"

	"github.com/graphrag/graphrag/pkg/service/servicetest"
)

// The grapher reads -config (servicetest.SettingsFile): a value of its own component and a
// common one checked as flags are, a key of a component it does not run skipped, a key no
// binary knows refused. Nothing starts.
func TestSettingsFile(t *testing.T) {
	servicetest.SettingsFile(t, run, "detect-max-changes", "0", "must be at least 1, got 0")
}
