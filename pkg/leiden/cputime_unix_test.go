//go:build unix

package leiden_test

import (
	"syscall"
	"time"
)

// processCPU is the CPU time used by the process so far (user + system, all
// threads, so the garbage collector's work counts). On a shared machine it
// varies less with the load of other processes than wall time does.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
