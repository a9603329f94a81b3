//go:build !unix

package embedded

import "time"

// processCPU is not measured here: the metrics that use it read 0.
func processCPU() time.Duration { return 0 }
