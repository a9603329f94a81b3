//go:build unix

package main

import (
	"syscall"
	"time"
)

// processCPU is the CPU time used by the process so far (user + system, all
// threads), comparable with Python's time.process_time.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
