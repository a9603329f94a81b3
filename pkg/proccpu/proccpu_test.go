package proccpu

import (
	"runtime"
	"testing"
)

// Burning CPU makes Used grow (on unix, where it is measured).
func TestUsedGrows(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" || runtime.GOOS == "js" || runtime.GOOS == "wasip1" {
		t.Skip("not measured on this platform")
	}
	before := Used()
	x := 0
	for i := range 200_000_000 {
		x ^= i * i
	}
	if Used() <= before {
		t.Errorf("CPU time did not grow after busy work (%d)", x)
	}
}
